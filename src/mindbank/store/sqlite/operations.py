"""The operation queue of the SQLite store (coalesce, claim with a lease, finish, park, retry, cancel, list).
Submitting, lookups and the LLM request trace are the same on both backends: :mod:`mindbank.store.shared`."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.base import CONSOLIDATION_WAIT_SECONDS, Lane, fold_into_pending
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import Q
from mindbank.store.sqlite.rows import COLUMNS, to_json


class OperationsMixin(SQLiteBase):
    """The ``operations`` and ``llm_requests`` tables."""

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
                Q["find_pending_coalesced"], (op.bank_id, op.mental_model_id, op.operation_type)
            ).fetchone()
            if row is not None:
                folded = fold_into_pending(COLUMNS.operation_row(row), op, full=full)
                conn.execute(
                    Q["coalesce_operation"],
                    (to_json(folded.payload), to_iso(folded.next_retry_at), to_iso(utcnow()), folded.id),
                )
                return folded, True
            conn.execute(Q["insert_operation"], COLUMNS.operation_params(op))
            return op, False

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """Cancel a pending operation; returns the operation as it now stands (None: unknown).

        Operations already running or finished are returned unchanged.
        """
        now = to_iso(utcnow())
        with self._tx() as conn:
            conn.execute(Q["cancel_operation"], (now, now, bank_id, operation_id))
            row = conn.execute(Q["get_operation"], (bank_id, operation_id)).fetchone()
        return None if row is None else COLUMNS.operation_row(row)

    def claim_operation(
        self,
        worker_id: str,
        lease_seconds: float,
        *,
        now: datetime | None = None,
        lane: Lane | None = None,
        consolidation_wait_seconds: float = CONSOLIDATION_WAIT_SECONDS,
    ) -> Operation | None:
        """Claim a runnable operation under a fresh claim token: pending and due (``next_retry_at`` at or before
        ``now``), or processing with an expired lease. At most one refresh per mental model and one consolidation per
        bank run at a time: a model with a live claimed refresh, or a bank with a live claimed consolidation, is
        skipped. A pending refresh waits for its bank's consolidation (and queued retain) queued before it was asked
        for, at most ``consolidation_wait_seconds`` past that moment (the rule: ``operation_queries.py``). Fair
        order: banks with fewer live claims first, then operation types with fewer live claims, then the time the
        row became runnable. ``now`` defaults to the clock (tests inject one); ``lane``: ``deliveries`` (webhook
        deliveries only), ``work`` (all but them), None (any)."""
        now = now or utcnow()
        wait_from = to_iso(now - timedelta(seconds=consolidation_wait_seconds))
        with self._tx() as conn:
            row = conn.execute(
                Q["claim_candidate"], {"now": to_iso(now), "lane": lane, "wait_from": wait_from}
            ).fetchone()
            if row is None:
                return None
            claimed = conn.execute(
                Q["claim_operation"],
                (worker_id, uuid.uuid4().hex, to_iso(now + timedelta(seconds=lease_seconds)), to_iso(now), row[0]),
            ).fetchone()
        return COLUMNS.operation_row(claimed)

    def finish_operation(
        self,
        operation_id: str,
        *,
        status: str,
        result: dict[str, Any] | None,
        error: str | None,
        token: str | None = None,
    ) -> bool:
        """Mark an operation terminal (completed / failed / cancelled) with its result or error. With ``token``
        only while that claim still holds it; returns whether the row changed."""
        now = to_iso(utcnow())
        with self._tx() as conn:
            cur = conn.execute(
                Q["finish_operation"],
                (status, None if result is None else to_json(result), error, now, now, operation_id, token, token),
            )
            return cur.rowcount == 1

    def defer_operation(self, operation_id: str, *, next_retry_at: datetime, token: str | None = None) -> bool:
        """Park a claimed operation: back to pending, due at ``next_retry_at``, no retry counted, no error, its
        progress kept. With ``token`` only while that claim still holds it; returns whether the row changed."""
        with self._tx() as conn:
            cur = conn.execute(
                Q["defer_operation"], (to_iso(next_retry_at), to_iso(utcnow()), operation_id, token, token)
            )
            return cur.rowcount == 1

    def retry_operation(
        self, operation_id: str, *, next_retry_at: datetime, error: str, token: str | None = None
    ) -> bool:
        """Put a failed attempt back in the queue: pending, ``retry_count + 1``, due at ``next_retry_at``. With
        ``token`` only while that claim still holds it; returns whether the row changed."""
        with self._tx() as conn:
            cur = conn.execute(
                Q["retry_operation"], (to_iso(next_retry_at), error, to_iso(utcnow()), operation_id, token, token)
            )
            return cur.rowcount == 1
