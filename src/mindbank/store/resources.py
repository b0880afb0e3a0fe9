"""Store methods for a bank's resources beyond memories and mental models, run the same way by both backends:
document reads (listing, chunks, change history), directives, webhooks and their deliveries, operation
administration, the bank-wide LLM request log, and worker heartbeats.

Like :mod:`mindbank.store.shared`, each method runs a named statement (``self._q``; SQL in the backends'
``resource_queries.py``) and maps rows through the backend's :class:`~mindbank.store.columns.Columns`. What differs
between the backends — compiling a document filter, deleting or retagging a document (memory writes: bank stamps,
SQLite's in-process vector index), the schema version a backend ships — is the backends' ``documents.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from mindbank.domain.records import LLMRequestRecord, Operation
from mindbank.domain.resources import (
    ChunkRecord,
    Directive,
    DocumentEvent,
    DocumentSummary,
    Webhook,
    WebhookDelivery,
    WorkerHeartbeat,
)
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch
from mindbank.store.columns import Row
from mindbank.store.dialect import substring_pattern
from mindbank.store.migration_files import shipped_migrations
from mindbank.store.shared import SharedQueries

# the column lists of a delivery's insert and of its attempt's update
_DELIVERY_INSERT = (
    "id bank_id webhook_id event_id event_type url payload status attempts operation_id created_at updated_at"
)
_DELIVERY_ATTEMPT = (
    "status attempts next_retry_at last_error last_response_status last_response_body last_attempt_at updated_at id"
)


class ResourceQueries(SharedQueries):
    """The backend-neutral resource methods (module docstring), over the backend's statements (``_q``) and SQL
    spelling (``_dialect``)."""

    # ---------------------------------------------------------------- supplied by the backend

    _migrations_package: ClassVar[str]  # the package whose ``migrations`` folder holds the backend's schema

    def _document_filter(
        self, *, query: str | None, tags: Sequence[str], tags_match: TagsMatch, time_field: str,
        start: datetime | None, end: datetime | None,
    ) -> tuple[str, list[Any], str, list[Any]]:  # fmt: skip
        """``(where, params, hits, hit params)`` of a document listing over alias ``d``: ``hits`` is the SELECT
        fragment ``… AS id_hit, … AS text_hit`` saying which fields the text query matched (case-insensitive:
        both sides lowered)."""
        where, params = self._filter_sql(MemoryFilter(tags=tuple(tags), tags_match=tags_match), "d")
        clauses, values, m = [where], list(params), self._dialect.mark
        for bound, op in ((start, ">="), (end, "<")):
            if bound is not None:
                clauses.append(f"d.{time_field} {op} {m}")
                values.append(self._columns.time(bound))
        if not query:
            return " AND ".join(clauses), values, "0 AS id_hit, 0 AS text_hit", []
        pattern = substring_pattern(query.lower())
        id_hit, text_hit = (f"lower({column}) LIKE {m} ESCAPE '\\'" for column in ("d.id", "d.original_text"))
        clauses.append(f"({id_hit} OR {text_hit})")
        values += [pattern, pattern]
        return " AND ".join(clauses), values, f"{id_hit} AS id_hit, {text_hit} AS text_hit", [pattern, pattern]

    # ---------------------------------------------------------------- documents

    def _document_row(self, r: Row) -> DocumentSummary:
        """A document row; its text where the statement selects it (a single read, not a listing)."""
        return self._columns.record(DocumentSummary, r)

    def list_documents(
        self, bank_id: str, *, query: str | None, tags: Sequence[str], tags_match: TagsMatch, time_field: str,
        start: datetime | None, end: datetime | None, limit: int, offset: int,
    ) -> tuple[list[DocumentSummary], int]:  # fmt: skip
        """A page of the bank's documents without their text, newest ``time_field`` first (``created_at`` or
        ``updated_at``), and the total. ``query`` matches the id or the text, case-insensitively (each summary's
        ``matched_fields`` says which). Raises ``ValueError`` for another ``time_field``."""
        if time_field not in ("created_at", "updated_at"):
            raise ValueError(f"time_field must be created_at or updated_at, got {time_field!r}")
        where, params, hits, hit_params = self._document_filter(
            query=query, tags=tags, tags_match=tags_match, time_field=time_field, start=start, end=end
        )
        with self._read() as conn:
            total = conn.execute(self._q["count_documents"].format(where=where), (bank_id, *params)).fetchone()["n"]
            rows = conn.execute(
                self._q["list_documents"].format(where=where, order=time_field, hits=hits),
                (*hit_params, bank_id, *params, limit, offset),
            ).fetchall()
        return [replace(self._document_row(r), matched_fields=_hits(r)) for r in rows], int(total)

    def get_document(self, bank_id: str, document_id: str) -> DocumentSummary | None:
        """One document with its text and its memory counts by fact type, or None."""
        with self._read() as conn:
            row = conn.execute(self._q["get_document_summary"], (bank_id, document_id)).fetchone()
            if row is None:
                return None
            counts = conn.execute(self._q["document_memories_by_type"], (bank_id, document_id)).fetchall()
        by_type = {r["fact_type"]: int(r["n"]) for r in counts}
        doc = self._document_row(row)
        return replace(doc, memory_count=sum(by_type.values()), memories_by_type=by_type)

    def _chunk_row(self, r: Row) -> ChunkRecord:
        return self._columns.record(ChunkRecord, r, index=int(r["chunk_index"]))

    def list_chunks(self, bank_id: str, document_id: str, *, limit: int, offset: int) -> tuple[list[ChunkRecord], int]:
        """A page of a document's chunks in document order, and the total."""
        with self._read() as conn:
            total = conn.execute(self._q["count_chunks"], (bank_id, document_id)).fetchone()["n"]
            rows = conn.execute(self._q["list_chunks"], (bank_id, document_id, limit, offset)).fetchall()
        return [self._chunk_row(r) for r in rows], int(total)

    def chunks_at(self, bank_id: str, places: Sequence[tuple[str, int]]) -> list[ChunkRecord]:
        """The chunks of the bank at the ``(document id, chunk index)`` positions in ``places`` (positions without a
        chunk left out), in no particular order: one statement for all of them (recall's neighbouring chunks)."""
        if not places:
            return []
        bound = json.dumps([[document_id, int(index)] for document_id, index in places])
        with self._read() as conn:
            rows = conn.execute(self._q["chunks_at"], (bank_id, bound)).fetchall()
        return [self._chunk_row(r) for r in rows]

    def get_chunk(self, chunk_id: str) -> ChunkRecord | None:
        """One chunk by its (globally unique) id, or None."""
        return self._one(self._q["get_chunk"], (chunk_id,), self._chunk_row)

    def list_document_events(
        self, bank_id: str, document_id: str, *, limit: int, offset: int
    ) -> tuple[list[DocumentEvent], int]:
        """A page of a document's change history, newest first, and the total."""
        with self._read() as conn:
            total = conn.execute(self._q["count_document_events"], (bank_id, document_id)).fetchone()["n"]
            rows = conn.execute(self._q["list_document_events"], (bank_id, document_id, limit, offset)).fetchall()
        return [self._columns.record(DocumentEvent, r) for r in rows], int(total)

    def _record_document_event(
        self, conn: Any, bank_id: str, document_id: str, kind: str, at: Any, *, added: int = 0, removed: int = 0,
        operation_id: str | None = None,
    ) -> None:  # fmt: skip
        """Add a history row to a document inside the caller's write transaction (``at`` in stored form)."""
        conn.execute(
            self._q["insert_document_event"],
            (bank_id, document_id, kind, operation_id, None, added, removed, at),
        )

    def _record_fact_event(self, conn: Any, bank_id: str, memory_id: str, kind: str, at: Any) -> None:
        """Add ``fact_edited`` / ``fact_deleted`` to the history of the fact's document, if it has one (inside the
        caller's write transaction, before a delete)."""
        conn.execute(self._q["insert_fact_event"], (kind, 1 if kind == "fact_deleted" else 0, at, bank_id, memory_id))

    # ---------------------------------------------------------------- directives

    def _directive_row(self, r: Row) -> Directive:
        return self._columns.record(Directive, r)

    def insert_directive(self, directive: Directive) -> None:
        """Store a new directive (bank auto-created)."""
        params = self._columns.params(
            directive, "bank_id id name content priority is_active tags created_at updated_at"
        )
        with self._tx() as conn:
            self._ensure_bank(conn, directive.bank_id)
            conn.execute(self._q["insert_directive"], params)

    def get_directive(self, bank_id: str, directive_id: str) -> Directive | None:
        """One directive, or None."""
        return self._one(self._q["get_directive"], (bank_id, directive_id), self._directive_row)

    def list_directives(self, bank_id: str, *, active_only: bool) -> list[Directive]:
        """Every directive of the bank (only the active ones with ``active_only``), unordered."""
        return self._all(self._q["list_directives"], (bank_id, active_only), self._directive_row)

    def update_directive(self, directive: Directive) -> bool:
        """Write every field of a stored directive; False when it does not exist."""
        params = self._columns.params(directive, "name content priority is_active tags updated_at bank_id id")
        return self._changed(self._q["update_directive"], params) > 0

    def delete_directive(self, bank_id: str, directive_id: str) -> bool:
        """Delete a directive; False when it did not exist."""
        return self._changed(self._q["delete_directive"], (bank_id, directive_id)) > 0

    # ---------------------------------------------------------------- webhooks

    def _webhook_row(self, r: Row) -> Webhook:
        return self._columns.record(Webhook, r)

    def insert_webhook(self, webhook: Webhook) -> None:
        """Store a new webhook (bank auto-created)."""
        columns = "bank_id id url secret event_types enabled http_config created_at updated_at"
        with self._tx() as conn:
            self._ensure_bank(conn, webhook.bank_id)
            conn.execute(self._q["insert_webhook"], self._columns.params(webhook, columns))

    def get_webhook(self, bank_id: str, webhook_id: str) -> Webhook | None:
        """One webhook, or None."""
        return self._one(self._q["get_webhook"], (bank_id, webhook_id), self._webhook_row)

    def list_webhooks(self, bank_id: str) -> list[Webhook]:
        """Every webhook of the bank, oldest first."""
        return self._all(self._q["list_webhooks"], (bank_id,), self._webhook_row)

    def update_webhook(self, webhook: Webhook) -> bool:
        """Write every field of a stored webhook; False when it does not exist."""
        columns = "url secret event_types enabled http_config updated_at bank_id id"
        return self._changed(self._q["update_webhook"], self._columns.params(webhook, columns)) > 0

    def delete_webhook(self, bank_id: str, webhook_id: str) -> bool:
        """Delete a webhook with its delivery log; False when it did not exist."""
        return self._changed(self._q["delete_webhook"], (bank_id, webhook_id)) > 0

    # ---------------------------------------------------------------- deliveries

    def _delivery_row(self, r: Row) -> WebhookDelivery:
        return self._columns.record(WebhookDelivery, r)

    def enqueue_deliveries(self, deliveries: Sequence[tuple[WebhookDelivery, Operation]]) -> None:
        """Store each delivery with the operation that will send it, all in one transaction: a delivery is never
        recorded without its operation, nor queued without its record."""
        if not deliveries:
            return
        c = self._columns
        with self._tx() as conn:
            for d, op in deliveries:
                conn.execute(self._q["insert_delivery"], c.params(d, _DELIVERY_INSERT))
                conn.execute(self._q["insert_operation"], c.operation_params(op))

    def get_delivery(self, delivery_id: str) -> WebhookDelivery | None:
        """One delivery, or None (its webhook was deleted)."""
        return self._one(self._q["get_delivery"], (delivery_id,), self._delivery_row)

    def save_delivery_attempt(self, delivery: WebhookDelivery) -> None:
        """Record an attempt's outcome: status, attempts, next retry and the last response or error."""
        with self._tx() as conn:
            conn.execute(self._q["update_delivery"], self._columns.params(delivery, _DELIVERY_ATTEMPT))

    def list_deliveries(
        self, bank_id: str, webhook_id: str, *, limit: int, before: datetime | None
    ) -> list[WebhookDelivery]:
        """A webhook's deliveries, newest first, created before ``before`` (a page cursor) when given."""
        at = self._columns.time(before)
        return self._all(self._q["list_deliveries"], (bank_id, webhook_id, at, at, limit), self._delivery_row)

    # ---------------------------------------------------------------- operation administration and metrics

    def requeue_operation(self, bank_id: str, operation_id: str) -> bool:
        """Send a failed operation back to the queue as new (pending, retries and error cleared); False unless it
        exists and has failed."""
        now = self._columns.time(datetime.now(UTC))
        return self._changed(self._q["requeue_operation"], (now, bank_id, operation_id)) > 0

    def delete_operation(self, bank_id: str, operation_id: str) -> bool:
        """Delete an operation that no worker is running; False unless it exists and is not processing."""
        return self._changed(self._q["delete_operation"], (bank_id, operation_id)) > 0

    def operation_counts(self) -> list[tuple[str, str, int]]:
        """``(operation_type, status, count)`` over every bank."""
        with self._read() as conn:
            rows = conn.execute(self._q["operation_counts"]).fetchall()
        return [(r["operation_type"], r["status"], int(r["n"])) for r in rows]

    def oldest_due_pending(self, now: datetime) -> datetime | None:
        """Creation time of the oldest pending operation that is due at ``now`` (parked ones are not late)."""
        with self._read() as conn:
            row = conn.execute(self._q["oldest_due_pending"], (self._columns.time(now),)).fetchone()
        return None if row is None or row["oldest"] is None else self._columns.load_time(row["oldest"])

    # ---------------------------------------------------------------- the bank's LLM request log

    def page_llm_requests(
        self, bank_id: str, *, status: str | None, scope: str | None, provider: str | None,
        operation_id: str | None, start: datetime | None, end: datetime | None, limit: int, offset: int,
        operation: str | None = None,
    ) -> tuple[list[LLMRequestRecord], int]:  # fmt: skip
        """A page of the bank's traced LLM attempts, newest first, and the total; every filter is optional
        (``status``: ``success`` or ``error``; ``operation``: ``reflect``, ``retain``, ``consolidation`` or
        ``refresh``)."""
        t = self._columns.time
        params = (bank_id, status, status, scope, scope, provider, provider, operation_id, operation_id,
                  t(start), t(start), t(end), t(end), operation, operation)  # fmt: skip
        with self._read() as conn:
            total = conn.execute(self._q["count_llm_requests"], params).fetchone()["n"]
            rows = conn.execute(self._q["page_llm_requests"], (*params, limit, offset)).fetchall()
        return [self._columns.llm_request_row(r) for r in rows], int(total)

    def llm_request_buckets(
        self, bank_id: str, *, since: datetime, unit: str, operation: str | None = None
    ) -> list[tuple[datetime, bool, int, int, int]]:
        """``(bucket start, failed, count, input tokens, output tokens)`` per ``unit`` (``hour`` or ``day``) since
        ``since`` (of one ``operation`` when given), oldest bucket first."""
        params = (unit, bank_id, self._columns.time(since), operation, operation)
        with self._read() as conn:
            rows = conn.execute(self._q["llm_request_buckets"], params).fetchall()
        return [
            (_bucket_start(r["bucket"]), bool(r["failed"]), int(r["n"]), int(r["input_tokens"] or 0),
             int(r["output_tokens"] or 0))
            for r in rows
        ]  # fmt: skip

    # ---------------------------------------------------------------- worker heartbeats

    def beat(self, heartbeat: WorkerHeartbeat) -> None:
        """Record that a worker is alive (and forget workers silent for a day)."""
        h, c = heartbeat, self._columns
        with self._tx() as conn:
            conn.execute(self._q["beat"], c.params(h, "worker_id host pid started_at last_seen_at"))
            conn.execute(self._q["purge_heartbeats"], (c.time(_day_before(h.last_seen_at)),))

    def list_heartbeats(self, since: datetime) -> list[WorkerHeartbeat]:
        """Workers seen at or after ``since``, most recent first."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_heartbeats"], (self._columns.time(since),)).fetchall()
        return [self._columns.record(WorkerHeartbeat, r) for r in rows]

    def drop_heartbeat(self, worker_id: str) -> None:
        """Forget a worker that stopped cleanly."""
        with self._tx() as conn:
            conn.execute(self._q["drop_heartbeat"], (worker_id,))

    def schema_version(self) -> int:
        """The highest migration applied to the database (a query: it fails when the database is unreachable)."""
        with self._read() as conn:
            row = conn.execute(self._q["schema_version"]).fetchone()
        return int(row["v"] or 0)

    def schema_status(self) -> tuple[int, int]:
        """``(applied, shipped)``: the database's migration version and the newest this code ships."""
        return self.schema_version(), max(number for number, _, _ in shipped_migrations(self._migrations_package))


def _hits(r: Row) -> tuple[str, ...]:
    return tuple(name for name, key in (("id", "id_hit"), ("original_text", "text_hit")) if r[key])


def _bucket_start(value: Any) -> datetime:
    """A bucket key as an aware datetime: PostgreSQL's ``date_trunc`` value, or SQLite's ISO prefix
    (``2026-03-01T10`` for an hour, ``2026-03-01`` for a day)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    text = str(value)
    return datetime.fromisoformat(text + (":00:00" if "T" in text else "T00:00:00")).replace(tzinfo=UTC)


def _day_before(at: datetime) -> datetime:
    return at - timedelta(days=1)
