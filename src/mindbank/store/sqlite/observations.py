"""Observation deletes and a bank's memory clear on SQLite (memory writes: the bank's stamp and this process's
vector index); the reads are :class:`~mindbank.store.observations.ObservationQueries`."""

from __future__ import annotations

from mindbank.store.observations import ObservationQueries
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import Q


class ObservationsMixin(SQLiteBase, ObservationQueries):
    """``delete_observations`` (all of a bank's, or those drawn from one memory) and ``clear_memories``."""

    def delete_observations(self, bank_id: str, *, derived_from: str | None = None) -> int:
        """Delete every observation of the bank, or (``derived_from``) those built from that memory, and send their
        source facts back to consolidation (with ``derived_from``, that memory too, even when nothing was built from
        it). A memory write when anything went: models citing a deleted observation go stale. Returns how many
        observations were deleted."""
        with self._tx() as conn:
            if derived_from is None:
                removed = [r[0] for r in conn.execute(Q["delete_all_observations"], (bank_id,)).fetchall()]
                if removed:
                    conn.execute(Q["unconsolidate_all_facts"], (bank_id,))
            else:
                conn.execute(Q["unconsolidate_derived_sources"], (bank_id, derived_from, bank_id, derived_from))
                removed = [
                    r[0] for r in conn.execute(Q["delete_derived_observations"], (bank_id, derived_from)).fetchall()
                ]
            if removed:
                _, version = self._stamp_memory_write(conn, bank_id)
                self._advance_index(bank_id, version, [], removed)
        return len(removed)

    def clear_memories(self, bank_id: str, fact_type: str | None = None) -> int:
        """Delete the bank's memories of ``fact_type`` (None: every memory, and the documents they came from, with
        their chunks and history). Observations built from deleted facts keep them as sources until consolidation
        detaches them. A memory write when anything went. Returns how many memories were deleted."""
        with self._tx() as conn:
            count = self._delete_memories(conn, bank_id, fact_type)
            if count:
                self._stamp_memory_write(conn, bank_id)
                with self._index_lock:  # rebuilt on the next search
                    self._indexes.pop(bank_id, None)
        return count
