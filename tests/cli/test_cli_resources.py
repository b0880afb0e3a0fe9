"""The client commands over documents, directives, webhooks, bank profile and config reset, operation
administration, and the operator commands (health, metrics, llm-requests), against a live server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_cli import Cli

from mindbank.config import Settings
from mindbank.service.facade import MindBank


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, webhook_allow_private_targets=True)


@pytest.fixture
def cli(server: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(server, capsys)


def test_docs(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Dana ships the release on Thursday.")
    code, out, err = cli("docs", "upload", str(notes), "--tag", "work", "--wait")
    assert code == 0 and "1 of 1 files retained" in out, err
    assert cli("retain", "Alice: I started training for the Berlin marathon.", "--document-id", "d1")[0] == 0
    listed = cli.json("docs", "list")
    assert listed["total"] == 2 and {d["id"] for d in listed["items"]} == {"notes.txt", "d1"}
    code, out, _ = cli("docs", "list", "--q", "thursday")
    assert code == 0 and "notes.txt" in out and "d1" not in out
    code, out, _ = cli("docs", "get", "notes.txt")
    assert code == 0 and "Dana ships the release on Thursday." in out and "tags: work" in out
    assert cli.json("docs", "chunks", "d1")["total"] == 1
    code, out, _ = cli("docs", "tag", "d1", "--tag", "sport")
    assert code == 0 and "tagged: sport" in out
    assert [e["kind"] for e in cli.json("docs", "history", "d1")["items"]] == ["retag", "retain"]
    code, out, _ = cli("docs", "reprocess", "d1", "--wait")
    assert code == 0 and "completed" in out
    code, out, _ = cli("docs", "delete", "d1")
    assert code == 0 and "1 associated memory units deleted" in out
    assert cli("docs", "upload", str(tmp_path / "missing.txt"))[0] == 2
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG")
    code, _, err = cli("docs", "upload", str(photo))
    assert code == 1 and "image/png" in err and "HTTP 415" in err


def test_directives(cli: Cli) -> None:
    created = cli.json("directives", "add", "--name", "tone", "--content", "Be brief.", "--priority", "2")
    assert created["priority"] == 2 and created["is_active"] is True
    code, out, _ = cli("directives", "list")
    assert code == 0 and "tone" in out and "(global)" in out
    code, out, _ = cli("directives", "get", created["id"])
    assert code == 0 and "Be brief." in out
    assert cli.json("directives", "update", created["id"], "--inactive")["is_active"] is False
    assert cli.json("directives", "list")["total"] == 0
    assert cli("directives", "delete", created["id"])[0] == 0
    assert cli("directives", "get", created["id"])[0] == 1


def test_webhooks(cli: Cli, mindbank: MindBank) -> None:
    hook = cli.json("webhooks", "add", "http://127.0.0.1:9/hook", "--event", "retain.completed", "--secret", "s")
    assert hook["secret"] == "********" and hook["event_types"] == ["retain.completed"]
    assert cli("webhooks", "list")[0] == 0
    assert cli.json("webhooks", "list")["items"][0]["url"] == "http://127.0.0.1:9/hook"
    assert cli.json("webhooks", "update", hook["id"], "--disable")["enabled"] is False
    assert cli.json("webhooks", "deliveries", hook["id"])["items"] == []
    assert cli("webhooks", "delete", hook["id"])[0] == 0
    code, _, err = cli("webhooks", "add", "ftp://example.com/x")
    assert code == 1 and "url" in err and "HTTP 422" in err


def test_profile(cli: Cli) -> None:
    code, out, _ = cli("profile", "--name", "Team", "--mission", "Remember the team's decisions.")
    assert code == 0 and "bank b: Team" in out and "Remember the team's decisions." in out
    assert cli.json("profile")["mission"] == "Remember the team's decisions."
    assert cli("config", "--set", "recall_max_tokens=512")[0] == 0
    assert cli.json("config", "--reset")["overrides"] == {}


def test_ops_retry_and_delete(cli: Cli, mindbank: MindBank) -> None:
    assert cli("retain", "Alice: I started training for the Berlin marathon.")[0] == 0
    schema = '{"response_schema": {"type": "object", "properties": {"x": {"type": "string"}}}}'
    code, _, _ = cli("mm", "create", "--name", "F", "--query", "What is Alice doing?", "--id", "f", "--trigger",
                     schema, "--wait")  # fmt: skip
    assert code == 1  # the extractive engine cannot fill a response_schema: the refresh fails
    op_id = cli.json("ops", "list", "--status", "failed")["operations"][0]["id"]
    code, out, _ = cli("ops", "retry", op_id)
    assert code == 0 and "queued for retry" in out
    assert mindbank.wait_for("b", op_id, timeout=30).status == "failed"
    code, out, _ = cli("ops", "delete", op_id)
    assert code == 0 and "deleted" in out
    assert cli("ops", "get", op_id)[0] == 1


def test_health(cli: Cli) -> None:
    code, out, _ = cli("health", bank=None)
    assert code == 0 and "live: alive" in out and "ready: ready" in out and "1 active" in out


def test_metrics(cli: Cli) -> None:
    code, out, _ = cli("metrics", bank=None)
    assert code == 0 and "mindbank_http_requests_total" in out and "mindbank_queue_depth" in out


def test_llm_requests(cli: Cli) -> None:
    assert cli("retain", "Bob bakes bread.")[0] == 0
    code, out, _ = cli("llm-requests")
    assert code == 0 and "no traced calls" in out
    assert cli.json("llm-requests", "--stats", "7d")["trunc"] == "day"
