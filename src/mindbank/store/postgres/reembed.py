"""Re-embedding queries of the PostgreSQL store: the methods are :mod:`mindbank.store.reembed` (both backends run
them alike); PostgreSQL binds vectors as pgvector values and takes the bank's row lock for the switch, the lock every
memory writer takes first, so no write of the old model commits between the check and the swap. The embedding
column holds any width, so the switch may move the bank to a model of another width (migration 0099): the same
transaction creates that width's HNSW index if no bank had it yet (DDL is transactional in PostgreSQL: a kill
before the commit leaves neither the new vectors nor the index)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import ensure_embedding_index
from mindbank.store.reembed import ReembedQueries


class ReembedMixin(PostgresBase, ReembedQueries):
    """The ``reembed_vectors`` table and the switch."""

    def _vector_param(self, vector: npt.NDArray[np.float32]) -> Any:
        return self._vector(vector)

    def _lock_memory_writes(self, conn: Any, bank_id: str) -> None:
        self._lock_bank(conn, bank_id)

    def _index_width(self, conn: Any, dimension: int) -> None:
        """The width's HNSW index, created in the switch's transaction when no bank had that width before (taken
        after the bank lock, the order every writer follows: bank, then rows)."""
        ensure_embedding_index(conn, dimension)
