"""Helpers of the bank transfer tests: a bank with a bit of everything, and every row of a bank read straight from
its database (raw SQL, not through the code under test) in a form that compares across SQLite and PostgreSQL."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from mindbank.domain.governance import RefreshState
from mindbank.domain.records import LLMRequestRecord, Operation, RetainItem
from mindbank.domain.resources import Webhook, WebhookDelivery
from mindbank.service.facade import MindBank
from mindbank.store.base import SpendRecord

BANK_TABLES = (
    "banks",
    "documents",
    "document_events",
    "chunks",
    "memory_units",
    "mental_models",
    "mental_model_citations",
    "mental_model_history",
    "directives",
    "webhooks",
    "webhook_deliveries",
    "operations",
    "llm_requests",
    "knowledge_nodes",
    "refresh_spend",
)  # not knowledge_page_vectors: page search recomputes them (an archive does not carry them)
_KEYS = {
    "banks": ("bank_id",),
    "mental_model_citations": ("mental_model_id", "memory_id"),
    "refresh_spend": ("day", "mental_model_id"),
}
# bookkeeping that is per database, not per bank: the insertion counter, the generated search column, the cache key
_DROP = {"seq", "text_tsv", "memory_version"}
_TIMES = {
    "created_at", "updated_at", "last_memory_write_at", "occurred_start", "occurred_end", "mentioned_at",
    "last_mentioned_at", "consolidated_at", "last_refreshed_at", "last_memory_seen_at", "last_refresh_failed_at",
    "last_full_refreshed_at", "cleared_at", "changed_at", "next_retry_at", "lease_expires_at", "completed_at",
    "last_attempt_at",
}  # fmt: skip
_JSON = {
    "config", "disposition", "metadata", "tags", "source_memory_ids", "structured_document", "reflect_response",
    "trigger", "payload", "result", "request", "response", "event_types", "http_config", "refresh_state", "progress",
}  # fmt: skip


def fill_bank(mb: MindBank, bank: str = "b") -> dict[str, Any]:
    """A bank with a profile and overrides, documents (one appended to), facts, an observation, two mental models
    (one refreshed twice: history; the other with a governance record carrying a fact over), a knowledge base
    (nested folders, a page), refresh spend on two days, a deleted memory (the bank's stamp is newer than any
    memory), the operations of all that and a traced LLM request. The worker is not running: queued work is drained
    here."""
    t0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    mb.put_bank(bank, name="Bank B", mission="Remember the runners", disposition={"skepticism": 4, "literalism": 2,
                                                                                   "empathy": 5})  # fmt: skip
    mb.update_bank_config(bank, {"recall_max_tokens": 1024, "refresh_relevance_threshold": 0.2})
    alice = ("user:alice",)
    mb.retain(bank, [
        RetainItem(content="Alice: I started training for the Berlin marathon.", tags=alice, context="chat",
                   metadata={"turn": "1"}, timestamp=t0, document_id="chat-1"),
        RetainItem(content="Alice: I started training for the Berlin marathon!", tags=alice, document_id="chat-2",
                   timestamp=t0 + timedelta(minutes=1)),
        RetainItem(content="Bob: I bake sourdough bread every weekend.\n\nBob: My starter is called Doug.",
                   tags=("user:bob",), document_id="bob"),
    ])  # fmt: skip
    mb.retain(bank, [RetainItem(content="Alice: my long run is on Sundays.", tags=alice, document_id="chat-1",
                                update_mode="append", timestamp=t0 + timedelta(days=1))])  # fmt: skip
    mb.run_pending()
    mb.create_mental_model(bank, name="Alice", source_query="What is Alice training for?", tags=list(alice),
                           id="alice", trigger={"keep_trace": True})  # fmt: skip
    mb.create_mental_model(bank, name="Bob", source_query="What does Bob bake?", tags=["user:bob"], id="bob",
                           trigger={"mode": "delta"})  # fmt: skip
    mb.run_pending()
    mb.retain(bank, [RetainItem(content="Alice: I finished the marathon in 3:58.", tags=alice)])
    mb.run_pending()
    mb.refresh_mental_model(bank, "alice")
    mb.run_pending()
    doug = next(m for m in mb.list_memories(bank, limit=100)[0] if "Doug" in m.text)
    mb.delete_memory(bank, doug.id)
    mb.run_pending()
    op = mb.list_operations(bank, limit=1)[0][0]
    mb.store.record_llm_request(LLMRequestRecord(
        id="11111111-2222-4333-8444-555555555555", bank_id=bank, operation_id=op.id, scope="refresh",
        provider="openai", model="m", attempt=1, request={"messages": [{"role": "user", "content": "hi"}]},
        response={"text": "ok"}, error=None, input_tokens=3, output_tokens=1, duration_ms=12, created_at=t0,
    ))  # fmt: skip
    mb.create_directive(bank, name="Be brief", content="Answer in two sentences.", priority=5, tags=["user:alice"])
    mb.create_directive(bank, name="Old rule", content="Retired.", is_active=False)
    # stored directly: the service would refuse a URL that does not resolve to a public address (offline)
    mb.store.insert_webhook(Webhook("wh-1", bank, "https://hooks.example.com/in", "s3cret",
                                    ("mental_model.refreshed",), True, {"timeout_seconds": 5}, t0, t0))  # fmt: skip
    delivery_op = Operation("22222222-3333-4444-8555-666666666666", bank, "webhook_delivery", "completed", {}, {},
                            None, 0, None, None, t0, t0, t0)  # fmt: skip
    mb.store.enqueue_deliveries([(WebhookDelivery(
        "33333333-4444-4555-8666-777777777777", bank, "wh-1", "ev-1", "mental_model.refreshed",
        "https://hooks.example.com/in", {"event": "mental_model.refreshed"}, "delivered", 1, t0, t0,
        operation_id=delivery_op.id,
    ), delivery_op)])  # fmt: skip
    runners = mb.create_knowledge_folder(bank, "Runners")
    berlin = mb.create_knowledge_folder(bank, "Berlin", parent_id=runners.id)
    mb.create_knowledge_folder(bank, "Bakers")
    mb.create_knowledge_page(bank, name="Alice's races", source_query="Which races did Alice run?",
                             parent_id=berlin.id, tags=list(alice))  # fmt: skip
    mb.run_pending()
    bread = next(m for m in mb.list_memories(bank, limit=100)[0] if "sourdough" in m.text)
    bob = mb.store.get_mental_model(bank, "bob")
    assert bob is not None
    state = RefreshState(failures=1, last_failure_reason="refresh_failed_error", carried_over=(bread.id,),
                         carried_attempts=1, reanchor="carried_over_failed_again")  # fmt: skip
    mb.store.save_refresh(replace(bob, refresh_state=state), history=None, history_cap=0)
    mb.store.add_refresh_spend(SpendRecord(bank, "bob", "2026-02-28", 1, 2, 300, 40))
    mb.store.add_refresh_spend(SpendRecord(bank, "deleted-model", "2026-02-28", 1, 1, 50, 5))
    observations = [m for m in mb.list_memories(bank, limit=100)[0] if m.fact_type == "observation"]
    assert observations and observations[0].source_memory_ids, "the bank should hold an observation with sources"
    assert mb.get_mental_model(bank, "alice").is_stale is False
    assert len(mb.store.list_history(bank, "alice")) >= 1
    return {"observations": observations}


def bank_rows(mb: MindBank, bank: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table of the bank, by table, normalised to compare across backends (times as aware
    datetimes, JSON as data, vectors as float lists) and sorted by key; per-database bookkeeping left out."""
    store = mb.store
    mark = "%s" if type(store).__name__ == "PostgresStore" else "?"
    out: dict[str, list[dict[str, Any]]] = {}
    with store._read() as conn:  # type: ignore[attr-defined]
        for table in BANK_TABLES:
            rows = conn.execute(f"SELECT * FROM {table} WHERE bank_id = {mark}", (bank,)).fetchall()
            keys = _KEYS.get(table, ("id",))
            normalised = [_normalise(table, dict(r)) for r in rows]
            out[table] = sorted(normalised, key=lambda r: tuple(str(r[k]) for k in keys))
    return out


