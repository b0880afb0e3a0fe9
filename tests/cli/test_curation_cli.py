"""``mindbank mm blocks|edit-block|add-block|remove-block|pin|unpin|draft|approve|reject`` against a live server
(docs/curation.md)."""

from __future__ import annotations

from cli.test_cli import Cli, cli, model  # noqa: F401  (the fixtures)

from mindbank.service.facade import MindBank


def test_mm_curation_commands(cli: Cli, model: str, mindbank: MindBank) -> None:  # noqa: F811
    view = cli.json("mm", "blocks", model)
    block = view["sections"][-1]["blocks"][0]["id"]
    code, out, _ = cli("mm", "blocks", model)
    assert code == 0 and block in out
    edited = cli.json("mm", "edit-block", model, block, "--text", "Alice trains with a club.")
    assert edited["fixed_block_ids"] == [block]
    code, out, _ = cli("mm", "blocks", model)
    assert "by admin" in out and "Alice trains with a club." in out
    added = cli.json("mm", "add-block", model, "--text", "Call her coach.", "--heading", "Notes")
    notes = next(s["id"] for s in added["sections"] if s["heading"] == "Notes")
    assert cli.json("mm", "pin", model, "--section", notes)["sections"][-1]["pinned"] is True
    code, out, _ = cli("mm", "pin", model, block)
    assert code == 0 and "pinned" in out
    assert cli.json("mm", "unpin", model, "--section", notes)["sections"][-1]["pinned"] is False
    removed = cli.json("mm", "remove-block", model, added["block_id"])
    assert added["block_id"] not in {b["id"] for s in removed["sections"] for b in s["blocks"]}
    code, _, err = cli("mm", "pin", model)
    assert code == 2 and "block id or --section" in err
    code, _, err = cli("mm", "edit-block", model, "nope", "--text", "x")
    assert code == 1 and "block_id" in err
    # review before publish
    assert cli("mm", "update", model, "--trigger", '{"review": true}')[0] == 0
    assert cli("retain", "Alice: I ran a half marathon in Porto.", "--tag", "user:alice")[0] == 0
    assert cli("mm", "refresh", model, "--wait")[0] == 0
    code, out, _ = cli("mm", "draft", model)
    assert code == 0 and "--- published" in out
    draft = cli.json("mm", "draft", model)
    code, out, _ = cli("mm", "reject", model, "--reason", "not yet")
    assert code == 0 and "rejected" in out
    code, _, err = cli("mm", "approve", model)
    assert code == 1 and "404" in err
    assert cli("mm", "refresh", model, "--wait")[0] == 0
    draft = cli.json("mm", "draft", model)
    approved = cli.json("mm", "approve", model, "--draft-id", draft["draft_id"])
    assert approved["content"] == draft["content"]
    code, out, _ = cli("mm", "history", model)
    assert "draft_rejected" in out and "edit" in out
