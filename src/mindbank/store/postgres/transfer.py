"""Bank transfer on PostgreSQL: the hooks :class:`~mindbank.store.transfer.TransferQueries` needs (a REPEATABLE READ
read-only snapshot, pgvector embeddings, ids bound as one array, import start and end under the bank lock)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from mindbank.store.base import AlreadyExists, ImportTarget
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q
from mindbank.store.postgres.rows import COLUMNS, as_vector
from mindbank.store.transfer import TransferQueries


class TransferMixin(PostgresBase, TransferQueries):
    """Snapshot, import and file-storage hooks of the PostgreSQL store."""

    @contextmanager
    def _snapshot_read(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute(Q["set_snapshot"])
            yield conn

    def _decode_vector(self, value: Any) -> npt.NDArray[np.float32]:
        return as_vector(value)

    def _encode_vector(self, vector: npt.NDArray[np.float32]) -> Any:
        return self._vector(vector)

    def _id_slots(self, ids: Sequence[Any]) -> tuple[dict[str, str], tuple[Any, ...]]:
        return {}, (list(ids),)

    def _import_begin(self, conn: psycopg.Connection[Any], target: ImportTarget) -> datetime | None:
        if target.create is not None:
            try:
                with conn.transaction():  # a savepoint: the refusal is reported, the outer transaction rolls back
                    conn.execute(Q["import_bank"], COLUMNS.bank_import_params(target.create))
            except psycopg.errors.UniqueViolation as exc:
                raise AlreadyExists(f"bank {target.bank_id!r} already exists") from exc
            return None
        self._ensure_bank(conn, target.bank_id)
        self._lock_bank(conn, target.bank_id)
        if not target.fresh_stamps:
            return None
        stamp, _ = self._stamp_memory_write(conn, target.bank_id)
        return stamp

    def _import_end(self, conn: psycopg.Connection[Any], target: ImportTarget, newest: datetime | None) -> None:
        conn.execute(Q["import_bank_stamp"], (newest, newest, target.bank_id))
        conn.execute(Q["link_preceding_bank"], (target.bank_id,))  # the lexical index's preceding texts

    def _is_conflict(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.IntegrityError)
