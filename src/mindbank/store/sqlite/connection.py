"""Connections, transactions and the bookkeeping every part of the SQLite store shares.

:class:`SQLiteBase` owns the single writer connection (under a process-wide lock) and the per-thread read connections,
the bank-row helpers every write path uses (``_ensure_bank``, ``_stamp_memory_write``), the cache of in-process vector
indexes (one per bank, keyed by ``banks.memory_version``) and the whole-database ``dump`` test helper. The query mixins
that make up :class:`~mindbank.store.sqlite.store.SQLiteStore` subclass it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.shared import SharedQueries
from mindbank.store.sqlite.migrate import migrate
from mindbank.store.sqlite.queries import DIALECT, Q, marks
from mindbank.store.sqlite.rows import COLUMNS, ts
from mindbank.store.sqlite.vector_index import IndexRow, VectorIndex
from mindbank.store.unit_cache import UnitCache

INDEX_CACHE_BYTES = 512 * 1024 * 1024  # vector memory the per-bank index cache keeps before evicting banks


class SQLiteBase(SharedQueries):
    """Connections, transactions, bank stamping and the vector-index cache of the SQLite store (see
    :mod:`mindbank.store.sqlite.store` for the concurrency model)."""

    def _bind_ids(self, statement: str, ids: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """``statement`` with one placeholder per id (its ``{marks}``), and the ids."""
        return statement.format(marks=marks(len(ids))), tuple(ids)

    _q = Q
    _columns = COLUMNS
    _dialect = DIALECT

    def __init__(self, path: str, *, dimension: int) -> None:
        self.path = path
        self.dimension = dimension
        self._memory = path == ":memory:"
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._indexes: OrderedDict[str, tuple[int, VectorIndex]] = OrderedDict()  # least recently used first
        self._index_lock = threading.Lock()
        self._build_locks: dict[str, threading.Lock] = {}
        self._advanced: set[str] = set()  # banks whose cached index the open write transaction advanced
        self._units = UnitCache()
        self._writer = self._connect()
        with self._write_lock:
            migrate(self._writer)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute(Q["pragma_foreign_keys"])
        conn.execute(Q["pragma_busy_timeout"])
        if not self._memory:
            conn.execute(Q["pragma_journal_wal"])
            conn.execute(Q["pragma_synchronous"])
        return conn

    def _reader(self) -> sqlite3.Connection:
        if self._memory:
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            # bounded memory: every request thread has one of these, so each keeps a small private page cache
            conn.execute(Q["pragma_reader_cache"])
        return conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        if self._memory:
            with self._write_lock:
                yield self._writer
        else:
            yield self._reader()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on the single writer connection."""
        with self._write_lock:
            conn = self._writer
            conn.execute(Q["begin"])
            try:
                yield conn
                self._check_fence(conn)  # a worker's handler commits only while it holds its claim
            except BaseException:
                conn.execute(Q["rollback"])
                self._forget_advanced()
                raise
            conn.execute(Q["commit"])
            if self._advanced:
                with self._index_lock:
                    self._advanced.clear()

    @contextmanager
    def statement_log(self) -> Iterator[list[str]]:
        """Record every SQL statement this thread's read connection runs inside the block (a test and benchmark
        seam for "how many queries does this cost")."""
        log: list[str] = []
        conn = self._reader()
        conn.set_trace_callback(log.append)
        try:
            yield log
        finally:
            conn.set_trace_callback(None)

    def close(self) -> None:
        """Close the writer connection (reader connections close with their threads)."""
        with self._write_lock:
            self._writer.close()

    def _ensure_bank(self, conn: sqlite3.Connection, bank_id: str) -> None:
        now = to_iso(utcnow())
        conn.execute(Q["ensure_bank"], (bank_id, bank_id, now, now))

    def _stamp_memory_write(self, conn: sqlite3.Connection, bank_id: str) -> tuple[str, int]:
        """Next write stamp for the bank: now, or 1 µs past the previous stamp if the clock has not moved."""
        row = conn.execute(Q["bank_stamp"], (bank_id,)).fetchone()
        now = utcnow()
        last = ts(row[0])
        if last is not None and now <= last:
            now = last + timedelta(microseconds=1)
        stamp = to_iso(now)
        assert stamp is not None  # to_iso returns None only for None
        version = int(row[1]) + 1
        conn.execute(Q["stamp_bank"], (stamp, version, stamp, bank_id))
        return stamp, version

    def _advance_index(
        self, bank_id: str, version: int, added: list[IndexRow], removed: list[str],
        restamp: tuple[Sequence[str], float] = ((), 0.0),
    ) -> None:  # fmt: skip
        """Apply this process's own write to the cached index (inside the write transaction); ``restamp``: rows
        written in place ``(ids, updated_at as POSIX seconds)``."""
        with self._index_lock:
            cached = self._indexes.get(bank_id)
            if cached is not None and cached[0] == version - 1:
                index = cached[1].without(removed).with_rows(added)
                if restamp[0]:
                    index = index.restamped(restamp[0], restamp[1])
                self._cache_index(bank_id, version, index)
            else:
                self._indexes.pop(bank_id, None)

    def _cache_index(self, bank_id: str, version: int, index: VectorIndex) -> None:
        """Swap in the index of the write in progress (caller holds ``_index_lock`` and the writer lock). It is
        cached before the commit, and until the commit readers accept it one version ahead of what they read, so a
        write of this process never sends a reader into a rebuild; a rollback drops it (:meth:`_forget_advanced`)."""
        self._store_index(bank_id, version, index)
        self._advanced.add(bank_id)

    def _forget_advanced(self) -> None:
        """Drop the cached indexes a rolled-back write transaction had advanced (they hold rows never committed)."""
        with self._index_lock:
            for bank_id in self._advanced:
                self._indexes.pop(bank_id, None)
        self._advanced.clear()

    def _index(self, bank_id: str) -> VectorIndex:
        """The bank's vector index at (or just ahead of) the committed version, rebuilt only when another process
        wrote or nothing is cached. Readers never take the writer lock: a write of this process updates the cache
        itself, and concurrent rebuilds of one bank wait for the first instead of each reading every vector."""
        with self._read() as conn:
            version = self._committed_version(conn, bank_id)
            cached = self._cached(bank_id, version)
            if cached is not None:
                return cached
            with self._index_lock:
                build_lock = self._build_locks.setdefault(bank_id, threading.Lock())
            with build_lock:
                version = self._committed_version(conn, bank_id)
                cached = self._cached(bank_id, version)
                if cached is not None:
                    return cached
                rows = [
                    IndexRow(
                        r[0],
                        np.frombuffer(r[1], dtype="<f4").astype(np.float32),
                        r[2],
                        tuple(json.loads(r[3])),
                        datetime.fromisoformat(r[4]).timestamp(),
                    )
                    for r in conn.execute(Q["index_rows"], (bank_id,))
                ]
                # the bank's own width: a bank still on its earlier model (a re-embedding to this store's model
                # not yet committed) keeps being searched with that model's vectors
                index = VectorIndex.build(len(rows[0].vector) if rows else self.dimension, rows)
                with self._index_lock:
                    current = self._indexes.get(bank_id)
                    # a write of this process may have cached a newer index meanwhile: keep it (one version ahead
                    # is that race; further ahead can only be a deleted and re-created bank, which is replaced)
                    if bank_id not in self._advanced and (current is None or not 0 < current[0] - version <= 1):
                        self._store_index(bank_id, version, index)
        return index

    @staticmethod
    def _committed_version(conn: sqlite3.Connection, bank_id: str) -> int:
        row = conn.execute(Q["bank_memory_version"], (bank_id,)).fetchone()
        return -1 if row is None else int(row[0])

    def _cached(self, bank_id: str, version: int) -> VectorIndex | None:
        """The cached index at ``version``, or one ahead while a write of this process is committing it."""
        with self._index_lock:
            cached = self._indexes.get(bank_id)
            if cached is None:
                return None
            if cached[0] == version or (cached[0] == version + 1 and bank_id in self._advanced):
                self._indexes.move_to_end(bank_id)
                return cached[1]
        return None

    def _store_index(self, bank_id: str, version: int, index: VectorIndex) -> None:
        """Cache a bank's index (caller holds ``_index_lock``), then evict the least recently used other banks'
        indexes while the cache holds more than ``INDEX_CACHE_BYTES`` of vectors: memory stays bounded however
        many banks one process serves (an evicted bank is rebuilt from the database on its next search)."""
        self._indexes[bank_id] = (version, index)
        self._indexes.move_to_end(bank_id)
        total = sum(i.nbytes for _, i in self._indexes.values())
        for other in list(self._indexes):
            if total <= INDEX_CACHE_BYTES or other == bank_id:
                break
            if other in self._advanced:
                continue
            total -= self._indexes.pop(other)[1].nbytes
            self._build_locks.pop(other, None)

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table (test helper for "a rejected request writes nothing")."""
        with self._read() as conn:
            tables = [r[0] for r in conn.execute(Q["list_tables"])]
            return {t: [tuple(r) for r in conn.execute(Q["dump_table"].format(table=t))] for t in tables}
