"""Store methods that both backends run the same way: one named statement, rows mapped by the backend's columns.

Each backend keys its SQL alike (``store/sqlite/queries.py``, ``store/postgres/queries.py``) and maps rows through
one :class:`~mindbank.store.columns.Columns`, so a method that is "run ``Q[name]``, map the rows" is written once
here. :class:`SharedQueries` is the root of both backends' ``…Base`` classes, which supply the statements
(``_q``), the row mapping (``_columns``) and the connection handling (``_read``, ``_tx``, ``_ensure_bank``).
A method whose SQL or locking differs between the backends stays in the backend's own mixin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar

from mindbank.domain.records import Bank, HistoryEntry, LLMRequestRecord, MemoryUnit, MentalModel, Operation
from mindbank.domain.scope import MemoryFilter
from mindbank.store.base import StalenessProbe
from mindbank.store.columns import Columns


def oldest_since(probes: Sequence[StalenessProbe]) -> dict[MemoryFilter, datetime]:
    """The distinct scopes of a page of staleness probes (first appearance first), each with the oldest ``since``
    among its probes: one scope lookup bounded below by that watermark serves every probe of the scope. Probes
    without a watermark (never refreshed) need no lookup and are left out."""
    oldest: dict[MemoryFilter, datetime] = {}
    for p in probes:
        if p.since is not None:
            oldest[p.scope] = p.since if p.scope not in oldest else min(oldest[p.scope], p.since)
    return oldest


class SharedQueries:
    """The backend-neutral half of a store; see the module docstring."""

    _q: ClassVar[Mapping[str, str]]
    _columns: ClassVar[Columns]

    # ---------------------------------------------------------------- supplied by the backend

    def _read(self) -> AbstractContextManager[Any]:
        """A connection for reads (the backend's)."""
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[Any]:
        """A connection inside one write transaction (the backend's)."""
        raise NotImplementedError

    def _ensure_bank(self, conn: Any, bank_id: str) -> None:
        """Create the bank in the open transaction if it does not exist (the backend's)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- banks

    def ensure_bank(self, bank_id: str) -> None:
        """Create the bank if it does not exist."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)

    def bank_exists(self, bank_id: str) -> bool:
        """Whether the bank exists."""
        with self._read() as conn:
            return conn.execute(self._q["bank_exists"], (bank_id,)).fetchone() is not None

    def get_bank(self, bank_id: str) -> Bank | None:
        """The bank's profile and bookkeeping, or None."""
        with self._read() as conn:
            row = conn.execute(self._q["get_bank"], (bank_id,)).fetchone()
        return None if row is None else self._columns.bank_row(row)

    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count, ordered by id."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_banks"]).fetchall()
        return [(self._columns.bank_row(r), int(r["n"])) for r in rows]

    # ---------------------------------------------------------------- consolidation reads

    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]:
        """Facts (world/experience) not yet consolidated, oldest first."""
        with self._read() as conn:
            rows = conn.execute(self._q["unconsolidated_facts"], (bank_id, limit)).fetchall()
        return [self._columns.memory_row(r) for r in rows]

    def list_observations(self, bank_id: str) -> list[MemoryUnit]:
        """Every observation of the bank, oldest first."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_observations"], (bank_id,)).fetchall()
        return [self._columns.memory_row(r) for r in rows]

    # ---------------------------------------------------------------- mental models

    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None:
        """One model, or None."""
        with self._read() as conn:
            row = conn.execute(self._q["get_mental_model"], (bank_id, model_id)).fetchone()
        return None if row is None else self._columns.model_row(row)

    def delete_mental_model(self, bank_id: str, model_id: str) -> bool:
        """Delete a model with its history and citations; False if it did not exist."""
        with self._tx() as conn:
            return int(conn.execute(self._q["delete_mental_model"], (bank_id, model_id)).rowcount) > 0

    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]:
        """History rows of a model, most recent first."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_history"], (bank_id, model_id)).fetchall()
        return [self._columns.history_row(r) for r in rows]

    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]:
        """Every mental model (of ``bank_id``, or of all banks) whose trigger has a truthy ``key``."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_models_with_trigger"], (key, key, bank_id, bank_id)).fetchall()
        return [self._columns.model_row(r) for r in rows]

    # ---------------------------------------------------------------- operations and LLM tracing

    def submit_operation(self, op: Operation, *, ensure_bank: bool = True) -> None:
        """Insert a new operation (bank auto-created unless ``ensure_bank`` is false: a restore records its
        operation against the bank it is about to create)."""
        with self._tx() as conn:
            if ensure_bank:
                self._ensure_bank(conn, op.bank_id)
            conn.execute(self._q["insert_operation"], self._columns.operation_params(op))

    def find_pending_refresh(self, bank_id: str, model_id: str) -> Operation | None:
        """The model's queued (not yet running) refresh, if any."""
        with self._read() as conn:
            row = conn.execute(self._q["find_pending_refresh"], (bank_id, model_id)).fetchone()
        return None if row is None else self._columns.operation_row(row)

    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """One operation of the bank, or None."""
        with self._read() as conn:
            row = conn.execute(self._q["get_operation"], (bank_id, operation_id)).fetchone()
        return None if row is None else self._columns.operation_row(row)

    def record_llm_request(self, record: LLMRequestRecord) -> None:
        """Store one traced LLM attempt."""
        with self._tx() as conn:
            conn.execute(self._q["insert_llm_request"], self._columns.llm_request_params(record))

    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]:
        """The traced attempts of one operation, oldest first (at most ``limit``)."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_llm_requests"], (bank_id, operation_id, limit)).fetchall()
        return [self._columns.llm_request_row(r) for r in rows]

    def purge_llm_requests(self, before: datetime) -> int:
        """Delete traced attempts created before ``before``; returns how many went."""
        with self._tx() as conn:
            return int(conn.execute(self._q["purge_llm_requests"], (self._columns.time(before),)).rowcount)
