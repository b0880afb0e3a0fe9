"""A drop-in for the reference's users: the reference's own client (``hindsight-client`` 1.1.0) drives a live mindbank
through every method of issue 17 — documents, directives, bank config and profile, files, operations, webhooks,
monitoring and the LLM request log, plus the mental-model methods and the observation operations (history,
scopes, the clears). The client's generated pydantic models parse
every answer, so a response that is not the reference's shape fails here.

Left out on purpose: the bank-transfer methods (``export_bank``, ``import_bank``, ``clone_bank``,
``export_documents``: the bank-transfer branch tests them) and the knowledge-base methods (issue 16's tests)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mindbank.config import Settings
from mindbank.service.facade import MindBank

hindsight_client = pytest.importorskip("hindsight_client")
from hindsight_client_api import models  # noqa: E402
from hindsight_client_api.api.llm_traces_api import LLMTracesApi  # noqa: E402
from hindsight_client_api.exceptions import ApiException  # noqa: E402

T = TypeVar("T")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Webhooks to loopback allowed (the receiver below), fast retries."""
    return replace(settings, webhook_allow_private_targets=True, webhook_retry_backoff_seconds=0.05)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a low-level (async) API call the way the client's own sync methods do: on the thread's event loop."""
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop.run_until_complete(coro)


def wait(mb: MindBank, bank: str, operation_id: str, status: str = "completed") -> None:
    assert mb.wait_for(bank, operation_id, timeout=30).status == status


@pytest.fixture
def hs(server: str) -> Iterator[Any]:
    client = hindsight_client.Hindsight(base_url=server)
    yield client
    client.close()


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[bytes]]]:
    seen: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/hook", seen
    httpd.shutdown()
    httpd.server_close()


def test_documents_and_memories_by_document(hs: Any, mindbank: MindBank) -> None:
    hs.retain("b", "Alice: I started training for the Berlin marathon.", document_id="chat-1", tags=["user:alice"],
              context="chat", metadata={"channel": "dm"})  # fmt: skip
    hs.retain("b", "Quarterly report: revenue grew.", document_id="report-2024")
    docs = run(hs.documents.list_documents("b"))
    assert isinstance(docs, models.ListDocumentsResponse) and docs.total == 2
    assert {d.id for d in docs.items} == {"chat-1", "report-2024"}
    found = run(hs.documents.list_documents("b", q="report", tags_match="any", limit=10, offset=0))
    assert [d.id for d in found.items] == ["report-2024"] and found.items[0].matched_fields
    doc = run(hs.documents.get_document("b", "chat-1"))
    assert doc.original_text.startswith("Alice") and doc.memory_unit_count == 1 and doc.tags == ["user:alice"]
    chunks = run(hs.documents.list_document_chunks("b", "chat-1"))
    assert chunks.total == 1 and run(hs.documents.get_chunk(chunks.items[0].chunk_id)).document_id == "chat-1"
    listed = hs.list_memories("b", document_id="chat-1")
    assert listed.total == 1 and listed.items[0].document_id == "chat-1"
    run(hs.documents.update_document("b", "chat-1", models.UpdateDocumentRequest(tags=["user:alice", "run"])))
    history = run(hs.documents.get_document_history("b", "chat-1"))
    assert [e.kind for e in history.items] == ["retag", "retain"]
    reprocessed = run(hs.documents.reprocess_document("b", "chat-1"))
    wait(mindbank, "b", reprocessed.operation_id)
    deleted = run(hs.documents.delete_document("b", "report-2024"))
    assert deleted.success and deleted.memory_units_deleted == 1 and deleted.document_id == "report-2024"
    with pytest.raises(ApiException) as missing:
        run(hs.documents.get_document("b", "report-2024"))
    assert missing.value.status == 404


def test_directives_config_profile_and_files(hs: Any, mindbank: MindBank, tmp_path: Path) -> None:
    created = hs.create_directive("b", name="tone", content="Answer in one sentence.", priority=2, tags=["x"])
    assert isinstance(created, models.DirectiveResponse) and created.priority == 2 and created.tags == ["x"]
    listed = hs.list_directives("b")
    assert listed.total == 1 and listed.items[0].id == created.id
    assert hs.get_directive("b", created.id).content == "Answer in one sentence."
    updated = hs.update_directive("b", created.id, is_active=False, content="Be brief.")
    assert updated.is_active is False and updated.content == "Be brief." and updated.name == "tone"
    assert hs.list_directives("b").total == 0  # active only by default
    hs.delete_directive("b", created.id)
    with pytest.raises(ApiException):
        hs.get_directive("b", created.id)

    profile = hs.create_bank("b", name="B", reflect_mission="Keep the team's facts.", disposition_empathy=4)
    assert profile.mission == "Keep the team's facts." and profile.disposition.empathy == 4
    assert hs.set_mission("b", "Remember what matters.").mission == "Remember what matters."
    assert hs.set_reflect_mission("b", "Answer for the team.").mission == "Answer for the team."
    hs.update_bank_config("b", recall_max_tokens=512)
    assert hs.get_bank_config("b")["overrides"] == {"recall_max_tokens": 512}
    reset = hs.reset_bank_config("b")
    assert reset["overrides"] == {} and reset["config"]["recall_max_tokens"] == 2048

    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nDana ships the release on Thursday.\n")
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>Carol moved to Lisbon.</p></body></html>")
    files = hs.retain_files("b", [notes, page], context="uploads")
    assert isinstance(files, models.FileRetainResponse) and len(files.operation_ids) == 2
    for op in files.operation_ids:
        wait(mindbank, "b", op)
    assert hs.list_memories("b", document_id="page.html").items[0].text == "Carol moved to Lisbon."


def test_operations_webhooks_monitoring_and_llm_log(
    hs: Any, mindbank: MindBank, receiver: tuple[str, list[bytes]]
) -> None:
    url, seen = receiver
    hook = run(hs.webhooks.create_webhook("b", models.CreateWebhookRequest(
        url=url, secret="s", event_types=["retain.completed", "mental_model.refreshed"])))  # fmt: skip
    assert isinstance(hook, models.WebhookResponse) and hook.secret == "********"
    assert run(hs.webhooks.list_webhooks("b")).total == 1
    hs.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
    created = hs.create_mental_model("b", name="Alice", source_query="What is Alice doing?", tags=["user:alice"],
                                     id="alice")  # fmt: skip
    wait(mindbank, "b", created.operation_id)
    deliveries = None
    for _ in range(200):
        deliveries = run(hs.webhooks.list_webhook_deliveries("b", hook.id))
        if sum(d.status == "delivered" for d in deliveries.items) == 2:
            break
        asyncio.get_event_loop().run_until_complete(asyncio.sleep(0.05))
    assert deliveries is not None and {d.event_type for d in deliveries.items} == {
        "retain.completed",
        "mental_model.refreshed",
    }
    assert len(seen) == 2
    updated = run(hs.webhooks.update_webhook("b", hook.id, models.UpdateWebhookRequest(enabled=False)))
    assert updated.enabled is False
    run(hs.webhooks.delete_webhook("b", hook.id))

    schema = {"type": "object", "properties": {"race": {"type": "string"}}}
    failing = hs.create_mental_model("b", name="F", source_query="What is Alice doing?", tags=["user:alice"],
                                     trigger={"response_schema": schema})  # fmt: skip
    wait(mindbank, "b", failing.operation_id, "failed")
    retried = run(hs.operations.retry_operation("b", failing.operation_id))
    assert retried.success and retried.operation_id == failing.operation_id
    wait(mindbank, "b", failing.operation_id, "failed")
    removed = run(hs.operations.delete_operation("b", failing.operation_id))
    assert removed.success
    assert run(hs.operations.list_operations("b")).total >= 1

    live = run(hs.monitoring.get_liveness())
    assert live.status == "alive"
    assert run(hs.monitoring.get_readiness())["status"] == "ready"
    assert "mindbank_refreshes_total" in str(run(hs.monitoring.metrics_endpoint_metrics_get()))
    traces = LLMTracesApi(hs._api_client)  # the client has no accessor for this generated API
    log = run(traces.list_llm_requests("b", status="success", limit=10))
    assert isinstance(log, models.LLMRequestListResponse) and log.total == 0  # extractive engine: no LLM calls
    stats = run(traces.llm_request_stats("b", period="1d"))
    assert stats.trunc == "hour" and stats.buckets == []


def test_mental_model_methods(hs: Any, mindbank: MindBank) -> None:
    hs.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
    created = hs.create_mental_model("b", name="Alice", source_query="What is Alice doing?", tags=["user:alice"],
                                     id="alice", trigger={"mode": "delta"})  # fmt: skip
    wait(mindbank, "b", created.operation_id)
    assert hs.list_mental_models("b").total == 1 and "marathon" in hs.get_mental_model("b", "alice").content
    assert hs.update_mental_model("b", "alice", name="Alice (runner)").name == "Alice (runner)"
    hs.retain("b", "Alice: I finished the marathon in 3:58.", tags=["user:alice"])
    dry = hs.dry_run_refresh_mental_model("b", "alice")
    assert dry.effective_mode == "delta"
    wait(mindbank, "b", hs.refresh_mental_model("b", "alice").operation_id)
    assert "3:58" in hs.get_mental_model("b", "alice").content
    assert len(hs.get_mental_model_history("b", "alice")) >= 1
    assert hs.clear_mental_model("b", "alice").content == ""
    hs.delete_mental_model("b", "alice")
    assert hs.list_mental_models("b").total == 0


def test_observation_endpoints_through_the_reference_client(hs: Any, mindbank: MindBank) -> None:
    """The reference's generated API parses mindbank's answers to its observation operations: the history (an
    untyped list), the scopes (``ObservationScopesResponse``), and the clears (``ClearMemoryObservationsResponse``,
    ``DeleteResponse``)."""
    hs.retain("b", "Xavier: I live in Paris with my partner.", tags=["user:xavier"])
    deadline = time.monotonic() + 30
    while not mindbank.list_memories("b", types=["observation"])[0]:  # the server's worker consolidates
        assert time.monotonic() < deadline
        time.sleep(0.05)
    scopes = run(hs._memory_api.list_observation_scopes("b", limit=10))
    assert isinstance(scopes, models.ObservationScopesResponse)
    assert [(s.tags, s.count) for s in scopes.scopes] == [(["user:xavier"], 1)] and scopes.total == 1
    (observation,) = mindbank.list_memories("b", types=["observation"])[0]
    assert run(hs._memory_api.get_observation_history("b", observation.id)) == []
    paris = observation.source_memory_ids[0]
    cleared = run(hs._memory_api.clear_memory_observations("b", paris))
    assert isinstance(cleared, models.ClearMemoryObservationsResponse) and cleared.deleted_count == 1
    everything = run(hs._banks_api.clear_observations("b"))
    assert isinstance(everything, models.DeleteResponse) and everything.success
    gone = run(hs._memory_api.clear_bank_memories("b", type="world"))
    assert isinstance(gone, models.DeleteResponse) and gone.deleted_count == 1
