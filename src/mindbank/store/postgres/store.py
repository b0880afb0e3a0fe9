"""PostgreSQL (+pgvector) implementation of the Store port: same method names and semantics as ``SQLiteStore``.

Concurrency model: any number of processes share the database. Connections come from a psycopg_pool pool in
autocommit mode; every write runs in one explicit transaction.

* Memory write stamps: a memory write locks its bank row (``SELECT ... FOR NO KEY UPDATE``) before anything else and
  stamps ``GREATEST(clock_timestamp(), last_memory_write_at + 1 µs)``. Writers of one bank are therefore serialised
  and stamp in commit order, so once a refresh has read a watermark W no row stamped at or below W can still
  commit (invariant 3 of DESIGN.md), whichever process wrote it. Every write path takes the bank lock first, so
  lock order is always bank → rows (no deadlocks between writers).
* Vector search is pgvector's HNSW index (approximate; ``hnsw.ef_search`` raised per query, iterative scans for
  filtered queries — every query is filtered by ``bank_id`` at least). Results are re-sorted by exact score.
* Keyword search is a generated ``tsvector`` column + GIN, ranked with ``ts_rank_cd``.
* The operation queue is claimed with ``FOR UPDATE SKIP LOCKED``; a partial unique index keeps at most one running
  operation per mental model.

Times are aware UTC datetimes (sessions run with ``TimeZone=UTC``); JSON documents come back with their keys
sorted, exactly as the SQLite store returns them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import Jsonb, set_json_loads
from psycopg_pool import ConnectionPool

from mindbank.domain.records import (
    Bank,
    HistoryEntry,
    LLMRequestRecord,
    MemorySource,
    MemoryUnit,
    MentalModel,
    NewMemory,
    Operation,
)
from mindbank.domain.tags import TagsMatch
from mindbank.store.base import (
    AlreadyExists,
    DocumentWrite,
    MemoryFilter,
    StalenessProbe,
    cited_ids,
    decide_staleness,
    fold_into_pending,
    mental_model_columns,
    moved_out,
)
from mindbank.store.postgres.migrate import embedding_dimension, migrate
from mindbank.store.postgres.queries import (
    HISTORY_KIND,
    Q,
    filter_sql,
    like_pattern,
    substring_pattern,
    tsquery,
)

try:  # binary vector parameters when the pgvector package is installed; text '[...]' literals otherwise
    from pgvector.psycopg import register_vector
except ImportError:  # pragma: no cover - the postgres extra installs it
    register_vector = None

_CLAIM_ATTEMPTS = 8  # unique-violation retries of claim_operation (each loser sees the winner's commit next time)
_MAX_SCOPES_PER_STATEMENT = 4000  # keeps a stale_flags statement far below PostgreSQL's 65535 bind parameters
_EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search


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


def _sorted_loads(text: str | bytes) -> Any:
    """JSON loader returning objects with sorted keys (jsonb reorders keys; SQLite stores them sorted)."""
    return json.loads(text, object_pairs_hook=lambda pairs: dict(sorted(pairs)))


def _jsonb(value: Any) -> Jsonb | None:
    return None if value is None else Jsonb(value)


def _tags(values: Sequence[str]) -> list[str]:
    return sorted(set(values))


def _version_tuple(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    return tuple(int(p) for p in text.split(".") if p.isdigit())


class PostgresStore:
    """The scale-out store over one PostgreSQL database with the ``vector`` extension.

    ``url`` is a libpq URL (``postgresql://user@host:port/db``); ``dimension`` is the embedding width, fixed when the
    schema is first created. Opening migrates the schema (forward-only, safe when several processes open at once).
    Raises ``psycopg.OperationalError`` if the database is unreachable and ``ValueError`` if the database was created
    for another embedding dimension.
    """

    def __init__(self, url: str, *, dimension: int, min_connections: int = 1, max_connections: int = 10) -> None:
        self.url = url
        self.dimension = dimension
        with psycopg.connect(url, autocommit=True) as conn:
            migrate(conn, dimension=dimension)
            found = embedding_dimension(conn)
            if found != dimension:
                raise ValueError(
                    f"database {conn.info.dbname!r} stores {found}-dimensional embeddings; "
                    f"this store was opened for {dimension} (use a separate database per embedding model)"
                )
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

    # ------------------------------------------------------------------ connections
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
    def _read(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection for reads (autocommit: each statement sees the latest committed data)."""
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """One transaction on a pooled connection: commits on normal exit, rolls back on an exception."""
        with self._pool.connection() as conn, conn.transaction():
            yield conn

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

    def db_now(self) -> datetime:
        """The database clock (``clock_timestamp()``): the one clock every process sharing the database agrees on."""
        with self._read() as conn:
            row = conn.execute(Q["db_now"]).fetchone()
        assert row is not None
        return row["clock_timestamp"]  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ banks
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

    def ensure_bank(self, bank_id: str) -> None:
        """Create the bank if it does not exist."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)

    def bank_exists(self, bank_id: str) -> bool:
        """Whether the bank exists."""
        with self._read() as conn:
            return conn.execute(Q["bank_exists"], (bank_id,)).fetchone() is not None

    def get_bank(self, bank_id: str) -> Bank | None:
        """The bank's profile and bookkeeping, or None."""
        with self._read() as conn:
            row = conn.execute(Q["get_bank"], (bank_id,)).fetchone()
        return None if row is None else _bank(row)

    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count, ordered by id."""
        with self._read() as conn:
            rows = conn.execute(Q["list_banks"]).fetchall()
        return [(_bank(r), int(r["n"])) for r in rows]

    def upsert_bank(
        self, bank_id: str, *, name: str | None, mission: str | None, disposition: dict[str, int] | None
    ) -> Bank:
        """Create the bank or update the given profile fields (None = keep); returns the bank."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            row = conn.execute(Q["upsert_bank"], (name, mission, _jsonb(disposition), bank_id)).fetchone()
        assert row is not None
        return _bank(row)

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> dict[str, Any]:
        """Merge ``updates`` into the bank's config overrides (a None value removes a key); returns the result.

        The row is locked while merging so concurrent updates from other processes are not lost.
        Raises ``LookupError`` for an unknown bank.
        """
        with self._tx() as conn:
            row = conn.execute(Q["lock_bank_config"], (bank_id,)).fetchone()
            if row is None:
                raise LookupError(bank_id)
            config = {**row["config"], **updates}
            config = {k: v for k, v in config.items() if v is not None}
            conn.execute(Q["set_bank_config"], (Jsonb(config), bank_id))
        return dict(sorted(config.items()))

    def delete_bank(self, bank_id: str) -> int:
        """Delete the bank and everything in it atomically; returns the number of memories removed (-1: no bank)."""
        with self._tx() as conn:
            # the bank lock first, like every memory write: no writer can add rows between the count and the delete
            if conn.execute(Q["lock_bank_for_delete"], (bank_id,)).fetchone() is None:
                return -1
            row = conn.execute(Q["count_bank_memories"], (bank_id,)).fetchone()
            conn.execute(Q["delete_bank_operations"], (bank_id,))
            conn.execute(Q["delete_bank"], (bank_id,))
        return int(row["count"]) if row else 0

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live counts: memories by fact type, documents, operations by status, pending consolidation, last write."""
        with self._read() as conn, conn.cursor(row_factory=tuple_row) as cur:
            by_type = {r[0]: int(r[1]) for r in cur.execute(Q["stats_by_type"], (bank_id,)).fetchall()}
            by_status = {r[0]: int(r[1]) for r in cur.execute(Q["stats_by_status"], (bank_id,)).fetchall()}
            documents = cur.execute(Q["stats_documents"], (bank_id,)).fetchone()
            pending = cur.execute(Q["stats_pending_consolidation"], (bank_id,)).fetchone()
            consolidated = cur.execute(Q["stats_last_consolidated"], (bank_id,)).fetchone()
            last = cur.execute(Q["bank_last_write"], (bank_id,)).fetchone()
        return {
            "nodes_by_fact_type": by_type,
            "total_nodes": sum(by_type.values()),
            "total_documents": int(documents[0]) if documents else 0,
            "operations_by_status": by_status,
            "pending_consolidation": int(pending[0]) if pending else 0,
            "last_consolidated_at": consolidated[0] if consolidated else None,
            "last_memory_write_at": None if last is None else last[0],
        }

    def bank_last_memory_write_at(self, bank_id: str) -> datetime | None:
        """Stamp of the bank's newest memory write (insert, edit or delete); None before the first."""
        with self._read() as conn:
            row = conn.execute(Q["bank_last_write"], (bank_id,)).fetchone()
        return None if row is None else row["last_memory_write_at"]

    # ------------------------------------------------------------------ memories
    def write_documents(self, bank_id: str, documents: Sequence[DocumentWrite]) -> list[list[str]]:
        """Write retained documents atomically (bank auto-created); returns the new memory ids per document.

        ``update_mode == "replace"`` deletes the document's previous chunks and memories first; ``append`` keeps
        them and adds the new content after the stored text. All rows share one stamp taken under the bank lock.
        """
        out: list[list[str]] = []
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            self._lock_bank(conn, bank_id)
            stamp, _ = self._stamp_memory_write(conn, bank_id)
            with conn.cursor() as cur:
                for doc in documents:
                    out.append(self._write_document(cur, bank_id, doc, stamp))
        return out

    def _write_document(self, cur: psycopg.Cursor[Any], bank_id: str, doc: DocumentWrite, stamp: datetime) -> list[str]:
        item = doc.item
        existing = cur.execute(Q["get_document"], (bank_id, doc.document_id)).fetchone()
        text = item.content
        created = stamp
        chunk_base = 0
        if existing is not None and item.update_mode == "append":
            text = existing["original_text"] + "\n\n" + item.content
            created = existing["created_at"]
            row = cur.execute(Q["count_document_chunks"], (bank_id, doc.document_id)).fetchone()
            chunk_base = int(row["count"]) if row else 0
        elif existing is not None:
            cur.execute(Q["delete_document_memories"], (bank_id, doc.document_id))
            cur.execute(Q["delete_document_chunks"], (bank_id, doc.document_id))
        cur.execute(
            Q["upsert_document"],
            (
                bank_id,
                doc.document_id,
                text,
                hashlib.sha256(text.encode()).hexdigest(),
                _tags(item.tags),
                Jsonb(item.metadata),
                item.context,
                created,
                stamp,
            ),
        )
        if doc.chunks:
            cur.executemany(
                Q["insert_chunk"],
                [(c.id, bank_id, doc.document_id, chunk_base + c.index, c.text) for c in doc.chunks],
            )
        return self._insert_memories(cur, bank_id, doc.memories, stamp)

    def _insert_memories(
        self, cur: psycopg.Cursor[Any], bank_id: str, memories: Sequence[NewMemory], stamp: datetime
    ) -> list[str]:
        """Insert memories stamped ``stamp`` (the caller holds the bank lock); returns their new ids."""
        ids = [str(uuid.uuid4()) for _ in memories]
        if memories:
            cur.executemany(
                Q["insert_memory"],
                [
                    (
                        mid,
                        bank_id,
                        m.document_id,
                        m.chunk_id,
                        m.text,
                        m.fact_type,
                        _tags(m.tags),
                        m.context,
                        Jsonb(m.metadata),
                        m.occurred_start,
                        m.occurred_end,
                        m.mentioned_at,
                        self._vector(m.embedding),
                        None if m.source_memory_ids is None else list(m.source_memory_ids),
                        m.proof_count,
                        stamp,
                        stamp,
                    )
                    for mid, m in zip(ids, memories, strict=True)
                ],
            )
        return ids

    # ------------------------------------------------------------------ consolidation
    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]:
        """Facts (world/experience) not yet consolidated, oldest first."""
        with self._read() as conn:
            rows = conn.execute(Q["unconsolidated_facts"], (bank_id, limit)).fetchall()
        return [_memory(r) for r in rows]

    def list_observations(self, bank_id: str) -> list[MemoryUnit]:
        """Every observation of the bank, oldest first."""
        with self._read() as conn:
            rows = conn.execute(Q["list_observations"], (bank_id,)).fetchall()
        return [_memory(r) for r in rows]

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of the given memories as float32 vectors (unknown ids are left out)."""
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute(Q["memory_vectors"], (bank_id, list(ids))).fetchall()
        return {r["id"]: _as_vector(r["embedding"]) for r in rows}

    def write_consolidation(
        self,
        bank_id: str,
        *,
        creates: Sequence[NewMemory],
        updates: Sequence[tuple[str, tuple[str, ...], int]],
        consolidated_ids: Sequence[str],
        rewrites: Sequence[tuple[str, str, npt.NDArray[np.float32]]] = (),
        deletes: Sequence[str] = (),
    ) -> list[str]:
        """Apply one consolidation round atomically: new observations, observation updates ``(id, source ids,
        proof count)``, observation rewrites ``(id, text, embedding)``, observation deletes, and
        ``consolidated_at`` on the source facts. Observation writes are memory writes (stamped under the bank lock);
        marking sources is bookkeeping and stamps nothing. Returns the new observation ids."""
        with self._tx() as conn, conn.cursor() as cur:
            ids: list[str] = []
            if creates or updates or rewrites or deletes:
                self._lock_bank(cur.connection, bank_id)
                stamp, _ = self._stamp_memory_write(cur.connection, bank_id)
                ids = self._insert_memories(cur, bank_id, creates, stamp)
                if updates:
                    cur.executemany(
                        Q["update_observation"],
                        [(list(sources), proof, stamp, bank_id, mid) for mid, sources, proof in updates],
                    )
                if rewrites:
                    cur.executemany(
                        Q["rewrite_observation"],
                        [(text, self._vector(vector), stamp, bank_id, mid) for mid, text, vector in rewrites],
                    )
                if deletes:
                    cur.execute(Q["delete_observations"], (bank_id, list(deletes)))
            if consolidated_ids:
                cur.execute(Q["mark_consolidated"], (bank_id, list(consolidated_ids)))
        return ids

    def vector_search(
        self, bank_id: str, query: npt.NDArray[np.float32], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        """Top ``k`` (memory id, cosine similarity) passing ``flt``, best first.

        HNSW is approximate: ``hnsw.ef_search`` is raised to ``max(40, 2k)`` (capped at 1000) for this query only,
        and on pgvector >= 0.8 an iterative ``relaxed_order`` scan keeps walking the graph until ``k`` rows pass the
        filter (every query is filtered, by bank at least). Relaxed order may return rows slightly out of order, so
        results are re-sorted by their exact score.
        """
        if k <= 0:
            return []
        where, params = filter_sql(flt)
        vec = self._vector(query)
        with self._tx() as conn:
            conn.execute(Q["set_ef_search"], (str(min(_EF_SEARCH_MAX, max(40, 2 * k))),))
            if self._iterative_scan:
                conn.execute(Q["set_iterative_scan"])
            rows = conn.execute(Q["vector_search"].format(where=where), (vec, bank_id, *params, vec, k)).fetchall()
        hits = [(r["id"], 1.0 - float(r["distance"])) for r in rows]
        hits.sort(key=lambda h: -h[1])  # stable: ties keep the index's order
        return hits

    def keyword_search(self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        """Top ``k`` (memory id, ``ts_rank_cd`` score, higher is better) matching any of ``terms``, passing ``flt``.

        Each term is a phrase of its words (English stemming and stop words, like the SQLite porter tokenizer).
        """
        query = tsquery(terms)
        if query is None or k <= 0:
            return []
        where, params = filter_sql(flt)
        with self._read() as conn:
            rows = conn.execute(Q["keyword_search"].format(where=where), (query, bank_id, *params, k)).fetchall()
        return [(r["id"], float(r["score"])) for r in rows]

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]:
        """The memories with ``ids`` that exist in the bank, in the order of ``ids``."""
        if not ids:
            return []
        with self._read() as conn:
            rows = conn.execute(Q["get_memories"], (bank_id, list(ids))).fetchall()
        found = {r["id"]: _memory(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def list_memories(
        self, bank_id: str, flt: MemoryFilter, *, query: str | None, limit: int, offset: int
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories passing ``flt`` (and containing ``query`` as a substring, case-insensitive), newest
        first, with the total."""
        where, params = filter_sql(flt)
        if query:
            where += " AND m.text ILIKE %s ESCAPE '\\'"
            params.append(substring_pattern(query))
        with self._read() as conn:
            rows = conn.execute(Q["list_memories"].format(where=where), (bank_id, *params, limit, offset)).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                row = conn.execute(Q["count_filtered"].format(where=where), (bank_id, *params)).fetchone()
                total = int(row["count"]) if row else 0
        return [_memory(r) for r in rows], total

    def delete_memory(self, bank_id: str, memory_id: str) -> bool:
        """Delete one memory from every index; a deletion is a memory write (it advances the bank's stamp)."""
        with self._tx() as conn:
            if conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is None:
                return False
            if conn.execute(Q["delete_memory"], (bank_id, memory_id)).rowcount == 0:
                return False
            self._stamp_memory_write(conn, bank_id)
        return True

    def update_memory(
        self,
        bank_id: str,
        memory_id: str,
        *,
        text: str | None = None,
        embedding: npt.NDArray[np.float32] | None = None,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> bool:
        """Edit a memory (None = keep a field); an edit is a memory write and sends the fact back to
        consolidation. False when the memory does not exist."""
        with self._tx() as conn:
            if conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is None:
                return False
            if not conn.execute(Q["get_memories"], (bank_id, [memory_id])).fetchall():
                return False
            stamp, _ = self._stamp_memory_write(conn, bank_id)
            conn.execute(
                Q["update_memory"],
                (
                    text,
                    None if embedding is None else self._vector(embedding),
                    context,
                    None if tags is None else _tags(tags),
                    None if metadata is None else Jsonb(metadata),
                    stamp,
                    bank_id,
                    memory_id,
                ),
            )
        return True

    def count_in_scope(self, bank_id: str, flt: MemoryFilter) -> dict[str, int]:
        """How many memories pass ``flt``, by fact type."""
        where, params = filter_sql(flt)
        with self._read() as conn:
            rows = conn.execute(Q["count_in_scope"].format(where=where), (bank_id, *params)).fetchall()
        return {r["fact_type"]: int(r["count"]) for r in rows}

    def list_tags(
        self, bank_id: str, *, source: str, pattern: str | None, limit: int, offset: int
    ) -> tuple[list[tuple[str, int]], int]:
        """Tags in use with their counts (``source`` ``memories`` or ``mental_models``), most used first.

        ``pattern`` matches case-insensitively, with ``*`` as a wildcard (no ``*``: substring match).
        """
        table = "memory_units" if source == "memories" else "mental_models"
        params: list[Any] = [bank_id]
        where = ""
        if pattern:
            where = " AND lower(j.tag) LIKE %s ESCAPE '\\'"
            params.append(like_pattern(pattern))
        with self._read() as conn:
            rows = conn.execute(Q["list_tags"].format(table=table, where=where), (*params, limit, offset)).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                row = conn.execute(Q["count_tags"].format(table=table, where=where), params).fetchone()
                total = int(row["count"]) if row else 0
        return [(r["tag"], int(r["n"])) for r in rows], total

    def count_memories(self, bank_id: str) -> int:
        """Number of memory units in the bank."""
        with self._read() as conn:
            row = conn.execute(Q["count_memories"], (bank_id,)).fetchone()
        return int(row["count"]) if row else 0

    def scope_watermark(self, bank_id: str, flt: MemoryFilter) -> datetime | None:
        """Newest ``updated_at`` among memories passing ``flt`` (None when none do)."""
        where, params = filter_sql(flt)
        with self._read() as conn:
            row = conn.execute(Q["scope_watermark"].format(where=where), (bank_id, *params)).fetchone()
        return None if row is None else row["updated_at"]

    def stale_flags(self, bank_id: str, probes: Sequence[StalenessProbe]) -> dict[str, bool]:
        """Answer a page of staleness probes in ONE statement (up to 4000 distinct scopes per statement; plus one
        memory read when a cited memory was written since a watermark: ``moved_out`` judges whether it left).

        A model is stale iff (a) ``since`` is null, or (b) the bank was written after ``since`` and either a memory
        in its scope is newer than ``since`` or a memory its document cites no longer exists or has left the scope
        it reads (``probe.read_scope``). Probes sharing a scope
        share one lookup, bounded below by the group's oldest ``since`` so the ``(bank_id, updated_at)`` index range
        scanned is the writes since the watermark, not the bank.
        """
        if not probes:
            return {}
        groups: dict[MemoryFilter, list[StalenessProbe]] = {}
        for p in probes:
            if p.since is not None:
                groups.setdefault(p.scope, []).append(p)
        scopes = list(groups)
        newest: dict[int, datetime | None] = {}
        bank_last: datetime | None = None
        broken: set[str] = set()
        written: list[tuple[str, str, datetime]] = []
        # normally one pass; more only for pages with thousands of distinct scopes (bind-parameter limit)
        for start in range(0, max(1, len(scopes)), _MAX_SCOPES_PER_STATEMENT):
            first = start == 0
            parts: list[str] = []
            params: list[Any] = []
            if first:
                parts.append(Q["stale_bank"])
                params.append(bank_id)
            for i in range(start, min(start + _MAX_SCOPES_PER_STATEMENT, len(scopes))):
                scope = scopes[i]
                oldest = min(p.since for p in groups[scope] if p.since is not None)
                where, p = filter_sql(scope)
                parts.append(Q["stale_scope"].format(where=where))
                params.extend([str(i), bank_id, oldest, *p])
            if first:
                # citations gone ('cite') or written since the oldest watermark ('written', judged by moved_out)
                watermarks = [p.since for p in probes if p.since is not None]
                parts.append(Q["stale_citations"])
                params.extend([bank_id, [p.mental_model_id for p in probes], min(watermarks, default=None)])
            with self._read() as conn:
                rows = conn.execute(" UNION ALL ".join(f"({part})" for part in parts), params).fetchall()
            for r in rows:
                if r["kind"] == "bank":
                    bank_last = r["at"]
                elif r["kind"] == "scope":
                    newest[int(r["key"])] = r["at"]
                elif r["kind"] == "cite":
                    broken.add(r["key"])
                else:
                    written.append((r["key"], r["memory_id"], r["at"]))
        broken |= moved_out(probes, written, lambda memory_ids: self.get_memories(bank_id, memory_ids))
        return decide_staleness(probes, bank_last=bank_last, newest={s: newest.get(i) for i, s in enumerate(scopes)},
                                broken=broken)  # fmt: skip

    # ------------------------------------------------------------------ mental models
    def insert_mental_model(self, model: MentalModel) -> None:
        """Insert a new model (bank auto-created). Raises :class:`AlreadyExists` if the id is taken."""
        try:
            with self._tx() as conn:
                self._ensure_bank(conn, model.bank_id)
                conn.execute(Q["insert_mental_model"], _model_params(model))
        except psycopg.errors.UniqueViolation as exc:
            raise AlreadyExists(f"mental model {model.id!r} already exists") from exc

    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None:
        """One model, or None."""
        with self._read() as conn:
            row = conn.execute(Q["get_mental_model"], (bank_id, model_id)).fetchone()
        return None if row is None else _model(row)

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str],
        tags_match: TagsMatch,
        limit: int,
        offset: int,
        detail: str = "full",
    ) -> tuple[list[MentalModel], int]:
        """A page of models ordered ``last_refreshed_at DESC, id DESC`` and the total matching; below ``full``
        detail the heavy columns are not read (``mental_model_columns``).

        Tag filter on models: ``any`` = overlaps, ``all`` = superset, ``exact`` = equal (empty tags: no filter).
        """
        where, params = "", []
        want = _tags(tags)
        if want:
            op = {"exact": "=", "all": "@>"}.get(tags_match, "&&")
            where, params = f" AND tags {op} %s::text[]", [want]
        with self._read() as conn:
            row = conn.execute(Q["count_mental_models"].format(where=where), (bank_id, *params)).fetchone()
            rows = conn.execute(
                Q["list_mental_models"].format(where=where, columns=mental_model_columns(detail)),
                (bank_id, *params, limit, offset),
            ).fetchall()
        return [_model(r) for r in rows], int(row["count"]) if row else 0

    def save_refresh(self, model: MentalModel, *, history: dict[str, Any] | None, history_cap: int) -> None:
        """Persist a model's refresh state, its citations and (optionally) one history row in one transaction.

        ``history_cap`` > 0 keeps only that many rows of the same kind per model (oldest trimmed).
        Raises ``LookupError`` if the model was deleted meanwhile.
        """
        with self._tx() as conn, conn.cursor() as cur:
            cur.execute(
                Q["update_mental_model"], (*_model_params(model)[2:15], model.cleared_at, model.bank_id, model.id)
            )
            if cur.rowcount == 0:
                raise LookupError(f"mental model {model.id!r} no longer exists")
            cur.execute(Q["delete_citations"], (model.bank_id, model.id))
            cited = cited_ids(model.structured_document)
            if cited:
                cur.executemany(Q["insert_citation"], [(model.bank_id, model.id, mid) for mid in cited])
            if history is not None:
                cur.execute(Q["insert_history"], (model.bank_id, model.id, Jsonb(history)))
                if history_cap > 0:
                    kind = HISTORY_KIND[history.get("kind") == "refresh_failed"]
                    cur.execute(
                        Q["trim_history"].format(kind=kind),
                        (model.bank_id, model.id, model.bank_id, model.id, history_cap),
                    )

    def delete_mental_model(self, bank_id: str, model_id: str) -> bool:
        """Delete a model with its history and citations; False if it did not exist."""
        with self._tx() as conn:
            return conn.execute(Q["delete_mental_model"], (bank_id, model_id)).rowcount > 0

    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]:
        """History rows of a model, most recent first."""
        with self._read() as conn:
            rows = conn.execute(Q["list_history"], (bank_id, model_id)).fetchall()
        return [HistoryEntry(int(r["id"]), r["mental_model_id"], r["content"], r["changed_at"]) for r in rows]

    # ------------------------------------------------------------------ operations
    def submit_operation(self, op: Operation) -> None:
        """Insert a new operation (bank auto-created)."""
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            conn.execute(Q["insert_operation"], _operation_params(op))

    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]:
        """Queue ``op`` unless an operation of the same type for the same bank and mental model (None = bank-wide)
        is still pending; then return that one (coalescing, checked atomically). Returns ``(operation, deduplicated)``.

        Folding into a pending operation: ``full`` upgrades it to full mode, and a non-automatic request
        (``payload["automatic"]`` false) clears any park (``next_retry_at``) and the automatic flag, because
        "refresh now" means now. An advisory lock on (bank, model, type) makes the check-then-insert atomic across
        processes.
        """
        key = f"coalesce\x1f{op.bank_id}\x1f{op.mental_model_id or ''}\x1f{op.operation_type}"
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            conn.execute(Q["lock_coalesce_key"], (key,))
            row = conn.execute(
                Q["find_pending_coalesced"], (op.bank_id, op.mental_model_id, op.operation_type)
            ).fetchone()
            if row is not None:
                folded = fold_into_pending(_operation(row), op, full=full)
                conn.execute(Q["coalesce_operation"], (Jsonb(folded.payload), folded.next_retry_at, folded.id))
                return folded, True
            conn.execute(Q["insert_operation"], _operation_params(op))
            return op, False

    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]:
        """A page of the bank's operations, newest first, and the total."""
        where, params = "", []
        if status:
            where += " AND status = %s"
            params.append(status)
        if operation_type:
            where += " AND operation_type = %s"
            params.append(operation_type)
        with self._read() as conn:
            row = conn.execute(Q["count_operations"].format(where=where), (bank_id, *params)).fetchone()
            rows = conn.execute(Q["list_operations"].format(where=where), (bank_id, *params, limit, offset)).fetchall()
        return [_operation(r) for r in rows], int(row["count"]) if row else 0

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """Cancel a pending operation; returns the operation as it now stands (None: unknown).

        Operations already running or finished are returned unchanged.
        """
        with self._tx() as conn:
            conn.execute(Q["cancel_operation"], (bank_id, operation_id))
            row = conn.execute(Q["get_operation"], (bank_id, operation_id)).fetchone()
        return None if row is None else _operation(row)

    def find_pending_refresh(self, bank_id: str, model_id: str) -> Operation | None:
        """The model's queued (not yet running) refresh, if any."""
        with self._read() as conn:
            row = conn.execute(Q["find_pending_refresh"], (bank_id, model_id)).fetchone()
        return None if row is None else _operation(row)

    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """One operation of the bank, or None."""
        with self._read() as conn:
            row = conn.execute(Q["get_operation"], (bank_id, operation_id)).fetchone()
        return None if row is None else _operation(row)

    def claim_operation(self, worker_id: str, lease_seconds: float, *, now: datetime | None = None) -> Operation | None:
        """Claim the oldest runnable operation: pending and due (``next_retry_at`` at or before ``now``), or
        processing with an expired lease; ``now`` defaults to the database clock (workers and tests pass theirs).

        One statement with ``FOR UPDATE SKIP LOCKED``, so concurrent workers never claim the same row and never wait
        on each other's candidates. At most one operation per mental model runs at a time: a model with a row in
        ``processing`` is skipped unless that row is the expired one being reclaimed. Raises ``RuntimeError`` only
        if the per-model race is lost repeatedly (not expected in practice).
        """
        for _ in range(_CLAIM_ATTEMPTS):
            try:
                with self._tx() as conn:
                    row = conn.execute(Q["claim_operation"], (now, worker_id, float(lease_seconds))).fetchone()
            except psycopg.errors.UniqueViolation:
                # another worker committed a claim for the same mental model first; the next attempt sees it
                continue
            return None if row is None else _operation(row)
        raise RuntimeError("claim_operation kept losing the per-model race; giving up this round")

    def finish_operation(
        self, operation_id: str, *, status: str, result: dict[str, Any] | None, error: str | None
    ) -> None:
        """Mark an operation terminal (completed / failed / cancelled) with its result or error."""
        with self._tx() as conn:
            conn.execute(Q["finish_operation"], (status, _jsonb(result), error, operation_id))

    def defer_operation(self, operation_id: str, *, next_retry_at: datetime) -> None:
        """Park a claimed operation: back to pending, due at ``next_retry_at``, no retry counted, no error."""
        with self._tx() as conn:
            conn.execute(Q["defer_operation"], (next_retry_at, operation_id))

    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]:
        """Every mental model (of ``bank_id``, or of all banks) whose trigger has a truthy ``key``."""
        with self._read() as conn:
            rows = conn.execute(Q["list_models_with_trigger"], (key, key, bank_id, bank_id)).fetchall()
        return [_model(r) for r in rows]

    def retry_operation(self, operation_id: str, *, next_retry_at: datetime, error: str) -> None:
        """Put a failed attempt back in the queue: pending, ``retry_count + 1``, due at ``next_retry_at``."""
        with self._tx() as conn:
            conn.execute(Q["retry_operation"], (next_retry_at, error, operation_id))

    # ------------------------------------------------------------------ reflect expand / LLM tracing
    def memory_sources(self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True) -> list[MemorySource]:
        """Chunk and document text of the given memories, in the order of ``memory_ids`` (unknown ids left out);
        ``documents=False`` leaves ``document_text`` None and does not read documents."""
        if not memory_ids:
            return []
        query = Q["memory_sources"] if documents else Q["memory_chunk_sources"]
        with self._read() as conn:
            rows = conn.execute(query, (bank_id, list(memory_ids))).fetchall()
        found = {
            r["id"]: MemorySource(r["id"], r["document_id"], r["chunk_id"], r["chunk_text"], r["original_text"])
            for r in rows
        }
        return [found[i] for i in memory_ids if i in found]

    def record_llm_request(self, record: LLMRequestRecord) -> None:
        """Store one traced LLM attempt."""
        with self._tx() as conn:
            conn.execute(
                Q["insert_llm_request"],
                (
                    record.id,
                    record.bank_id,
                    record.operation_id,
                    record.scope,
                    record.provider,
                    record.model,
                    record.attempt,
                    Jsonb(record.request),
                    _jsonb(record.response),
                    record.error,
                    record.input_tokens,
                    record.output_tokens,
                    record.duration_ms,
                    record.created_at,
                ),
            )

    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]:
        """The traced attempts of one operation, oldest first (at most ``limit``)."""
        with self._read() as conn:
            rows = conn.execute(Q["list_llm_requests"], (bank_id, operation_id, limit)).fetchall()
        return [
            LLMRequestRecord(
                id=r["id"],
                bank_id=r["bank_id"],
                operation_id=r["operation_id"],
                scope=r["scope"],
                provider=r["provider"],
                model=r["model"],
                attempt=r["attempt"],
                request=r["request"],
                response=r["response"],
                error=r["error"],
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                duration_ms=r["duration_ms"],
                created_at=r["created_at"],
            )
            for r in rows
        ]

    def purge_llm_requests(self, before: datetime) -> int:
        """Delete traced attempts created before ``before``; returns how many went."""
        with self._tx() as conn:
            return conn.execute(Q["purge_llm_requests"], (before,)).rowcount

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


