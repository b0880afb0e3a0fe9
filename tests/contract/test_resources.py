"""Store behaviour for a bank's resources beyond memories and mental models, on every backend: documents (listing,
chunks, history, deletion, retagging), directives, webhooks and deliveries, operation administration, the LLM
request log, heartbeats and the schema version."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

from test_store import doc, op, vec

from mindbank.domain.records import Chunk, LLMRequestRecord, RetainItem
from mindbank.domain.resources import Directive, Webhook, WebhookDelivery, WorkerHeartbeat
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import DocumentWrite, MemoryFilter, Store


def test_documents_list_filter_page_and_search(store: Store) -> None:
    store.write_documents("b", [doc("Alice runs marathons", tags=("user:alice",), document_id="d1")])
    store.write_documents("b", [doc("Bob bakes bread", tags=("user:bob",), document_id="report-2024")])
    store.write_documents("b", [doc("untagged note", document_id="d3")])
    items, total = store.list_documents(
        "b", query=None, tags=(), tags_match="any_strict", time_field="updated_at", start=None, end=None,
        limit=10, offset=0,
    )  # fmt: skip
    assert total == 3 and [d.id for d in items] == ["d3", "report-2024", "d1"]  # newest write first
    assert items[2].memory_count == 1 and items[2].text_length == len("Alice runs marathons")
    assert items[2].tags == ("user:alice",) and items[2].original_text is None
    page, total = store.list_documents(
        "b", query=None, tags=(), tags_match="any", time_field="created_at", start=None, end=None, limit=1, offset=1
    )
    assert total == 3 and [d.id for d in page] == ["report-2024"]
    tagged, total = store.list_documents(
        "b", query=None, tags=("user:alice",), tags_match="any_strict", time_field="updated_at", start=None,
        end=None, limit=10, offset=0,
    )  # fmt: skip
    assert total == 1 and tagged[0].id == "d1"
    by_id, _ = store.list_documents(
        "b", query="REPORT", tags=(), tags_match="any", time_field="updated_at", start=None, end=None, limit=10,
        offset=0,
    )  # fmt: skip
    assert [(d.id, d.matched_fields) for d in by_id] == [("report-2024", ("id",))]
    by_text, _ = store.list_documents(
        "b", query="marathon", tags=(), tags_match="any", time_field="updated_at", start=None, end=None, limit=10,
        offset=0,
    )  # fmt: skip
    assert [(d.id, d.matched_fields) for d in by_text] == [("d1", ("original_text",))]
    later, total = store.list_documents(
        "b", query=None, tags=(), tags_match="any", time_field="updated_at", start=utcnow() + timedelta(hours=1),
        end=None, limit=10, offset=0,
    )  # fmt: skip
    assert later == [] and total == 0


def test_document_get_chunks_and_history(store: Store) -> None:
    store.write_documents("b", [doc("first", document_id="d1")])
    store.write_documents("b", [doc("second", document_id="d1", mode="append")])
    store.write_documents("b", [doc("third", document_id="d1")])  # replace
    found = store.get_document("b", "d1")
    assert found is not None and found.original_text == "third" and found.memories_by_type == {"world": 1}
    assert store.get_document("b", "nope") is None and store.get_document("other", "d1") is None
    chunks, total = store.list_chunks("b", "d1", limit=10, offset=0)
    assert total == 1 and chunks[0].text == "third" and chunks[0].document_id == "d1"
    assert store.get_chunk(chunks[0].id) == chunks[0] and store.get_chunk("nope") is None
    events, total = store.list_document_events("b", "d1", limit=10, offset=0)
    assert total == 3
    assert [(e.kind, e.facts_added, e.facts_removed) for e in events] == [
        ("retain", 1, 2), ("append", 1, 0), ("retain", 1, 0)
    ]  # fmt: skip
    memory_id = store.list_memories("b", MemoryFilter(), query=None, limit=5, offset=0)[0][0].id
    store.update_memory("b", memory_id, text="third, edited", embedding=vec(0, 1, 0, 0))
    store.delete_memory("b", memory_id)
    kinds = [(e.kind, e.fact_id) for e in store.list_document_events("b", "d1", limit=2, offset=0)[0]]
    assert kinds == [("fact_deleted", memory_id), ("fact_edited", memory_id)]


def _document(document_id: str, texts: list[str]) -> DocumentWrite:
    """A document of one chunk per text (index 0, 1, ...) and no facts."""
    chunks = [Chunk(id=uuid.uuid4().hex, document_id=document_id, index=i, text=t) for i, t in enumerate(texts)]
    item = RetainItem(content="\n".join(texts), document_id=document_id)
    return DocumentWrite(item=item, document_id=document_id, chunks=chunks, memories=[])


def test_chunks_at_reads_many_positions_in_one_call(store: Store) -> None:
    store.write_documents("b", [_document("d1", ["a0", "a1", "a2"]), _document("d2", ["b0", "b1"])])
    store.write_documents("other", [_document("d1", ["x0", "x1", "x2"])])
    places = [("d1", 0), ("d1", 2), ("d2", 1), ("d2", 5), ("nope", 0)]  # two positions hold no chunk
    found = store.chunks_at("b", places)
    assert sorted((c.document_id, c.index, c.text) for c in found) == [("d1", 0, "a0"), ("d1", 2, "a2"),
                                                                      ("d2", 1, "b1")]  # fmt: skip
    listed = {c.id: c for c in store.list_chunks("b", "d1", limit=10, offset=0)[0]}
    assert all(listed[c.id] == c for c in found if c.document_id == "d1")  # the same records list_chunks reads
    assert store.chunks_at("b", []) == [] and store.chunks_at("nobody", places) == []


def test_delete_document_removes_its_memories_as_a_write(store: Store) -> None:
    store.write_documents("b", [doc("keep me", document_id="keep")])
    ids = store.write_documents("b", [doc("drop me", document_id="drop")])[0]
    before = store.bank_last_memory_write_at("b")
    assert store.delete_document("b", "drop") == 1
    assert store.get_memories("b", ids) == [] and store.get_document("b", "drop") is None
    assert store.list_chunks("b", "drop", limit=5, offset=0)[1] == 0
    assert store.list_document_events("b", "drop", limit=5, offset=0)[1] == 0
    after = store.bank_last_memory_write_at("b")
    assert before is not None and after is not None and after > before
    assert store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter()) and store.delete_document("b", "drop") is None
    assert [m.document_id for m in store.list_memories("b", MemoryFilter(), query=None, limit=5, offset=0)[0]] == [
        "keep"
    ]


def test_retag_document_retags_its_facts(store: Store) -> None:
    ids = store.write_documents("b", [doc("Alice note", tags=("user:alice",), document_id="d1")])[0]
    assert store.retag_document("b", "d1", ["user:bob", "team"]) is True
    assert store.get_memories("b", ids)[0].tags == ("team", "user:bob")
    assert store.get_document("b", "d1").tags == ("team", "user:bob")  # type: ignore[union-attr]
    hits = store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter(tags=("user:bob",), tags_match="all_strict"))
    assert [h for h, _ in hits] == ids
    assert store.retag_document("b", "missing", ["x"]) is False
    assert store.list_document_events("b", "d1", limit=1, offset=0)[0][0].kind == "retag"
    listed, _ = store.list_memories("b", MemoryFilter(), query=None, limit=5, offset=0, document_id="d1")
    assert [m.id for m in listed] == ids
    assert store.list_memories("b", MemoryFilter(), query=None, limit=5, offset=0, document_id="other")[1] == 0


def _directive(bank: str = "b", **over: object) -> Directive:
    now = utcnow()
    base = Directive(id=str(uuid.uuid4()), bank_id=bank, name="tone", content="Be brief.", priority=0,
                     is_active=True, tags=(), created_at=now, updated_at=now)  # fmt: skip
    return replace(base, **over)  # type: ignore[arg-type]


def test_directives_crud(store: Store) -> None:
    d = _directive(tags=("user:alice", "a"))
    store.insert_directive(d)
    assert store.get_directive("b", d.id) == replace(d, tags=("a", "user:alice"))
    off = _directive(is_active=False, priority=5)
    store.insert_directive(off)
    assert {x.id for x in store.list_directives("b", active_only=True)} == {d.id}
    assert {x.id for x in store.list_directives("b", active_only=False)} == {d.id, off.id}
    assert store.update_directive(replace(off, is_active=True, content="new")) is True
    assert store.get_directive("b", off.id).content == "new"  # type: ignore[union-attr]
    assert store.update_directive(_directive()) is False
    assert store.delete_directive("b", d.id) is True and store.delete_directive("b", d.id) is False
    assert store.get_directive("other", off.id) is None


def _webhook(bank: str = "b") -> Webhook:
    now = utcnow()
    return Webhook(id=str(uuid.uuid4()), bank_id=bank, url="https://example.com/hook", secret="s",
                   event_types=("retain.completed",), enabled=True, http_config={"timeout_seconds": 5},
                   created_at=now, updated_at=now)  # fmt: skip


def test_webhooks_and_deliveries(store: Store) -> None:
    w = _webhook()
    store.insert_webhook(w)
    assert store.get_webhook("b", w.id) == w and store.list_webhooks("b") == [w]
    assert store.update_webhook(replace(w, enabled=False, secret=None)) is True
    assert store.get_webhook("b", w.id).enabled is False  # type: ignore[union-attr]
    now = utcnow()
    deliveries = []
    for i in range(3):
        operation = replace(op(), operation_type="webhook_delivery")
        delivery = WebhookDelivery(
            id=str(uuid.uuid4()), bank_id="b", webhook_id=w.id, event_id=f"e{i}", event_type="retain.completed",
            url=w.url, payload={"event": "retain.completed", "n": i}, status="pending", attempts=0,
            created_at=now + timedelta(seconds=i), updated_at=now, operation_id=operation.id,
        )  # fmt: skip
        deliveries.append((delivery, operation))
    store.enqueue_deliveries(deliveries)
    first, operation = deliveries[0]
    assert store.get_delivery(first.id) == first
    assert store.get_operation("b", operation.id) is not None
    attempted = replace(first, status="delivered", attempts=1, last_response_status=200, last_response_body="ok",
                        last_attempt_at=now, updated_at=now)  # fmt: skip
    store.save_delivery_attempt(attempted)
    assert store.get_delivery(first.id) == attempted
    page = store.list_deliveries("b", w.id, limit=2, before=None)
    assert [d.event_id for d in page] == ["e2", "e1"]
    rest = store.list_deliveries("b", w.id, limit=2, before=page[-1].created_at)
    assert [d.event_id for d in rest] == ["e0"]
    assert store.delete_webhook("b", w.id) is True and store.get_delivery(first.id) is None
    assert store.delete_webhook("b", w.id) is False


def test_operation_requeue_delete_and_counts(store: Store) -> None:
    failed, pending = op(), op(created_offset=-60)
    store.submit_operation(failed)
    store.submit_operation(pending)
    assert store.requeue_operation("b", failed.id) is False  # only failed operations
    store.finish_operation(failed.id, status="failed", result={"x": 1}, error="boom")
    assert ("batch_retain", "failed", 1) in store.operation_counts()
    assert store.requeue_operation("b", failed.id) is True
    again = store.get_operation("b", failed.id)
    assert again is not None and again.status == "pending" and again.error is None and again.retry_count == 0
    oldest = store.oldest_due_pending(utcnow())
    assert oldest is not None and abs((oldest - pending.created_at).total_seconds()) < 1e-3
    claimed = store.claim_operation("w", 60)
    assert claimed is not None and store.delete_operation("b", claimed.id) is False  # running
    other = failed.id if claimed.id == pending.id else pending.id
    assert store.delete_operation("b", other) is True and store.get_operation("b", other) is None
    assert store.delete_operation("b", "missing") is False


def test_llm_request_log_pages_filters_and_buckets(store: Store) -> None:
    now = utcnow()
    for i, (error, scope) in enumerate([(None, "retain_extract"), ("boom", "agent_1"), (None, "agent_1")]):
        store.record_llm_request(
            LLMRequestRecord(
                id=f"r{i}", bank_id="b", operation_id="op1" if i else "op0", scope=scope, provider="openai",
                model="m", attempt=1, request={"messages": []}, response=None if error else {"text": "x"},
                error=error, input_tokens=10, output_tokens=2, duration_ms=5,
                created_at=now + timedelta(seconds=i),
            )
        )  # fmt: skip
    items, total = store.page_llm_requests(
        "b", status=None, scope=None, provider=None, operation_id=None, start=None, end=None, limit=2, offset=0
    )
    assert total == 3 and [r.id for r in items] == ["r2", "r1"]
    errors, total = store.page_llm_requests(
        "b", status="error", scope=None, provider=None, operation_id=None, start=None, end=None, limit=5, offset=0
    )
    assert total == 1 and errors[0].id == "r1"
    scoped, total = store.page_llm_requests(
        "b", status="success", scope="agent_1", provider="openai", operation_id="op1", start=now,
        end=now + timedelta(minutes=1), limit=5, offset=0,
    )  # fmt: skip
    assert total == 1 and scoped[0].id == "r2"
    retains, total = store.page_llm_requests(
        "b", status=None, scope=None, provider=None, operation_id=None, start=None, end=None, limit=5, offset=0,
        operation="retain",
    )  # fmt: skip
    assert total == 1 and retains[0].id == "r0"
    buckets = store.llm_request_buckets("b", since=now - timedelta(days=1), unit="hour")
    assert sum(n for _, _, n, _, _ in buckets) == 3 and {failed for _, failed, _, _, _ in buckets} == {True, False}
    assert all(start <= now for start, *_ in buckets) and sum(i for *_, i, _ in buckets) == 30


def test_heartbeats_and_schema_status(store: Store) -> None:
    now = utcnow()
    store.beat(WorkerHeartbeat("old", "host", 2, now - timedelta(days=3), now - timedelta(days=2)))
    store.beat(WorkerHeartbeat("w1", "host", 1, now, now))  # a beat forgets workers silent for a day
    store.beat(WorkerHeartbeat("w1", "host", 1, now, now + timedelta(seconds=5)))
    seen = store.list_heartbeats(now - timedelta(days=5))
    assert [(h.worker_id, h.last_seen_at) for h in seen] == [("w1", now + timedelta(seconds=5))]  # old: purged
    store.drop_heartbeat("w1")
    assert store.list_heartbeats(now - timedelta(days=5)) == []
    applied, shipped = store.schema_status()
    assert applied == shipped >= 50
