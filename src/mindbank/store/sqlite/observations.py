"""Memory deletes on SQLite: the methods are :mod:`mindbank.store.memory_deletes` (both backends run them alike);
SQLite needs no bank lock (``BEGIN IMMEDIATE`` makes every write transaction the database's only writer) and keeps
this process's vector index in step. The observation reads are
:class:`~mindbank.store.observations.ObservationQueries`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.store.memory_deletes import MemoryDeletes
from mindbank.store.observations import ObservationQueries
from mindbank.store.sqlite.connection import SQLiteBase


class ObservationsMixin(SQLiteBase, MemoryDeletes, ObservationQueries):
    """``delete_memory``, ``delete_observations`` (all of a bank's, or those drawn from one memory) and
    ``clear_memories``, with SQLite's hooks."""

    def _lock_for_delete(self, conn: Any, bank_id: str) -> bool:
        """Nothing to take: the open ``BEGIN IMMEDIATE`` transaction already excludes every other writer (an
        unknown bank's statements find nothing to delete)."""
        return True

    def _vectors_deleted(self, bank_id: str, version: int, ids: Sequence[str]) -> None:
        """Mask the deleted rows out of the bank's cached index (rebuilt instead if another process wrote)."""
        self._advance_index(bank_id, version, [], list(ids))

    def _vectors_cleared(self, bank_id: str) -> None:
        """Drop the bank's cached index: the next search rebuilds it."""
        with self._index_lock:
            self._indexes.pop(bank_id, None)
