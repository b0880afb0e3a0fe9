"""Re-embedding queries of the SQLite store: the methods are :mod:`mindbank.store.reembed` (both backends run them
alike); SQLite binds vectors as float32 bytes, needs no bank lock (``BEGIN IMMEDIATE`` makes every write
transaction the database's only writer) and drops its in-process vector index of a switched bank."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.store.reembed import ReembedQueries
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.rows import vector_blob


class ReembedMixin(SQLiteBase, ReembedQueries):
    """The ``reembed_vectors`` table and the switch."""

    def _vector_param(self, vector: npt.NDArray[np.float32]) -> Any:
        return vector_blob(vector)

    def _lock_memory_writes(self, conn: Any, bank_id: str) -> None:
        """Nothing to take: the open ``BEGIN IMMEDIATE`` transaction already excludes every other writer."""

    def _vectors_replaced(self, bank_id: str) -> None:
        """The cached index holds the old model's vectors: the next search rebuilds it (other processes see the
        bank's ``memory_version`` move)."""
        with self._index_lock:
            self._indexes.pop(bank_id, None)
