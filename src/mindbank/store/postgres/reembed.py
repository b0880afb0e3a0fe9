"""Re-embedding queries of the PostgreSQL store: the methods are :mod:`mindbank.store.reembed` (both backends run
them alike); PostgreSQL binds vectors as pgvector values and takes the bank's row lock for the switch, the lock every
memory writer takes first, so no write of the old model commits between the check and the swap."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.reembed import ReembedQueries


class ReembedMixin(PostgresBase, ReembedQueries):
    """The ``reembed_vectors`` table and the switch."""

    def _vector_param(self, vector: npt.NDArray[np.float32]) -> Any:
        return self._vector(vector)

    def _lock_memory_writes(self, conn: Any, bank_id: str) -> None:
        self._lock_bank(conn, bank_id)
