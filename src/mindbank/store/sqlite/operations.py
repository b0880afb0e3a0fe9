"""The operation queue of the SQLite store (submit, coalesce, claim with a lease, finish, park, retry, cancel, list)
and the LLM request trace kept per operation."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.records import LLMRequestRecord, Operation
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import fold_into_pending
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.rows import llm_request_row, operation_row
from mindbank.store.sqlite.sql import to_json


class OperationsMixin(SQLiteBase):
    """The ``operations`` and ``llm_requests`` tables."""

    def submit_operation(self, op: Operation) -> None:
        """Insert a new operation (bank auto-created)."""
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            self._insert_operation(conn, op)

    def _insert_operation(self, conn: sqlite3.Connection, op: Operation) -> None:
        conn.execute(
            "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
            "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                op.id,
                op.bank_id,
                op.operation_type,
                op.status,
                to_json(op.payload),
                None if op.result is None else to_json(op.result),
                op.error,
                op.retry_count,
                to_iso(op.next_retry_at),
                op.mental_model_id,
                to_iso(op.created_at),
                to_iso(op.updated_at),
                to_iso(op.completed_at),
            ),
        )

    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]:
        """Queue ``op`` unless an operation of the same type for the same bank and mental model (None = bank-wide)
        is still pending; then return that one (coalescing, checked atomically). Returns ``(operation, deduplicated)``.

        Folding into a pending operation: ``full`` upgrades it to full mode, and a non-automatic request
        (``payload["automatic"]`` false) clears any park (``next_retry_at``) and the automatic flag, because
        "refresh now" means now.
        """
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id IS ? AND status = 'pending' "
                "AND operation_type = ? ORDER BY created_at LIMIT 1",
                (op.bank_id, op.mental_model_id, op.operation_type),
            ).fetchone()
            if row is not None:
                folded = fold_into_pending(operation_row(row), op, full=full)
                conn.execute(
                    "UPDATE operations SET payload = ?, next_retry_at = ?, updated_at = ? WHERE id = ?",
                    (to_json(folded.payload), to_iso(folded.next_retry_at), to_iso(utcnow()), folded.id),
                )
                return folded, True
            self._insert_operation(conn, op)
            return op, False

    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]:
        """A page of the bank's operations, newest first, and the total."""
        where, params = "", []
        if status:
            where += " AND status = ?"
            params.append(status)
        if operation_type:
            where += " AND operation_type = ?"
            params.append(operation_type)
        with self._read() as conn:
            total = conn.execute(
                f"SELECT COUNT(*) FROM operations WHERE bank_id = ?{where}", (bank_id, *params)
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT * FROM operations WHERE bank_id = ?{where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (bank_id, *params, limit, offset),
            ).fetchall()
        return [operation_row(r) for r in rows], int(total)

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """Cancel a pending operation; returns the operation as it now stands (None: unknown).

        Operations already running or finished are returned unchanged.
        """
        now = to_iso(utcnow())
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'cancelled', updated_at = ?, completed_at = ? "
                "WHERE bank_id = ? AND id = ? AND status = 'pending'",
                (now, now, bank_id, operation_id),
            )
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND id = ?", (bank_id, operation_id)
            ).fetchone()
        return None if row is None else operation_row(row)

    def find_pending_refresh(self, bank_id: str, model_id: str) -> Operation | None:
        """The model's queued (not yet running) refresh, if any."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id = ? AND status = 'pending' "
                "AND operation_type = 'refresh_mental_model' ORDER BY created_at LIMIT 1",
                (bank_id, model_id),
            ).fetchone()
        return None if row is None else operation_row(row)

    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """One operation of the bank, or None."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND id = ?", (bank_id, operation_id)
            ).fetchone()
        return None if row is None else operation_row(row)

    def claim_operation(self, worker_id: str, lease_seconds: float, *, now: datetime | None = None) -> Operation | None:
        """Claim the oldest runnable operation: pending and due (``next_retry_at`` at or before ``now``), or
        processing with an expired lease. At most one refresh per mental model runs at a time: a model with a live
        claimed refresh is skipped. ``now`` defaults to the clock (tests inject one)."""
        now = now or utcnow()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT o.id FROM operations o WHERE ((o.status = 'pending' AND (o.next_retry_at IS NULL OR "
                "o.next_retry_at <= ?)) OR (o.status = 'processing' AND o.lease_expires_at < ?)) "
                "AND (o.mental_model_id IS NULL OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
                "p.bank_id = o.bank_id AND p.mental_model_id = o.mental_model_id AND p.status = 'processing' "
                "AND p.lease_expires_at >= ? AND p.id != o.id)) ORDER BY o.created_at LIMIT 1",
                (to_iso(now), to_iso(now), to_iso(now)),
            ).fetchone()
            if row is None:
                return None
            claimed = conn.execute(
                "UPDATE operations SET status = 'processing', worker_id = ?, lease_expires_at = ?, updated_at = ? "
                "WHERE id = ? RETURNING *",
                (worker_id, to_iso(now + timedelta(seconds=lease_seconds)), to_iso(now), row[0]),
            ).fetchone()
        return operation_row(claimed)

    def finish_operation(
        self, operation_id: str, *, status: str, result: dict[str, Any] | None, error: str | None
    ) -> None:
        """Mark an operation terminal (completed / failed / cancelled) with its result or error."""
        now = to_iso(utcnow())
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = ?, result = ?, error = ?, updated_at = ?, completed_at = ?, "
                "lease_expires_at = NULL WHERE id = ?",
                (status, None if result is None else to_json(result), error, now, now, operation_id),
            )

    def defer_operation(self, operation_id: str, *, next_retry_at: datetime) -> None:
        """Park a claimed operation: back to pending, due at ``next_retry_at``, no retry counted, no error."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'pending', next_retry_at = ?, updated_at = ?, worker_id = NULL, "
                "lease_expires_at = NULL WHERE id = ?",
                (to_iso(next_retry_at), to_iso(utcnow()), operation_id),
            )

    def retry_operation(self, operation_id: str, *, next_retry_at: datetime, error: str) -> None:
        """Put a failed attempt back in the queue: pending, ``retry_count + 1``, due at ``next_retry_at``."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'pending', retry_count = retry_count + 1, next_retry_at = ?, "
                "error = ?, updated_at = ?, worker_id = NULL, lease_expires_at = NULL WHERE id = ?",
                (to_iso(next_retry_at), error, to_iso(utcnow()), operation_id),
            )

    def record_llm_request(self, record: LLMRequestRecord) -> None:
        """Store one traced LLM attempt."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO llm_requests (id, bank_id, operation_id, scope, provider, model, attempt, request, "
                "response, error, input_tokens, output_tokens, duration_ms, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.bank_id,
                    record.operation_id,
                    record.scope,
                    record.provider,
                    record.model,
                    record.attempt,
                    to_json(record.request),
                    None if record.response is None else to_json(record.response),
                    record.error,
                    record.input_tokens,
                    record.output_tokens,
                    record.duration_ms,
                    to_iso(record.created_at),
                ),
            )

    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]:
        """The traced attempts of one operation, oldest first (at most ``limit``)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM llm_requests WHERE bank_id = ? AND operation_id = ? ORDER BY created_at, id LIMIT ?",
                (bank_id, operation_id, limit),
            ).fetchall()
        return [llm_request_row(r) for r in rows]

    def purge_llm_requests(self, before: datetime) -> int:
        """Delete traced attempts created before ``before``; returns how many went."""
        with self._tx() as conn:
            return conn.execute("DELETE FROM llm_requests WHERE created_at < ?", (to_iso(before),)).rowcount
