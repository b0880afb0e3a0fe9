"""``mindbank bank ...``: export a bank from one server and import it into another (the migration path), clone,
templates, and the exit codes of bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cli import Cli

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank


@pytest.fixture
def cli(server: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(server, capsys)


def test_bank_export_from_one_server_and_import_into_another(
    cli: Cli, tmp_path: Path, embedder: MiniLMEmbedder, live: Callable[..., object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("retain", "Alice: I started training for the Berlin marathon.", "--tag", "user:alice")[0] == 0
    code, _, err = cli("mm", "create", "--name", "Alice", "--query", "What is Alice training for?", "--id", "alice",
                       "--tag", "user:alice", "--wait")  # fmt: skip
    assert code == 0, err
    archive = tmp_path / "b.zip"
    code, out, err = cli("bank", "export", "--out", str(archive))
    assert code == 0 and archive.exists() and f"wrote {archive}" in out and "mental_models 1" in out, err

    other = MindBank.open(Settings(database_url=str(tmp_path / "other.db"), worker_poll_seconds=0.02),
                          embedder=embedder)  # fmt: skip
    try:
        with live(other) as url:  # type: ignore[operator]
            target = Cli(url, capsys)
            code, out, err = target("bank", "import", str(archive), "--wait", bank=None)  # the archive names bank b
            assert code == 0 and "completed" in out, err
            model = target.json("mm", "get", "alice")
            assert model["is_stale"] is False and "marathon" in model["content"]
            code, _, err = target("bank", "import", str(archive), "--wait", bank=None)
            assert code == 1 and "already exists" in err and "HTTP 409" in err
    finally:
        other.close()


def test_bank_clone_and_templates(cli: Cli, tmp_path: Path) -> None:
    assert cli("retain", "Bob: I bake sourdough bread.", "--tag", "user:bob")[0] == 0
    code, out, err = cli("bank", "clone", "copy", "--wait")
    assert code == 0 and "completed" in out, err
    assert cli.json("mm", "list", bank="copy")["total"] == 0
    template = tmp_path / "t.json"
    assert cli("mm", "create", "--name", "Bob", "--query", "What does Bob bake?", "--id", "bob", "--wait")[0] == 0
    code, _, err = cli("bank", "export-template", "--out", str(template))
    assert code == 0 and json.loads(template.read_text())["mental_models"][0]["id"] == "bob", err
    code, out, err = cli("bank", "import-template", str(template), "--dry-run", bank="fresh")
    assert code == 0 and "would apply" in out and "['bob']" in out, err
    result = cli.json("bank", "import-template", str(template), bank="fresh")
    assert result["mental_models_created"] == ["bob"] and result["dry_run"] is False


def test_bank_bad_input_exit_codes(cli: Cli, tmp_path: Path) -> None:
    assert cli("bank", "import", str(tmp_path / "missing.zip"))[0] == 2
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    code, _, err = cli("bank", "import", str(junk))
    assert code == 1 and "file: archive: not a ZIP file (HTTP 422)" in err
    assert cli("bank", "import", str(junk), bank=None)[0] == 2  # no bank, and no manifest to name one
    code, _, err = cli("bank", "export", "--observations")
    assert code == 2 and "--documents-only" in err
    code, _, err = cli("bank", "export", bank="ghost")
    assert code == 1 and "HTTP 404" in err


def test_bank_model_and_reembed(cli: Cli) -> None:
    assert cli("retain", "Ana keeps her boat at the marina.")[0] == 0
    code, out, err = cli("bank", "model")
    assert code == 0 and "bank: all-MiniLM-L6-v2-int8 (384 dimensions)" in out and "server: all-MiniLM" in out, err
    code, out, err = cli("bank", "reembed", "--wait")
    assert code == 0 and "completed" in out, err
    assert cli.json("bank", "reembed")["model"] == "all-MiniLM-L6-v2-int8"
    code, out, err = cli("bank", "reembed", bank="missing")
    assert code == 1 and "not found" in (out + err).lower()
