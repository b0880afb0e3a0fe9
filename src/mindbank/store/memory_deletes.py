"""Memory deletes both backends run alike: one memory, a bank's observations (all, or those built from one memory),
a bank's memories (all, or of one fact type).

Each is one write transaction of the backend's named statements (the same keys in both ``Q``); what differs is behind
three hooks each backend supplies: the lock every memory writer of a bank takes first (:meth:`_lock_for_delete`:
PostgreSQL's bank row lock; nothing on SQLite, whose ``BEGIN IMMEDIATE`` transaction already excludes every other
writer) and what a process caches of the bank's vectors (:meth:`_vectors_deleted`, :meth:`_vectors_cleared`:
SQLite's in-process vector index; PostgreSQL searches its own index in SQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.timeutil import utcnow
from mindbank.store.resources import ResourceQueries


class MemoryDeletes(ResourceQueries):
    """``delete_memory``, ``delete_observations`` and ``clear_memories`` (see the module docstring); a deleted
    fact's document history comes from :class:`~mindbank.store.resources.ResourceQueries`."""

    # ---------------------------------------------------------------- supplied by the backend

    def _lock_for_delete(self, conn: Any, bank_id: str) -> bool:
        """Take the lock the bank's memory writers take first, for the open transaction; False when that shows the
        bank does not exist (the backend's)."""
        raise NotImplementedError

    def _stamp_memory_write(self, conn: Any, bank_id: str) -> tuple[Any, int]:
        """Advance the bank's write stamp in the open transaction: ``(stamp, memory_version)`` (the backend's)."""
        raise NotImplementedError

    def _vectors_deleted(self, bank_id: str, version: int, ids: Sequence[str]) -> None:
        """The memories ``ids`` left the bank in the write that moved it to ``version`` (the backend's: nothing to
        do where vectors are searched in SQL)."""

    def _vectors_cleared(self, bank_id: str) -> None:
        """Many of the bank's memories left it at once (the backend's: nothing to do where vectors are searched in
        SQL)."""

    # ---------------------------------------------------------------- the deletes

    def delete_memory(self, bank_id: str, memory_id: str) -> bool:
        """Delete one memory from every index; a deletion is a memory write (it advances the bank's stamp). False
        when the bank or the memory does not exist."""
        with self._tx() as conn:
            if not self._lock_for_delete(conn, bank_id):
                return False
            self._record_fact_event(conn, bank_id, memory_id, "fact_deleted", self._columns.time(utcnow()))
            if conn.execute(self._q["delete_memory"], (bank_id, memory_id)).rowcount == 0:
                return False  # no such memory: the event statement found none either
            _, version = self._stamp_memory_write(conn, bank_id)
            self._vectors_deleted(bank_id, version, [memory_id])
        return True

    def delete_observations(self, bank_id: str, *, derived_from: str | None = None) -> int:
        """Delete every observation of the bank, or (``derived_from``) those built from that memory, and send their
        source facts back to consolidation (with ``derived_from``, that memory too, even when nothing was built from
        it). A memory write when anything went: models citing a deleted observation go stale. Returns how many
        observations were deleted (0 for an unknown bank)."""
        with self._tx() as conn:
            if not self._lock_for_delete(conn, bank_id):
                return 0
            if derived_from is None:
                removed = [r["id"] for r in conn.execute(self._q["delete_all_observations"], (bank_id,)).fetchall()]
                if removed:
                    conn.execute(self._q["unconsolidate_all_facts"], (bank_id,))
            else:
                conn.execute(self._q["unconsolidate_derived_sources"], (bank_id, derived_from, bank_id, derived_from))
                deleted = conn.execute(self._q["delete_derived_observations"], (bank_id, derived_from)).fetchall()
                removed = [r["id"] for r in deleted]
            if removed:
                _, version = self._stamp_memory_write(conn, bank_id)
                self._vectors_deleted(bank_id, version, removed)
        return len(removed)

    def clear_memories(self, bank_id: str, fact_type: str | None = None) -> int:
        """Delete the bank's memories of ``fact_type`` (None: every memory, and the documents they came from, with
        their chunks and history). Observations built from deleted facts keep them as sources until consolidation
        detaches them. A memory write when anything went. Returns how many memories were deleted (0 for an unknown
        bank)."""
        with self._tx() as conn:
            if not self._lock_for_delete(conn, bank_id):
                return 0
            if fact_type is None:
                count = int(conn.execute(self._q["clear_memories"], (bank_id,)).rowcount)
                conn.execute(self._q["clear_documents"], (bank_id,))
            else:
                count = int(conn.execute(self._q["clear_memories_of_type"], (bank_id, fact_type)).rowcount)
            if count:
                self._stamp_memory_write(conn, bank_id)
                self._vectors_cleared(bank_id)
        return count