def _as_vector(value: Any) -> npt.NDArray[np.float32]:
    """A stored embedding as a float32 numpy vector (pgvector's adapter yields ``Vector`` objects or arrays, plain
    psycopg yields the text form ``[1,2,3]``)."""
    if isinstance(value, str):
        return np.array(json.loads(value), dtype=np.float32)
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, dtype=np.float32)


def _plain(value: Any) -> Any:
    """A value that compares with ``==`` (numpy arrays and pgvector objects become lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    to_list = getattr(value, "to_list", None)
    return to_list() if callable(to_list) else value


def _bank(r: dict[str, Any]) -> Bank:
    return Bank(
        bank_id=r["bank_id"],
        name=r["name"],
        mission=r["mission"],
        disposition=r["disposition"],
        config=r["config"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        last_memory_write_at=r["last_memory_write_at"],
    )


def _memory(r: dict[str, Any]) -> MemoryUnit:
    return MemoryUnit(
        id=r["id"],
        bank_id=r["bank_id"],
        text=r["text"],
        fact_type=r["fact_type"],
        tags=tuple(r["tags"]),
        context=r["context"],
        metadata=r["metadata"],
        document_id=r["document_id"],
        chunk_id=r["chunk_id"],
        occurred_start=r["occurred_start"],
        occurred_end=r["occurred_end"],
        mentioned_at=r["mentioned_at"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        source_memory_ids=None if r["source_memory_ids"] is None else tuple(r["source_memory_ids"]),
        proof_count=r["proof_count"],
    )


def _model_params(m: MentalModel) -> tuple[Any, ...]:
    """Insert parameters in ``insert_mental_model`` order; ``[2:15]`` are the ``update_mental_model`` SET values."""
    return (
        m.bank_id,
        m.id,
        m.name,
        m.source_query,
        m.content,
        _jsonb(m.structured_document),
        _jsonb(m.reflect_response),
        _tags(m.tags),
        m.max_tokens,
        Jsonb(m.trigger),
        m.last_refreshed_at,
        m.last_memory_seen_at,
        m.last_refreshed_source_query,
        m.last_refresh_failed_at,
        m.last_full_refreshed_at,
        m.created_at,
        m.cleared_at,
    )


def _model(r: dict[str, Any]) -> MentalModel:
    return MentalModel(
        id=r["id"],
        bank_id=r["bank_id"],
        name=r["name"],
        source_query=r["source_query"],
        content=r["content"],
        tags=tuple(r["tags"]),
        max_tokens=r["max_tokens"],
        trigger=r["trigger"],
        structured_document=r["structured_document"],
        reflect_response=r["reflect_response"],
        last_refreshed_at=r["last_refreshed_at"],
        last_memory_seen_at=r["last_memory_seen_at"],
        last_refreshed_source_query=r["last_refreshed_source_query"],
        last_refresh_failed_at=r["last_refresh_failed_at"],
        last_full_refreshed_at=r["last_full_refreshed_at"],
        created_at=r["created_at"],
        cleared_at=r["cleared_at"],
    )


def _operation_params(op: Operation) -> tuple[Any, ...]:
    return (
        op.id,
        op.bank_id,
        op.operation_type,
        op.status,
        Jsonb(op.payload),
        _jsonb(op.result),
        op.error,
        op.retry_count,
        op.next_retry_at,
        op.mental_model_id,
        op.created_at,
        op.updated_at,
        op.completed_at,
    )


def _operation(r: dict[str, Any]) -> Operation:
    return Operation(
        id=r["id"],
        bank_id=r["bank_id"],
        operation_type=r["operation_type"],
        status=r["status"],
        payload=r["payload"],
        result=r["result"],
        error=r["error"],
        retry_count=r["retry_count"],
        next_retry_at=r["next_retry_at"],
        mental_model_id=r["mental_model_id"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        completed_at=r["completed_at"],
    )
