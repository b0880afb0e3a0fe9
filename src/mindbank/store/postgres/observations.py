"""Memory deletes on PostgreSQL: the methods are :mod:`mindbank.store.memory_deletes` (both backends run them alike);
PostgreSQL takes the bank's row lock first, the lock every memory writer takes, so deletes are stamped in order. The
observation reads are :class:`~mindbank.store.observations.ObservationQueries`."""

from __future__ import annotations

from typing import Any

from mindbank.store.memory_deletes import MemoryDeletes
from mindbank.store.observations import ObservationQueries
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q


class ObservationsMixin(PostgresBase, MemoryDeletes, ObservationQueries):
    """``delete_memory``, ``delete_observations`` (all of a bank's, or those drawn from one memory) and
    ``clear_memories``, with PostgreSQL's bank lock."""

    def _lock_for_delete(self, conn: Any, bank_id: str) -> bool:
        """The bank's row lock (held until the transaction ends); False when the bank has no row."""
        return conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is not None
