"""Names where the CLI takes ids: an exact id wins, a unique name resolves, an ambiguous name lists the candidates
(exit 2), an unknown one is an error (exit 1) — for mental models, knowledge-base nodes, documents and banks; and
``bank list``, with restores and clones named after their new id unless told."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import Cli

from mindbank.service.facade import MindBank


@pytest.fixture
def cli(server: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(server, capsys)


@pytest.fixture
def model(cli: Cli) -> str:
    """Bank ``b`` with one memory and the model ``alice``, named Alice, refreshed."""
    cli("retain", "Alice: I started training for the Berlin marathon.", "--tag", "user:alice")
    args = ("--name", "Alice", "--query", "What is Alice training for?", "--id", "alice", "--tag", "user:alice")
    assert cli.json("mm", "create", *args, "--wait")["status"] == "completed"
    return "alice"


def test_a_model_by_name(cli: Cli, model: str) -> None:
    assert cli.json("mm", "get", "Alice")["id"] == "alice"  # a unique name
    assert cli.json("mm", "get", "alice")["id"] == "alice"  # the id
    assert cli.json("mm", "get", "ALICE")["id"] == "alice"  # a name, ignoring case when nothing matches exactly
    assert cli("mm", "refresh", "Alice", "--wait")[0] == 0
    assert cli.json("mm", "history", "Alice")


def test_an_exact_id_wins_over_a_name(cli: Cli, model: str) -> None:
    code, _, err = cli("mm", "create", "--name", "alice", "--query", "Who is Alice?", "--id", "other", "--wait")
    assert code == 0, err
    assert cli.json("mm", "get", "alice")["name"] == "Alice"  # the id "alice", not the model named "alice"
    assert cli.json("mm", "get", "other")["name"] == "alice"


def test_an_ambiguous_name_lists_the_candidates(cli: Cli, model: str) -> None:
    for model_id in ("twin-1", "twin-2"):
        assert cli("mm", "create", "--name", "Twin", "--query", "Who?", "--id", model_id, "--wait")[0] == 0
    code, out, err = cli("mm", "get", "Twin")
    assert code == 2 and out == ""
    assert "2 mental models are named 'Twin': twin-1 (Twin), twin-2 (Twin); pass one of their ids" in err
    assert cli("mm", "delete", "Twin")[0] == 2
    assert cli.json("mm", "get", "twin-1")["name"] == "Twin"  # nothing was deleted


def test_an_unknown_name_is_an_error(cli: Cli, model: str) -> None:
    code, _, err = cli("mm", "get", "Nobody")
    assert code == 1 and "error: no mental model with the id or name 'Nobody' in bank b" in err
    code, _, err = cli("kb", "delete", "Nowhere")
    assert code == 1 and "no node with the id or name 'Nowhere'" in err
    code, _, err = cli("docs", "get", "nothing.md")
    assert code == 1 and "no document with the id or name 'nothing.md'" in err


def test_pages_folders_and_documents_by_name(cli: Cli, model: str, tmp_path: Path) -> None:
    folder = cli.json("kb", "mkdir", "People")
    assert cli("kb", "page", "--name", "Runner", "--query", "Who runs?", "--parent", folder["id"], "--wait")[0] == 0
    code, _, err = cli("kb", "show", "Runner")
    assert code == 0, err
    assert cli("kb", "update", "Runner", "--name", "Runners")[0] == 0
    assert [c["name"] for c in cli.json("kb", "tree")["roots"][0]["children"]] == ["Runners"]
    # --parent takes a folder's name too: a new folder, a new page and a move, all by name
    assert cli.json("kb", "mkdir", "Friends", "--parent", "People")["parent_id"] == folder["id"]
    assert cli("kb", "page", "--name", "Walker", "--query", "Who walks?", "--parent", "Friends")[0] == 0
    assert cli("kb", "update", "Runners", "--parent", "Friends")[0] == 0
    people = cli.json("kb", "tree")["roots"][0]
    assert [c["name"] for c in people["children"]] == ["Friends"]
    assert sorted(c["name"] for c in people["children"][0]["children"]) == ["Runners", "Walker"]
    code, _, err = cli("kb", "mkdir", "Lost", "--parent", "Runners")  # a page is not a folder
    assert code == 1 and "no folder with the id or name 'Runners'" in err
    note = tmp_path / "plan.md"
    note.write_text("Alice: my plan is to run the Tokyo marathon.\n")
    assert cli("docs", "upload", str(note), "--wait")[0] == 0
    document = cli.json("docs", "get", "plan.md")
    assert document["document_metadata"]["filename"] == "plan.md"
    assert cli.json("docs", "get", document["id"])["id"] == document["id"]


def test_bank_list_and_banks_by_name(cli: Cli, model: str, mindbank: MindBank) -> None:
    mindbank.update_bank_profile("b", name="Running club")
    code, out, _ = cli("bank", "list")
    assert code == 0 and "Running club" in out and " b " in out
    assert [b["bank_id"] for b in cli.json("bank", "list")["banks"]] == ["b"]
    assert cli.json("mm", "get", "alice", bank="Running club")["id"] == "alice"  # -b takes the bank's name
    # a clone is named after its own id, unless told
    assert cli("bank", "clone", "copy", "--wait")[0] == 0
    assert cli("bank", "clone", "named", "--name", "Club copy", "--wait")[0] == 0
    names = {b["bank_id"]: b["name"] for b in cli.json("bank", "list")["banks"]}
    assert names == {"b": "Running club", "copy": "copy", "named": "Club copy"}
    code, _, err = cli("bank", "clone", "later", "--name", "x")
    assert code == 2 and "--name needs --wait" in err
