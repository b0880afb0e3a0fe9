"""The operation queue of the PostgreSQL store (submit, coalesce under an advisory lock, claim with ``FOR UPDATE
SKIP LOCKED``, finish, park, retry, cancel, list). Submitting, lookups and the LLM request trace are the same on
both backends: :mod:`mindbank.store.shared`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from mindbank.domain.records import Operation
from mindbank.store.base import CONSOLIDATION_WAIT_SECONDS, Lane, fold_into_pending
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q
from mindbank.store.postgres.rows import COLUMNS, jsonb

_CLAIM_ATTEMPTS = 8  # unique-violation retries of claim_operation (each loser sees the winner's commit next time)


class OperationsMixin(PostgresBase):
    """The ``operations`` and ``llm_requests`` tables."""

    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]:
        """Queue ``op`` unless an operation of the same type for the same bank and mental model (None = bank-wide)
        is still pending; then return that one (coalescing, checked atomically). Returns ``(operation, deduplicated)``.

        Folding into a pending operation: ``full`` upgrades it to full mode, and a non-automatic request
        (``payload["automatic"]`` false) clears any park (``next_retry_at``) and the automatic flag, because
        "refresh now" means now. An advisory lock on (bank, model, type) makes the check-then-insert atomic across
        processes.
        """
        key = f"coalesce\x1f{op.bank_id}\x1f{op.mental_model_id or ''}\x1f{op.operation_type}"
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            conn.execute(Q["lock_coalesce_key"], (key,))
            row = conn.execute(
                Q["find_pending_coalesced"], (op.bank_id, op.mental_model_id, op.operation_type)
            ).fetchone()
            if row is not None:
                folded = fold_into_pending(COLUMNS.operation_row(row), op, full=full)
                conn.execute(Q["coalesce_operation"], (Jsonb(folded.payload), folded.next_retry_at, folded.id))
                return folded, True
            conn.execute(Q["insert_operation"], COLUMNS.operation_params(op))
            return op, False

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """Cancel a pending operation; returns the operation as it now stands (None: unknown).

        Operations already running or finished are returned unchanged.
        """
        with self._tx() as conn:
            conn.execute(Q["cancel_operation"], (bank_id, operation_id))
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
        ``now``), or processing with an expired lease; ``now`` defaults to the database clock (workers and tests
        pass theirs). Fair order: banks with fewer live claims first, then operation types with fewer live claims,
        then the time the row became runnable; ``lane``: ``deliveries`` (webhook deliveries only), ``work`` (all but
        them), None (any).

        One statement with ``FOR UPDATE SKIP LOCKED``, so concurrent workers never claim the same row and never wait
        on each other's candidates. At most one operation per mental model runs at a time: a model with a row in
        ``processing`` is skipped unless that row is the expired one being reclaimed, and so is a consolidation of a
        bank with one in ``processing``. A pending refresh waits for its bank's consolidation (and queued retain)
        queued before it was asked for, at most ``consolidation_wait_seconds`` past that moment (the rule:
        ``operation_queries.py``).
        Raises ``RuntimeError`` only if that race is lost repeatedly (not expected in practice).
        """
        for _ in range(_CLAIM_ATTEMPTS):
            params = {
                "now": now,
                "worker": worker_id,
                "token": uuid.uuid4().hex,
                "lease": float(lease_seconds),
                "lane": lane,
                "wait": float(consolidation_wait_seconds),
            }
            try:
                with self._tx() as conn:
                    row = conn.execute(Q["claim_operation"], params).fetchone()
            except psycopg.errors.UniqueViolation:
                # another worker committed a claim for the same mental model (or the bank's consolidation) first;
                # the next attempt sees it
                continue
            return None if row is None else COLUMNS.operation_row(row)
        raise RuntimeError("claim_operation kept losing the per-model race; giving up this round")

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
        with self._tx() as conn:
            cur = conn.execute(Q["finish_operation"], (status, jsonb(result), error, operation_id, token, token))
            return cur.rowcount == 1

    def defer_operation(self, operation_id: str, *, next_retry_at: datetime, token: str | None = None) -> bool:
        """Park a claimed operation: back to pending, due at ``next_retry_at``, no retry counted, no error, its
        progress kept. With ``token`` only while that claim still holds it; returns whether the row changed."""
        with self._tx() as conn:
            return conn.execute(Q["defer_operation"], (next_retry_at, operation_id, token, token)).rowcount == 1

    def retry_operation(
        self, operation_id: str, *, next_retry_at: datetime, error: str, token: str | None = None
    ) -> bool:
        """Put a failed attempt back in the queue: pending, ``retry_count + 1``, due at ``next_retry_at``. With
        ``token`` only while that claim still holds it; returns whether the row changed."""
        with self._tx() as conn:
            cur = conn.execute(Q["retry_operation"], (next_retry_at, error, operation_id, token, token))
            return cur.rowcount == 1
