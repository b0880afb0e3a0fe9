"""Connections, transactions and the bookkeeping every part of the PostgreSQL store shares.

:class:`PostgresBase` opens (and migrates) the database, owns the psycopg_pool pool and its per-connection setup
(UTC sessions, sorted-key JSON, pgvector adapters), the statement log test seam, the bank-row helpers every write path
uses (``_ensure_bank``, ``_lock_bank``, ``_stamp_memory_write``) and the whole-database ``dump`` test helper. The query
mixins that make up :class:`~mindbank.store.postgres.store.PostgresStore` subclass it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool

from mindbank.store.postgres.migrate import migrate
from mindbank.store.postgres.queries import DIALECT, Q
from mindbank.store.postgres.rows import COLUMNS
from mindbank.store.shared import SharedQueries
from mindbank.store.unit_cache import UnitCache


def _vector_registrar() -> Callable[[psycopg.Connection[Any]], None] | None:
    """pgvector's adapter registration when the pgvector package is installed (binary vector parameters); None
    otherwise (vectors go as text ``'[...]'`` literals)."""
    try:
        from pgvector.psycopg import register_vector
    except ImportError:  # pragma: no cover - the postgres extra installs it
        return None
    registrar: Callable[[psycopg.Connection[Any]], None] = register_vector
    return registrar


register_vector = _vector_registrar()


# the statement log of :meth:`PostgresStore.statement_log`, per thread (None = not recording)
_TRACE = threading.local()


class _TracingCursor(psycopg.Cursor[Any]):
    """Cursor that appends each statement to the current thread's statement log, when one is recording."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        log = getattr(_TRACE, "log", None)
        if log is not None:
            log.append(query if isinstance(query, str) else repr(query))
        return super().execute(query, params, **kwargs)

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        log = getattr(_TRACE, "log", None)
        if log is not None:
            log.append(query if isinstance(query, str) else repr(query))
        super().executemany(query, params_seq, **kwargs)


# one decoder for every jsonb value read (json.loads with a hook builds a new decoder per call: a tenth of a
# 1,000-model listing went there)
_SORTED_DECODER = json.JSONDecoder(object_pairs_hook=lambda pairs: dict(sorted(pairs)))


def _sorted_loads(text: str | bytes) -> Any:
    """JSON loader returning objects with sorted keys (jsonb reorders keys; SQLite stores them sorted)."""
    return _SORTED_DECODER.decode(text if isinstance(text, str) else bytes(text).decode())


def _version_tuple(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _plain(value: Any) -> Any:
    """A value that compares with ``==`` (numpy arrays and pgvector objects become lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    to_list = getattr(value, "to_list", None)
    return to_list() if callable(to_list) else value


class PostgresBase(SharedQueries):
    """Pool, transactions, statement log and bank stamping of the PostgreSQL store (see
    :mod:`mindbank.store.postgres.store` for the concurrency model)."""

    def _bind_ids(self, statement: str, ids: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """``statement`` as is, with the ids as one ``text[]`` parameter."""
        return statement, (list(ids),)

    _q = Q
    _columns = COLUMNS
    _dialect = DIALECT

    def __init__(self, url: str, *, dimension: int, min_connections: int = 1, max_connections: int = 10) -> None:
        self.url = url
        self.dimension = dimension
        self._units = UnitCache()
        self._statistics_checked = False  # whether memory_units is known to have planner statistics
        with psycopg.connect(url, autocommit=True) as conn:
            migrate(conn, dimension=dimension)
            row = conn.execute(Q["vector_version"]).fetchone()
        # iterative index scans (pgvector >= 0.8) keep filtered HNSW queries from returning fewer than k rows
        self._iterative_scan = _version_tuple(row[0] if row else None) >= (0, 8)
        self._pool = ConnectionPool(
            url,
            min_size=min_connections,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row, "cursor_factory": _TracingCursor},
            configure=self._configure,
            name="mindbank",
            open=True,
        )

    @staticmethod
    def _configure(conn: psycopg.Connection) -> None:
        """Per-connection setup, run once when the pool opens a connection."""
        conn.execute("SET TIME ZONE 'UTC'")
        set_json_loads(_sorted_loads, conn)
        if register_vector is not None:
            register_vector(conn)

    def _vector(self, value: Any) -> Any:
        """A query/insert parameter for a ``vector`` column (cast with ``::vector`` in SQL)."""
        arr = np.asarray(value, dtype=np.float32).reshape(-1)
        if register_vector is not None:
            return arr
        return "[" + ",".join(repr(float(x)) for x in arr) + "]"

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for reads (autocommit: each statement sees the latest committed data)."""
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction on a pooled connection: commits on normal exit, rolls back on an exception. Inside a
        worker's handler, the transaction ends with the claim fence (:mod:`mindbank.store.fence`)."""
        with self._pool.connection() as conn, conn.transaction():
            yield conn
            self._check_fence(conn)

    @contextmanager
    def statement_log(self) -> Iterator[list[str]]:
        """Record every SQL statement this thread runs through the store inside the block (a test and benchmark
        seam for "how many queries does this cost"; ``executemany`` counts once)."""
        previous = getattr(_TRACE, "log", None)
        log: list[str] = []
        _TRACE.log = log
        try:
            yield log
        finally:
            _TRACE.log = previous

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()

    def _ensure_bank(self, conn: psycopg.Connection[Any], bank_id: str) -> None:
        conn.execute(Q["ensure_bank"], (bank_id, bank_id))

    def _lock_bank(self, conn: psycopg.Connection[Any], bank_id: str) -> None:
        """Take the bank row lock that serialises the bank's memory writes (held until the transaction ends)."""
        conn.execute(Q["lock_bank"], (bank_id,))

    def _stamp_memory_write(self, conn: psycopg.Connection[Any], bank_id: str) -> tuple[datetime, int]:
        """Advance the bank's write stamp; the caller must hold the bank lock. Returns ``(stamp, memory_version)``."""
        row = conn.execute(Q["stamp_bank"], (bank_id, bank_id)).fetchone()
        assert row is not None
        return row["last_memory_write_at"], int(row["memory_version"])

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table (test helper for "a rejected request writes nothing").

        Vectors come back as plain lists so dumps compare with ``==``.
        """
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self._read() as conn, conn.cursor(row_factory=tuple_row) as cur:
            tables = [r[0] for r in cur.execute(Q["list_tables"]).fetchall()]
            for table in tables:
                rows = cur.execute(sql.SQL("SELECT * FROM {} ORDER BY 1").format(sql.Identifier(table))).fetchall()
                out[table] = [tuple(_plain(v) for v in r) for r in rows]
        return out