def _normalise(table: str, row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in _DROP:
            continue
        if value is None:
            out[key] = None
        elif key == "embedding":
            out[key] = _vector(value)
        elif key in _TIMES:
            out[key] = datetime.fromisoformat(value) if isinstance(value, str) else value
        elif key in _JSON or (table == "mental_model_history" and key == "content"):
            out[key] = json.loads(value) if isinstance(value, str) else value
        elif isinstance(value, memoryview):
            out[key] = bytes(value)
        else:
            out[key] = value
    return out


def _vector(value: Any) -> list[float]:
    if isinstance(value, bytes | memoryview):
        return np.frombuffer(bytes(value), dtype="<f4").tolist()  # type: ignore[no-any-return]
    to_list = getattr(value, "to_list", None)
    return [float(x) for x in (to_list() if callable(to_list) else value)]


def without_operations(rows: dict[str, list[dict[str, Any]]], *ids: str) -> dict[str, list[dict[str, Any]]]:
    """``rows`` with the given operations left out (an export's own, an import's own)."""
    return {**rows, "operations": [r for r in rows["operations"] if r["id"] not in ids]}


# the manifest of a reference-format (version 1) archive of bank "ref": what hand-made test archives start from
REFERENCE_MANIFEST: dict[str, Any] = {
    "format": "bank-transfer",
    "format_version": 1,
    "source_bank_id": "ref",
    "exported_at": "2026-03-01T10:00:00Z",
}
