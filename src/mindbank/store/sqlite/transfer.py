"""Bank transfer on SQLite: the hooks :class:`~mindbank.store.transfer.TransferQueries` needs (snapshot reads on a
reader connection, embeddings as little-endian float32 blobs, ``IN (?,…)`` id lists, import start and end under the
single writer)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.store.base import AlreadyExists, ImportTarget
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import Q, marks
from mindbank.store.sqlite.rows import COLUMNS, vector_blob
from mindbank.store.transfer import TransferQueries


class TransferMixin(SQLiteBase, TransferQueries):
    """Snapshot, import and file-storage hooks of the SQLite store."""

    @contextmanager
    def _snapshot_read(self) -> Iterator[sqlite3.Connection]:
        # WAL: a read transaction sees one commit however long it lasts, beside the writer
        with self._read() as conn:
            conn.execute(Q["begin_snapshot"])
            try:
                yield conn
            finally:
                conn.execute(Q["end_snapshot"])

    def _decode_vector(self, value: Any) -> npt.NDArray[np.float32]:
        return np.frombuffer(value, dtype="<f4").astype(np.float32)

    def _encode_vector(self, vector: npt.NDArray[np.float32]) -> bytes:
        return vector_blob(vector)

    def _id_slots(self, ids: Sequence[Any]) -> tuple[dict[str, str], tuple[Any, ...]]:
        return {"marks": marks(len(ids))}, tuple(ids)

    def _import_begin(self, conn: sqlite3.Connection, target: ImportTarget) -> str | None:
        if target.create is not None:
            try:
                conn.execute(Q["import_bank"], COLUMNS.bank_import_params(target.create))
            except sqlite3.IntegrityError as exc:
                raise AlreadyExists(f"bank {target.bank_id!r} already exists") from exc
            return None
        self._ensure_bank(conn, target.bank_id)
        if not target.fresh_stamps:
            return None
        stamp, _ = self._stamp_memory_write(conn, target.bank_id)
        return stamp

    def _import_end(self, conn: sqlite3.Connection, target: ImportTarget, newest: datetime | None) -> None:
        stamp = COLUMNS.time(newest)
        conn.execute(Q["import_bank_stamp"], (stamp, stamp, target.bank_id))
        conn.execute(Q["link_preceding_bank"], (target.bank_id,))  # the lexical index's preceding texts

    def _is_conflict(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError)

    def _after_import(self, bank_id: str) -> None:
        with self._index_lock:
            self._indexes.pop(bank_id, None)
