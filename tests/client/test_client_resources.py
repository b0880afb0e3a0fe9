"""``mindbank.client`` over a bank's documents, directives, files, webhooks, operations admin, profile and config,
and the operator endpoints, against a live server; the async client sends the same requests."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from mindbank.client import AsyncClient, Client, MindBankHTTPError
from mindbank.config import Settings
from mindbank.service.facade import MindBank


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, webhook_allow_private_targets=True)


def test_documents_files_and_directives(server: str, mindbank: MindBank, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nDana ships the release on Thursday.\n")
    with Client(server) as c:
        c.retain("b", "Alice: I started training for the Berlin marathon.", document_id="d1", tags=["user:alice"])
        uploaded = c.retain_files("b", [notes, ("page.html", b"<p>Carol moved to Lisbon.</p>")],
                                  files_metadata=[{"tags": ["notes"]}, {}])  # fmt: skip
        for op in uploaded.operation_ids:
            assert c.wait("b", op).status == "completed"
        docs = c.list_documents("b")
        assert docs.total == 3 and {d.id for d in docs.items} == {"d1", "notes.md", "page.html"}
        assert [d.id for d in c.list_documents("b", q="lisbon").items] == ["page.html"]
        assert c.get_document("b", "notes.md").tags == ["notes"]
        chunks = c.list_document_chunks("b", "d1")
        assert chunks.total == 1 and c.get_chunk(chunks.items[0].chunk_id).document_id == "d1"
        assert c.update_document("b", "d1", tags=["user:alice", "sport"]).success
        assert [e.kind for e in c.get_document_history("b", "d1").items] == ["retag", "retain"]
        assert c.wait("b", c.reprocess_document("b", "d1").operation_id).status == "completed"
        assert c.delete_document("b", "page.html").memory_units_deleted == 1
        with pytest.raises(MindBankHTTPError) as err:
            c.retain_files("b", [("photo.png", b"\x89PNG")])
        assert err.value.status_code == 415

        d = c.create_directive("b", "tone", "Be brief.", priority=2, tags=["user:alice"])
        assert c.list_directives("b", tags=["user:alice"]).items[0].id == d.id
        assert c.get_directive("b", d.id).priority == 2
        assert c.update_directive("b", d.id, is_active=False).is_active is False
        assert c.list_directives("b").total == 0 and c.delete_directive("b", d.id).success


def test_bank_profile_config_operations_webhooks_and_probes(server: str, mindbank: MindBank) -> None:
    with Client(server) as c:
        profile = c.update_bank_profile("b", name="B", mission="Keep the team's facts.", disposition={
            "skepticism": 4, "literalism": 3, "empathy": 2})  # fmt: skip
        assert profile.mission == "Keep the team's facts." and c.get_bank_profile("b").disposition["skepticism"] == 4
        c.update_bank_config("b", {"recall_max_tokens": 512})
        assert c.reset_bank_config("b").overrides == {}

        hook = c.create_webhook("b", "http://127.0.0.1:9/hook", event_types=["retain.completed"], secret="s")
        assert hook.secret == "********" and c.list_webhooks("b").total == 1
        assert c.update_webhook("b", hook.id, secret=None).secret is None
        assert c.update_webhook("b", hook.id, enabled=False).enabled is False
        assert c.list_webhook_deliveries("b", hook.id).items == []
        assert c.delete_webhook("b", hook.id).success

        schema = {"type": "object", "properties": {"x": {"type": "string"}}}
        c.retain("b", "Alice: I started training for the Berlin marathon.")
        failing = c.create_mental_model("b", "F", "What is Alice doing?", trigger={"response_schema": schema})
        assert c.wait("b", failing.operation_id).status == "failed"
        assert c.retry_operation("b", failing.operation_id).success
        assert c.wait("b", failing.operation_id).status == "failed"
        assert c.delete_operation("b", failing.operation_id).success

        assert c.health_live().status == "alive" and c.health_ready().migrations_applied is True
        assert "mindbank_http_requests_total" in c.metrics()
        assert c.list_llm_requests("b").total == 0 and c.llm_request_stats("b", period="30d").trunc == "day"

    async def run() -> None:
        async with AsyncClient(server) as ac:
            assert (await ac.get_bank_profile("b")).name == "B"
            assert "mindbank_" in await ac.metrics()

    asyncio.run(run())
