"""The client commands of ``mindbank`` (in-process ``main([...])``) against a live server, one test per command.

``mindbank mcp`` is exercised as a real subprocess by tests/mcp/test_mcp_stdio.py; serve/worker/import/demo by
tests/e2e.
"""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from mindbank.cli import build_parser, main
from mindbank.server import create_app
from mindbank.service.facade import MindBank


class Cli:
    """Runs ``mindbank ...`` against one server and returns (exit code, stdout, stderr)."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.url = url
        self.capsys = capsys

    def __call__(self, *argv: str, bank: str | None = "b") -> tuple[int, str, str]:
        self.capsys.readouterr()
        args = [*argv, "--url", self.url] + (["-b", bank] if bank else [])
        code = main(args)
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str, bank: str | None = "b") -> Any:
        code, out, err = self(*argv, "--json", bank=bank)
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(server: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(server, capsys)


@pytest.fixture
def model(cli: Cli) -> str:
    """Bank ``b`` with two memories and a refreshed mental model ``alice``."""
    assert cli("retain", "Alice: I started training for the Berlin marathon.", "--tag", "user:alice")[0] == 0
    assert cli("retain", "Bob: I bake sourdough bread.", "--tag", "user:bob")[0] == 0
    code, _, err = cli("mm", "create", "--name", "Alice", "--query", "What is Alice training for?", "--id", "alice",
                       "--tag", "user:alice", "--wait")  # fmt: skip
    assert code == 0, err
    return "alice"


def test_retain(cli: Cli, mindbank: MindBank, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli("retain", "Alice: I like green tea.", "--tag", "user:alice", "--context", "chat",
                       "--timestamp", "2026-03-01T10:00:00Z", "--metadata", "turn=1", "--document-id", "d1")  # fmt: skip
    assert code == 0 and "retained 1 item(s) in bank b" in out, _
    monkeypatch.setattr("sys.stdin", io.StringIO("Bob: I read poetry at night.\n"))
    result = cli.json("retain", "-", "--async", "--wait")
    assert result["status"] == "completed" and result["operation_type"] == "batch_retain"
    memories, total = mindbank.list_memories("b")
    assert total == 2 and any(m.metadata == {"turn": "1"} and m.context == "chat" for m in memories)
    assert cli("retain", "   ")[0] == 2


def test_recall(cli: Cli, model: str) -> None:
    code, out, _ = cli("recall", "What is Alice training for?")
    assert code == 0 and "marathon" in out and "user:alice" in out
    data = cli.json("recall", "bread", "--tag", "user:bob", "--max-tokens", "100")
    assert [r["text"] for r in data["results"]] == ["Bob: I bake sourdough bread."]
    assert "no memories found" in cli("recall", "anything", "--tag", "nobody", "--tags-match", "all_strict")[1]


def test_reflect(cli: Cli, model: str, mindbank: MindBank) -> None:
    code, out, err = cli("reflect", "What is Alice training for?", "--facts")
    if "/v1/default/banks/{bank_id}/reflect" in create_app(mindbank).openapi()["paths"]:
        assert code == 0 and "marathon" in out, err
    else:  # the server has no reflect endpoint yet: the server's answer, exit 1
        assert code == 1 and "error:" in err and ("404" in err or "405" in err)


def test_mm_list(cli: Cli, model: str) -> None:
    code, out, _ = cli("mm", "list")
    assert code == 0 and "alice" in out and "Alice" in out and "1 of 1" in out
    data = cli.json("mm", "list", "--detail", "content", "--tag", "user:alice")
    assert data["total"] == 1 and "marathon" in data["items"][0]["content"]
    assert "no mental models" in cli("mm", "list", bank="empty")[1]


def test_mm_get(cli: Cli, model: str) -> None:
    code, out, _ = cli("mm", "get", "alice")
    assert code == 0 and "Alice" in out and "fresh" in out and "marathon" in out and "[mem:" in out
    assert "refresh: ok" in out and "spend today: 0 tokens (0 in, 0 out), 0 LLM calls" in out  # extractive: free
    assert cli.json("mm", "get", "alice")["refresh_status"]["spend"]["total"]["refreshes"] == 1
    assert cli.json("mm", "get", "alice", "--detail", "metadata")["content"] is None


def test_mm_create(cli: Cli, mindbank: MindBank) -> None:
    code, out, _ = cli("mm", "create", "--name", "Team", "--query", "What is the team doing?", "--id", "team",
                       "--tag", "team", "--tags-match", "any", "--mode", "delta", "--refresh-cron", "0 3 * * *",
                       "--trigger", '{"keep_trace": true}', "--max-tokens", "512")  # fmt: skip
    assert code == 0 and "created mental model team" in out and "operation" in out
    assert "scope matches no memories" in out  # the warning for a tagged scope with nothing in it
    trigger = mindbank.get_mental_model("b", "team").trigger
    assert (trigger["tags_match"], trigger["mode"], trigger["refresh_cron"], trigger["keep_trace"]) == (
        "any", "delta", "0 3 * * *", True,
    )  # fmt: skip
    created = cli.json("mm", "create", "--name", "Other", "--query", "What else?")
    assert created["mental_model_id"].startswith("mm-") and created["operation_id"]
    code, _, err = cli(
        "mm", "create", "--name", "X", "--query", "Q", "--tags-match", "any", "--trigger", '{"tags_match": "all"}'
    )
    assert code == 2 and "tags_match" in err
    code, _, err = cli("mm", "create", "--name", "X", "--query", "Q", "--trigger", "{nope")
    assert code == 2 and "not valid JSON" in err
    code, _, err = cli("mm", "create", "--name", "X", "--query", "Q", "--refresh-cron", "often")
    assert code == 1 and "cron" in err and "HTTP 422" in err


def test_mm_update(cli: Cli, model: str, mindbank: MindBank) -> None:
    code, out, _ = cli("mm", "update", "alice", "--name", "Alice (runner)", "--mode", "delta", "--max-tokens", "1024")
    assert code == 0 and "updated mental model alice" in out
    updated = mindbank.get_mental_model("b", "alice")
    assert (updated.name, updated.trigger["mode"], updated.max_tokens) == ("Alice (runner)", "delta", 1024)
    data = cli.json("mm", "update", "alice", "--no-tags")
    assert data["tags"] == [] and data["name"] == "Alice (runner)"


def test_mm_refresh(cli: Cli, model: str) -> None:
    cli("retain", "Alice: I finished the marathon in 3:58.", "--tag", "user:alice")
    code, out, _ = cli("mm", "refresh", "alice")
    assert code == 0 and "refresh of alice queued: operation" in out
    op_id = out.strip().rsplit(" ", 1)[-1]
    assert cli.json("ops", "wait", op_id)["status"] == "completed"
    code, out, _ = cli("mm", "refresh", "alice", "--full", "--wait")
    assert code == 0 and "completed" in out
    assert "3:58" in cli.json("mm", "get", "alice")["content"]


def test_mm_dry_run(cli: Cli, model: str) -> None:
    cli("retain", "Alice: my next race is the Boston marathon.", "--tag", "user:alice")
    code, out, _ = cli("mm", "dry-run", "alice")
    assert (
        code == 0
        and "would write: the content changes   (outcome content_written)" in out
        and "+" in out
        and "Boston" in out
    )
    data = cli.json("mm", "dry-run", "alice")
    assert data["would_persist"] is True and "Boston" in data["diff"]
    assert "Boston" not in cli.json("mm", "get", "alice")["content"]  # a dry run writes nothing


def test_mm_history(cli: Cli, model: str) -> None:
    first = cli.json("mm", "history", "alice")  # the first refresh recorded the empty document it replaced
    assert [e["previous_content"] for e in first] == [""]
    cli("retain", "Alice: I finished the marathon in 3:58.", "--tag", "user:alice")
    assert cli("mm", "refresh", "alice", "--wait")[0] == 0
    code, out, _ = cli("mm", "history", "alice")
    assert code == 0 and "version" in out
    entries = cli.json("mm", "history", "alice")
    assert entries and "marathon" in entries[0]["previous_content"]


def test_mm_diff(cli: Cli, model: str) -> None:
    cli("retain", "Alice: My marathon training is going well: I ran 30 km in 3:58.", "--tag", "user:alice")
    cli("mm", "refresh", "alice", "--wait")
    code, out, _ = cli("mm", "diff", "alice")
    assert code == 0 and "--- history/" in out and "+++ current" in out and "+" in out and "3:58" in out
    cli("retain", "Alice: I will run Boston next spring.", "--tag", "user:alice")
    cli("mm", "refresh", "alice", "--wait")
    entries = cli.json("mm", "history", "alice")
    newest, older = entries[0]["id"], entries[1]["id"]
    between = cli.json("mm", "diff", "alice", "--from", str(older), "--to", str(newest))
    assert (
        between["from"].startswith(f"history/{older}") and "3:58" in between["diff"] and "Boston" not in between["diff"]
    )
    code, _, err = cli("mm", "diff", "alice", "--from", "99999")
    assert code == 2 and "99999" in err


def test_mm_revert(cli: Cli, model: str) -> None:
    cli("retain", "Alice: I finished the marathon in 3:58.", "--tag", "user:alice")
    cli("mm", "refresh", "alice", "--wait")
    history_id = cli.json("mm", "history", "alice")[0]["id"]
    code, out, _ = cli("mm", "revert", "alice", str(history_id))
    assert code == 0 and f"reverted to history entry {history_id}" in out
    assert "3:58" not in cli.json("mm", "get", "alice")["content"]
    code, _, err = cli("mm", "revert", "alice", "99999")
    assert code == 1 and "not found" in err and "HTTP 404" in err


def test_mm_clear(cli: Cli, model: str) -> None:
    code, out, _ = cli("mm", "clear", "alice")
    assert code == 0 and "cleared" in out
    assert cli.json("mm", "get", "alice")["content"] == ""


def test_mm_delete(cli: Cli, model: str) -> None:
    code, out, _ = cli("mm", "delete", "alice")
    assert code == 0 and "deleted" in out
    code, _, err = cli("mm", "get", "alice")
    assert code == 1 and "error: no mental model with the id or name 'alice' in bank b" in err


def test_config(cli: Cli, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli("config")
    assert code == 0 and "recall_max_tokens" in out and "server" in out
    data = cli.json("config", "--set", "recall_max_tokens=1024", "--set", "recall_include_chunks=false")
    assert data["overrides"] == {"recall_max_tokens": 1024, "recall_include_chunks": False}
    assert cli.json("config", "--unset", "recall_include_chunks")["overrides"] == {"recall_max_tokens": 1024}
    code, _, err = cli("config", "--set", "nonsense=1")
    assert code == 1 and "nonsense" in err
    monkeypatch.setenv("MINDBANK_API_KEY", "hidden-key")
    code, out, _ = cli("config", "--local", bank=None)
    assert code == 0 and "MINDBANK_PORT" in out and "hidden-key" not in out and "(set)" in out


def test_ops(cli: Cli, model: str) -> None:
    code, out, _ = cli("ops", "list")
    assert code == 0 and "refresh_mental_model" in out and "completed" in out
    ops = cli.json("ops", "list", "--type", "refresh_mental_model", "--status", "completed")
    op_id = ops["operations"][0]["id"]
    code, out, _ = cli("ops", "get", op_id)
    assert code == 0 and "completed" in out and "mental model: alice" in out
    assert "outcome: content_written" in out and "spend: 0 tokens" in out
    code, out, _ = cli("ops", "wait", op_id)
    assert code == 0 and f"operation {op_id}: completed" in out
    code, _, err = cli("ops", "cancel", op_id)
    assert code == 1 and "only pending operations can be cancelled" in err and "HTTP 409" in err


def test_stats(cli: Cli, model: str) -> None:
    code, out, _ = cli("stats")
    assert code == 0 and "bank b: " in out and "refresh spend today" in out and "refresh spend total: 0 tokens" in out
    assert "failing models: 0 (bank breaker closed)" in out
    assert cli("config", "--set", "refresh_bank_daily_token_budget=5000")[0] == 0
    data = cli.json("stats")
    assert data["refresh_budget"]["bank_daily_tokens"] == 5000 and data["refresh_spend"]["total"]["refreshes"] == 1


def test_ops_cancel_pending(idle_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    cli = Cli(idle_server, capsys)
    op_id = cli.json("mm", "create", "--name", "M", "--query", "What?")["operation_id"]
    code, out, _ = cli("ops", "cancel", op_id)
    assert code == 0 and "cancelled" in out
    code, out, _ = cli("ops", "wait", op_id, "--timeout", "5")
    assert code == 1 and "cancelled" in out


def test_kb(cli: Cli, mindbank: MindBank, tmp_path: Any) -> None:
    assert cli("retain", "Alice: I started training for the Berlin marathon.", "--tag", "user:alice")[0] == 0
    code, out, _ = cli("kb", "tree")
    assert code == 0 and "(empty knowledge base)" in out
    folder = cli.json("kb", "mkdir", "People")
    code, out, _ = cli("kb", "mkdir", "Runners", "--parent", folder["id"])
    assert code == 0 and "created folder 'Runners'" in out
    code, out, err = cli("kb", "page", "--name", "Alice", "--query", "What is Alice training for?", "--parent",
                         folder["id"], "--tag", "user:alice", "--trigger", '{"fact_types": ["world"]}', "--wait")  # fmt: skip
    assert code == 0 and "created page" in out and "completed" in out, err
    page_node = next(n for n in mindbank.knowledge_tree("b").nodes if n.kind == "page")
    page_id, model_id = page_node.id, page_node.mental_model_id or ""
    code, out, _ = cli("kb", "tree")
    assert code == 0 and "People/" in out and "  Alice  (fresh, refreshed" in out
    code, out, _ = cli("kb", "show", page_id)
    assert code == 0 and out.startswith("---") and "Berlin marathon" in out
    code, out, _ = cli("kb", "search", "marathon")
    assert code == 0 and page_id in out and "1 match(es)" in out
    code, out, _ = cli("kb", "update", page_id, "--name", "Alice B", "--root", "--trigger", '{"mode": "full"}')
    assert code == 0 and "updated page 'Alice B'" in out and "in the root" in out
    assert mindbank.get_mental_model("b", model_id).trigger["mode"] == "full"
    code, _, err = cli("kb", "update", folder["id"], "--parent", page_id)
    assert code == 1 and "is a page" in err and "HTTP 422" in err
    code, out, _ = cli("kb", "export", "--out", str(tmp_path / "bundle"))
    assert code == 0 and "wrote 3 file(s)" in out
    assert "Berlin marathon" in (tmp_path / "bundle" / "alice-b.md").read_text()
    listed = cli.json("kb", "export")
    assert [f["path"] for f in listed["files"]] == ["index.md", "alice-b.md", "log.md"]
    code, out, _ = cli("kb", "delete", folder["id"])
    assert code == 0 and "2 folder(s), 0 page(s)" in out


def test_errors_exit_non_zero(cli: Cli, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINDBANK_BANK", raising=False)
    code, _, err = cli("mm", "list", bank=None)
    assert code == 2 and "MINDBANK_BANK" in err
    monkeypatch.setenv("MINDBANK_BANK", "b")
    assert cli("mm", "list", bank=None)[0] == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = Cli(f"http://127.0.0.1:{port}", capsys)("mm", "list")
    assert code == 1 and "cannot reach" in err


def test_keys(live: Any, tmp_path: Any, embedder: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from mindbank.config import Settings

    admin = "admin-key-for-cli"
    settings = Settings(database_url=str(tmp_path / "keys.db"), worker_poll_seconds=0.02, api_key=admin)
    mb = MindBank.open(settings, embedder=embedder)
    try:
        with live(mb, run_worker=False) as url:
            run = Cli(url, capsys)
            made = run.json("keys", "create", "team-*", "solo", "--name", "cli", "--api-key", admin, bank=None)
            assert made["banks"] == ["team-*", "solo"] and made["key"].startswith("mbk_") and not made["read_only"]
            code, out, _ = run("keys", "create", "team-*", "--read-only", "--api-key", admin, bank=None)
            assert code == 0 and "read-only" in out and "shown only once" in out
            code, out, _ = run("keys", "list", "--api-key", admin, bank=None)
            assert code == 0 and "cli" in out and "read-only" in out and made["key"] not in out
            code, out, _ = run("keys", "revoke", made["id"], "--api-key", admin, bank=None)
            assert code == 0 and f"revoked key {made['id']}" in out
            code, _, err = run("keys", "list", "--api-key", made["key"], bank=None)
            assert code == 1 and "401" in err  # the revoked key no longer authenticates
            code, _, err = run("keys", "list", bank=None)  # no key at all
            assert code == 1 and "401" in err
    finally:
        mb.close()


def test_every_command_has_a_test() -> None:
    """A guard: each client command and the subcommands of its groups are covered by a test in tests/cli."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    names = set(sub.choices) - {"serve", "worker", "import", "demo", "mcp"}  # type: ignore[arg-type]
    source = "".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_*.py")))
    for name in names:
        assert f"def test_{name.replace('-', '_')}" in source, name
    for group in ("mm", "ops", "docs", "directives", "webhooks", "kb", "observations", "memories"):
        parser = sub.choices[group]  # type: ignore[index]
        inner = next(a for a in parser._actions if a.dest == f"{group}_command")
        for name in inner.choices:
            assert f'"{group}", "{name}"' in source, f"{group} {name}"
