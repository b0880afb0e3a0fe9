"""SQLite implementation of the Store port.

Concurrency model (datasette-style): every write goes through one writer connection under a process-wide lock, so
memory ``updated_at`` stamps are strictly increasing per bank and a row with a stamp at or below a bank's
``last_memory_write_at`` is always committed. Reads use one connection per thread (WAL lets them run beside the
writer). Vector search runs on an in-process :class:`VectorIndex` per bank, kept in step with this process's writes
and rebuilt when ``banks.memory_version`` shows another process wrote.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

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
from mindbank.domain.timeutil import to_iso, utcnow
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
from mindbank.store.sqlite.migrate import migrate
from mindbank.store.sqlite.rows import (
    bank_row,
    index_rows,
    llm_request_row,
    memory_row,
    model_params,
    model_row,
    operation_row,
)
from mindbank.store.sqlite.sql import (
    MAX_COMPOUND,
    MEMORY_COLUMNS,
    MEMORY_COLUMNS_M,
    filter_sql,
    prune_common_terms,
    tags_json,
    to_json,
    ts,
)
from mindbank.store.vector_index import IndexRow, VectorIndex


class SQLiteStore:
    """The embedded store. ``path`` is a file path or ``":memory:"`` (one shared connection)."""

    def __init__(self, path: str, *, dimension: int) -> None:
        self.path = path
        self.dimension = dimension
        self._memory = path == ":memory:"
        self._write_lock = threading.RLock()
        self._local = threading.local()
        self._indexes: dict[str, tuple[int, VectorIndex]] = {}
        self._index_lock = threading.Lock()
        self._writer = self._connect()
        with self._write_lock:
            migrate(self._writer)

    # ------------------------------------------------------------------ connections
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 30000")
        if not self._memory:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _reader(self) -> sqlite3.Connection:
        if self._memory:
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
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
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

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

    def db_now(self) -> datetime:
        """Database time; for SQLite the process clock (one process owns the file)."""
        return utcnow()

    # ------------------------------------------------------------------ banks
    def _ensure_bank(self, conn: sqlite3.Connection, bank_id: str) -> None:
        now = to_iso(utcnow())
        conn.execute(
            "INSERT INTO banks (bank_id, name, created_at, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (bank_id) DO NOTHING",
            (bank_id, bank_id, now, now),
        )

    def ensure_bank(self, bank_id: str) -> None:
        """Create the bank if it does not exist."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)

    def bank_exists(self, bank_id: str) -> bool:
        """Whether the bank exists."""
        with self._read() as conn:
            return conn.execute("SELECT 1 FROM banks WHERE bank_id = ?", (bank_id,)).fetchone() is not None

    def get_bank(self, bank_id: str) -> Bank | None:
        """The bank's profile and bookkeeping, or None."""
        with self._read() as conn:
            row = conn.execute("SELECT * FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
        return None if row is None else bank_row(row)

    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count, ordered by id."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT b.*, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = b.bank_id) AS n "
                "FROM banks b ORDER BY b.bank_id"
            ).fetchall()
        return [(bank_row(r), int(r["n"])) for r in rows]

    def upsert_bank(
        self, bank_id: str, *, name: str | None, mission: str | None, disposition: dict[str, int] | None
    ) -> Bank:
        """Create the bank or update the given profile fields (None = keep); returns the bank."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            conn.execute(
                "UPDATE banks SET name = COALESCE(?, name), mission = COALESCE(?, mission), "
                "disposition = COALESCE(?, disposition), updated_at = ? WHERE bank_id = ?",
                (name, mission, None if disposition is None else to_json(disposition), to_iso(utcnow()), bank_id),
            )
            return bank_row(conn.execute("SELECT * FROM banks WHERE bank_id = ?", (bank_id,)).fetchone())

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> dict[str, Any]:
        """Merge ``updates`` into the bank's config overrides (a None value removes a key); returns the result.

        Raises ``LookupError`` for an unknown bank.
        """
        with self._tx() as conn:
            row = conn.execute("SELECT config FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
            if row is None:
                raise LookupError(bank_id)
            config = {**json.loads(row[0]), **updates}
            config = {k: v for k, v in config.items() if v is not None}
            conn.execute(
                "UPDATE banks SET config = ?, updated_at = ? WHERE bank_id = ?",
                (to_json(config), to_iso(utcnow()), bank_id),
            )
        return config

    def delete_bank(self, bank_id: str) -> int:
        """Delete the bank and everything in it atomically; returns the number of memories removed (-1: no bank)."""
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM banks WHERE bank_id = ?", (bank_id,)).fetchone() is None:
                return -1
            count = conn.execute("SELECT COUNT(*) FROM memory_units WHERE bank_id = ?", (bank_id,)).fetchone()[0]
            conn.execute("DELETE FROM operations WHERE bank_id = ?", (bank_id,))
            conn.execute("DELETE FROM banks WHERE bank_id = ?", (bank_id,))
        with self._index_lock:
            self._indexes.pop(bank_id, None)
        return int(count)

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live counts: memories by fact type, documents, operations by status, pending consolidation, last write."""
        with self._read() as conn:
            by_type = dict(
                conn.execute(
                    "SELECT fact_type, COUNT(*) FROM memory_units WHERE bank_id = ? GROUP BY fact_type", (bank_id,)
                ).fetchall()
            )
            by_status = dict(
                conn.execute(
                    "SELECT status, COUNT(*) FROM operations WHERE bank_id = ? GROUP BY status", (bank_id,)
                ).fetchall()
            )
            documents = conn.execute("SELECT COUNT(*) FROM documents WHERE bank_id = ?", (bank_id,)).fetchone()[0]
            pending = conn.execute(
                "SELECT COUNT(*) FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' "
                "AND consolidated_at IS NULL",
                (bank_id,),
            ).fetchone()[0]
            consolidated = conn.execute(
                "SELECT MAX(consolidated_at) FROM memory_units WHERE bank_id = ?", (bank_id,)
            ).fetchone()[0]
            last = conn.execute("SELECT last_memory_write_at FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
        return {
            "nodes_by_fact_type": by_type,
            "total_nodes": sum(by_type.values()),
            "total_documents": int(documents),
            "operations_by_status": by_status,
            "pending_consolidation": int(pending),
            "last_consolidated_at": ts(consolidated),
            "last_memory_write_at": None if last is None else ts(last[0]),
        }

    def bank_last_memory_write_at(self, bank_id: str) -> datetime | None:
        """Stamp of the bank's newest memory write (insert, edit or delete); None before the first."""
        with self._read() as conn:
            row = conn.execute("SELECT last_memory_write_at FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
        return None if row is None else ts(row[0])

    def _stamp_memory_write(self, conn: sqlite3.Connection, bank_id: str) -> tuple[str, int]:
        """Next write stamp for the bank: now, or 1 µs past the previous stamp if the clock has not moved."""
        row = conn.execute(
            "SELECT last_memory_write_at, memory_version FROM banks WHERE bank_id = ?", (bank_id,)
        ).fetchone()
        now = utcnow()
        last = ts(row[0])
        if last is not None and now <= last:
            now = last + timedelta(microseconds=1)
        stamp = to_iso(now)
        version = int(row[1]) + 1
        conn.execute(
            "UPDATE banks SET last_memory_write_at = ?, memory_version = ?, updated_at = ? WHERE bank_id = ?",
            (stamp, version, stamp, bank_id),
        )
        return stamp, version

    # ------------------------------------------------------------------ memories
    def write_documents(self, bank_id: str, documents: Sequence[DocumentWrite]) -> list[list[str]]:
        """Write retained documents atomically (bank auto-created); returns the new memory ids per document.

        ``update_mode == "replace"`` deletes the document's previous chunks and memories first; ``append`` keeps
        them and adds the new content after the stored text.
        """
        out: list[list[str]] = []
        added: list[IndexRow] = []
        removed: list[str] = []
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            stamp, version = self._stamp_memory_write(conn, bank_id)
            updated = datetime.fromisoformat(stamp).timestamp()
            for doc in documents:
                item = doc.item
                existing = conn.execute(
                    "SELECT original_text, created_at FROM documents WHERE bank_id = ? AND id = ?",
                    (bank_id, doc.document_id),
                ).fetchone()
                text = item.content
                created = stamp
                chunk_base = 0
                if existing is not None and item.update_mode == "append":
                    text = existing["original_text"] + "\n\n" + item.content
                    created = existing["created_at"]
                    chunk_base = conn.execute(
                        "SELECT COUNT(*) FROM chunks WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id)
                    ).fetchone()[0]
                elif existing is not None:
                    removed.extend(
                        r[0]
                        for r in conn.execute(
                            "SELECT id FROM memory_units WHERE bank_id = ? AND document_id = ?",
                            (bank_id, doc.document_id),
                        )
                    )
                    conn.execute(
                        "DELETE FROM memory_units WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id)
                    )
                    conn.execute("DELETE FROM chunks WHERE bank_id = ? AND document_id = ?", (bank_id, doc.document_id))
                conn.execute(
                    "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, "
                    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
                    "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
                    "context = excluded.context, updated_at = excluded.updated_at",
                    (
                        bank_id,
                        doc.document_id,
                        text,
                        hashlib.sha256(text.encode()).hexdigest(),
                        tags_json(item.tags),
                        to_json(item.metadata),
                        item.context,
                        created,
                        stamp,
                    ),
                )
                conn.executemany(
                    "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (?, ?, ?, ?, ?)",
                    [(c.id, bank_id, doc.document_id, chunk_base + c.index, c.text) for c in doc.chunks],
                )
                ids = self._insert_memories(conn, bank_id, doc.memories, stamp)
                added.extend(index_rows(ids, doc.memories, updated))
                out.append(ids)
            self._advance_index(bank_id, version, added, removed)
        return out

    def _insert_memories(
        self, conn: sqlite3.Connection, bank_id: str, memories: Sequence[NewMemory], stamp: str
    ) -> list[str]:
        ids = [str(uuid.uuid4()) for _ in memories]
        conn.executemany(
            "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, "
            "metadata, occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    mid,
                    bank_id,
                    m.document_id,
                    m.chunk_id,
                    m.text,
                    m.fact_type,
                    tags_json(m.tags),
                    m.context,
                    to_json(m.metadata),
                    to_iso(m.occurred_start),
                    to_iso(m.occurred_end),
                    to_iso(m.mentioned_at),
                    np.asarray(m.embedding, dtype="<f4").tobytes(),
                    None if m.source_memory_ids is None else to_json(list(m.source_memory_ids)),
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
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' "
                "AND consolidated_at IS NULL ORDER BY seq LIMIT ?",
                (bank_id, limit),
            ).fetchall()
        return [memory_row(r) for r in rows]

    def list_observations(self, bank_id: str) -> list[MemoryUnit]:
        """Every observation of the bank, oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' "
                "ORDER BY seq",
                (bank_id,),
            ).fetchall()
        return [memory_row(r) for r in rows]

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of the given memories (unknown ids are left out)."""
        index = self._index(bank_id)
        found = {i: index.vector(i) for i in ids}
        return {i: v for i, v in found.items() if v is not None}

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
        proof count)``, observation rewrites ``(id, text, embedding)``, observation deletes, and ``consolidated_at``
        on the source facts. Observation writes are memory writes (stamped); marking sources is bookkeeping and
        stamps nothing. Returns the new observation ids."""
        with self._tx() as conn:
            stamp, version = (None, None)
            if creates or updates or rewrites or deletes:
                stamp, version = self._stamp_memory_write(conn, bank_id)
            ids = self._insert_memories(conn, bank_id, creates, stamp) if creates else []
            for memory_id, sources, proof in updates:
                conn.execute(
                    "UPDATE memory_units SET source_memory_ids = ?, proof_count = ?, updated_at = ? "
                    "WHERE bank_id = ? AND id = ?",
                    (to_json(list(sources)), proof, stamp, bank_id, memory_id),
                )
            rewritten: list[IndexRow] = []
            for memory_id, text, vector in rewrites:
                row = conn.execute(
                    "UPDATE memory_units SET text = ?, embedding = ?, updated_at = ? WHERE bank_id = ? AND id = ? "
                    "AND fact_type = 'observation' RETURNING tags",
                    (text, np.asarray(vector, dtype="<f4").tobytes(), stamp, bank_id, memory_id),
                ).fetchone()
                if row is not None:
                    updated_at = datetime.fromisoformat(stamp).timestamp() if stamp else 0.0
                    rewritten.append(
                        IndexRow(memory_id, np.asarray(vector, np.float32), "observation", tuple(json.loads(row[0])),
                                 updated_at)
                    )  # fmt: skip
            for memory_id in deletes:
                conn.execute(
                    "DELETE FROM memory_units WHERE bank_id = ? AND id = ? AND fact_type = 'observation'",
                    (bank_id, memory_id),
                )
            now = to_iso(utcnow())
            for start in range(0, len(consolidated_ids), 500):
                part = list(consolidated_ids[start : start + 500])
                conn.execute(
                    "UPDATE memory_units SET consolidated_at = ? WHERE bank_id = ? "
                    f"AND id IN ({','.join('?' * len(part))})",
                    (now, bank_id, *part),
                )
            if version is not None and stamp is not None:
                updated = datetime.fromisoformat(stamp).timestamp()
                rows = index_rows(ids, creates, updated) + rewritten
                with self._index_lock:
                    cached = self._indexes.get(bank_id)
                    if cached is not None and cached[0] == version - 1:
                        index = (
                            cached[1].without(list(deletes)).with_rows(rows).restamped([u[0] for u in updates], updated)
                        )
                        self._indexes[bank_id] = (version, index)
                    else:
                        self._indexes.pop(bank_id, None)
        return ids

    def _advance_index(self, bank_id: str, version: int, added: list[IndexRow], removed: list[str]) -> None:
        """Apply this process's own write to the cached index (called inside the write transaction)."""
        with self._index_lock:
            cached = self._indexes.get(bank_id)
            if cached is not None and cached[0] == version - 1:
                self._indexes[bank_id] = (version, cached[1].without(removed).with_rows(added))
            else:
                self._indexes.pop(bank_id, None)

    def _index(self, bank_id: str) -> VectorIndex:
        with self._read() as conn:
            row = conn.execute("SELECT memory_version FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
            version = -1 if row is None else int(row[0])
            with self._index_lock:
                cached = self._indexes.get(bank_id)
            if cached is not None and cached[0] == version:
                return cached[1]
            rows = [
                IndexRow(
                    r[0],
                    np.frombuffer(r[1], dtype="<f4").astype(np.float32),
                    r[2],
                    tuple(json.loads(r[3])),
                    datetime.fromisoformat(r[4]).timestamp(),
                )
                for r in conn.execute(
                    "SELECT id, embedding, fact_type, tags, updated_at FROM memory_units "
                    "WHERE bank_id = ? ORDER BY seq",
                    (bank_id,),
                )
            ]
        index = VectorIndex.build(self.dimension, rows)
        with self._index_lock:
            self._indexes[bank_id] = (version, index)
        return index

    def vector_search(
        self, bank_id: str, query: npt.NDArray[np.float32], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        """Top ``k`` (memory id, cosine similarity) passing ``flt``, best first."""
        index = self._index(bank_id)
        mask = index.mask(
            fact_types=flt.fact_types,
            tags=flt.tags,
            tags_match=flt.tags_match,
            updated_before=None if flt.updated_before is None else flt.updated_before.timestamp(),
            updated_after=None if flt.updated_after is None else flt.updated_after.timestamp(),
            tag_groups=flt.groups,
        )
        return index.search(query, k, mask)

    def keyword_search(self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        """Top ``k`` (memory id, BM25 score, higher is better) for any of ``terms``, passing ``flt``.

        Terms present in more than 5% of all memories are dropped (the rarest term always stays): they
        dominate the cost of scoring and barely move BM25. The FTS index is ranked on its own (FTS5 answers
        ``ORDER BY rank LIMIT`` without touching the memory table), then the bank and filter are applied to an
        over-fetched candidate list; a rare filter that leaves too few candidates falls back to the joined query.
        """
        if not terms:
            return []
        where, params = filter_sql(flt)
        with self._read() as conn:
            terms = prune_common_terms(conn, terms)
            match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
            over = 2 * k
            ranked = conn.execute(
                "SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?", (match, over)
            ).fetchall()
            score = {r[0]: -float(r[1]) for r in ranked}
            kept: list[tuple[str, float]] = []
            if ranked:
                rows = conn.execute(
                    f"SELECT m.seq, m.id FROM memory_units m WHERE m.seq IN ({','.join('?' * len(ranked))}) "
                    f"AND m.bank_id = ? AND {where}",
                    (*score, bank_id, *params),
                ).fetchall()
                kept = sorted(((r[1], score[r[0]]) for r in rows), key=lambda x: -x[1])[:k]
            if len(kept) < k and len(ranked) == over:
                rows = conn.execute(
                    "SELECT m.id, bm25(memory_fts) AS score FROM memory_fts "
                    "JOIN memory_units m ON m.seq = memory_fts.rowid "
                    f"WHERE memory_fts MATCH ? AND m.bank_id = ? AND {where} ORDER BY score LIMIT ?",
                    (match, bank_id, *params, k),
                ).fetchall()
                kept = [(r[0], -float(r[1])) for r in rows]
        return kept

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]:
        """The memories with ``ids`` that exist in the bank, in the order of ``ids``."""
        if not ids:
            return []
        found: dict[str, MemoryUnit] = {}
        with self._read() as conn:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                for r in conn.execute(
                    f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE id IN ({','.join('?' * len(part))}) "
                    "AND +bank_id = ?",  # unary +: look rows up by id, not by scanning the bank
                    (*part, bank_id),
                ):
                    found[r["id"]] = memory_row(r)
        return [found[i] for i in ids if i in found]

    def list_memories(
        self, bank_id: str, flt: MemoryFilter, *, query: str | None, limit: int, offset: int
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories passing ``flt`` (and containing ``query`` as a substring, case-insensitive), newest
        first, with the total."""
        where, params = filter_sql(flt)
        if query:
            where += " AND m.text LIKE ? ESCAPE '\\'"
            params.append("%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS_M}, COUNT(*) OVER () AS total FROM memory_units m "
                f"WHERE m.bank_id = ? AND {where} "
                "ORDER BY m.updated_at DESC, m.seq DESC LIMIT ? OFFSET ?",
                (bank_id, *params, limit, offset),
            ).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                total = conn.execute(
                    f"SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = ? AND {where}", (bank_id, *params)
                ).fetchone()[0]
        return [memory_row(r) for r in rows], int(total)

    def delete_memory(self, bank_id: str, memory_id: str) -> bool:
        """Delete one memory from every index; a deletion is a memory write (it advances the bank's stamp)."""
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM memory_units WHERE bank_id = ? AND id = ?", (bank_id, memory_id))
            if cur.rowcount == 0:
                return False
            _, version = self._stamp_memory_write(conn, bank_id)
            self._advance_index(bank_id, version, [], [memory_id])
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
            row = conn.execute(
                "SELECT fact_type, tags, embedding FROM memory_units WHERE bank_id = ? AND id = ?", (bank_id, memory_id)
            ).fetchone()
            if row is None:
                return False
            stamp, version = self._stamp_memory_write(conn, bank_id)
            new_tags = json.loads(row["tags"]) if tags is None else sorted(set(tags))
            vector = np.frombuffer(row["embedding"], dtype="<f4") if embedding is None else np.asarray(embedding)
            conn.execute(
                "UPDATE memory_units SET text = COALESCE(?, text), embedding = ?, context = COALESCE(?, context), "
                "tags = ?, metadata = COALESCE(?, metadata), consolidated_at = NULL, updated_at = ? "
                "WHERE bank_id = ? AND id = ?",
                (
                    text,
                    vector.astype("<f4").tobytes(),
                    context,
                    tags_json(new_tags),
                    None if metadata is None else to_json(metadata),
                    stamp,
                    bank_id,
                    memory_id,
                ),
            )
            updated = datetime.fromisoformat(stamp).timestamp()
            row_index = IndexRow(memory_id, vector.astype(np.float32), row["fact_type"], tuple(new_tags), updated)
            self._advance_index(bank_id, version, [row_index], [])
        return True

    def count_in_scope(self, bank_id: str, flt: MemoryFilter) -> dict[str, int]:
        """How many memories pass ``flt``, by fact type."""
        where, params = filter_sql(flt)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT m.fact_type, COUNT(*) FROM memory_units m WHERE m.bank_id = ? AND {where} "
                "GROUP BY m.fact_type",
                (bank_id, *params),
            ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

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
            glob = pattern.lower() if "*" in pattern else f"*{pattern.lower()}*"
            where = " AND lower(j.value) GLOB ?"
            params.append(glob.replace("[", "[[]").replace("?", "[?]"))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT j.value AS tag, COUNT(*) AS n, COUNT(*) OVER () AS total FROM {table} t, json_each(t.tags) j "
                f"WHERE t.bank_id = ?{where} GROUP BY j.value ORDER BY n DESC, tag LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                total = conn.execute(
                    f"SELECT COUNT(DISTINCT j.value) FROM {table} t, json_each(t.tags) j WHERE t.bank_id = ?{where}",
                    params,
                ).fetchone()[0]
        return [(r["tag"], int(r["n"])) for r in rows], int(total)

    def count_memories(self, bank_id: str) -> int:
        """Number of memory units in the bank."""
        with self._read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM memory_units WHERE bank_id = ?", (bank_id,)).fetchone()[0])

    def scope_watermark(self, bank_id: str, flt: MemoryFilter) -> datetime | None:
        """Newest ``updated_at`` among memories passing ``flt`` (None when none do)."""
        where, params = filter_sql(flt)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT m.updated_at FROM memory_units m WHERE m.bank_id = ? AND {where} "
                "ORDER BY m.updated_at DESC LIMIT 1",
                (bank_id, *params),
            ).fetchone()
        return None if row is None else ts(row[0])

    def stale_flags(self, bank_id: str, probes: Sequence[StalenessProbe]) -> dict[str, bool]:
        """Answer a page of staleness probes in ONE statement, whatever the page size (plus one memory read when a
        cited memory was written since a watermark: ``moved_out`` judges whether it left the scope).

        A model is stale iff (a) ``since`` is null, or (b) the bank was written after ``since`` and either a memory
        in its scope is newer than ``since`` or a memory its document cites no longer exists or has left the scope
        it reads (``probe.read_scope``). Probes sharing a scope share one lookup, bounded below by the group's
        oldest ``since`` so the index range scanned is the writes since the watermark, not the bank (cost flat in
        bank size).
        """
        if not probes:
            return {}
        groups: dict[MemoryFilter, list[StalenessProbe]] = {}
        for p in probes:
            if p.since is not None:
                groups.setdefault(p.scope, []).append(p)
        scopes = list(groups)
        parts: list[str] = ["SELECT 'bank', NULL, last_memory_write_at, NULL FROM banks WHERE bank_id = ?"]
        params: list[Any] = [bank_id]
        chunks: list[str] = []
        for start in range(0, len(scopes), MAX_COMPOUND):
            selects = []
            for i in range(start, min(start + MAX_COMPOUND, len(scopes))):
                scope = scopes[i]
                oldest = min(p.since for p in groups[scope] if p.since is not None)
                where, p = filter_sql(scope)
                selects.append(
                    f"SELECT 'scope', {i}, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = ? "
                    f"AND m.updated_at > ? AND {where}), NULL"
                )
                params.extend([bank_id, to_iso(oldest), *p])
            chunks.append("SELECT * FROM (" + " UNION ALL ".join(selects) + ")")
        parts.extend(chunks)
        ids = [p.mental_model_id for p in probes]
        watermarks = [p.since for p in probes if p.since is not None]
        # every citation of the page whose memory is gone ('cite') or was written since the oldest watermark
        # ('written': it may have left the model's scope, judged by ``moved_out``)
        parts.append(
            "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, "
            "c.memory_id FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
            f"WHERE c.bank_id = ? AND c.mental_model_id IN ({','.join('?' * len(ids))}) "
            "AND (m.id IS NULL OR m.updated_at > ?)"
        )
        params.extend([bank_id, *ids, to_iso(min(watermarks)) if watermarks else None])
        with self._read() as conn:
            rows = conn.execute(" UNION ALL ".join(parts), params).fetchall()
        bank_last = next((ts(r[2]) for r in rows if r[0] == "bank"), None)
        newest = {int(r[1]): ts(r[2]) for r in rows if r[0] == "scope"}
        broken = {r[1] for r in rows if r[0] == "cite"}
        written = [(r[1], r[3], ts(r[2])) for r in rows if r[0] == "written"]
        broken |= moved_out(probes, written, lambda memory_ids: self.get_memories(bank_id, memory_ids))
        return decide_staleness(probes, bank_last=bank_last, newest={s: newest.get(i) for i, s in enumerate(scopes)},
                                broken=broken)  # fmt: skip

    # ------------------------------------------------------------------ mental models
    def insert_mental_model(self, model: MentalModel) -> None:
        """Insert a new model (bank auto-created). Raises :class:`AlreadyExists` if the id is taken."""
        with self._tx() as conn:
            self._ensure_bank(conn, model.bank_id)
            try:
                conn.execute(
                    "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, "
                    "reflect_response, tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, "
                    "last_refreshed_source_query, last_refresh_failed_at, last_full_refreshed_at, created_at, "
                    "cleared_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    model_params(model),
                )
            except sqlite3.IntegrityError as exc:
                raise AlreadyExists(f"mental model {model.id!r} already exists") from exc

    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None:
        """One model, or None."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM mental_models WHERE bank_id = ? AND id = ?", (bank_id, model_id)
            ).fetchone()
        return None if row is None else model_row(row)

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
        want = sorted(set(tags))
        if want:
            marks = ",".join("?" * len(want))
            if tags_match == "exact":
                where, params = " AND tags = ?", [tags_json(want)]
            elif tags_match == "all":
                where = f" AND (SELECT COUNT(*) FROM json_each(tags) WHERE value IN ({marks})) = {len(want)}"
                params = want
            else:
                where, params = f" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value IN ({marks}))", want
        with self._read() as conn:
            total = conn.execute(
                f"SELECT COUNT(*) FROM mental_models WHERE bank_id = ?{where}", (bank_id, *params)
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT {mental_model_columns(detail)} FROM mental_models WHERE bank_id = ?{where} "
                "ORDER BY last_refreshed_at DESC, id DESC LIMIT ? OFFSET ?",
                (bank_id, *params, limit, offset),
            ).fetchall()
        return [model_row(r) for r in rows], int(total)

    def save_refresh(self, model: MentalModel, *, history: dict[str, Any] | None, history_cap: int) -> None:
        """Persist a model's refresh state and (optionally) one history row in one transaction.

        ``history_cap`` > 0 keeps only that many rows of the same kind per model (oldest trimmed).
        Raises ``LookupError`` if the model was deleted meanwhile.
        """
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE mental_models SET name = ?, source_query = ?, content = ?, structured_document = ?, "
                "reflect_response = ?, tags = ?, max_tokens = ?, trigger = ?, last_refreshed_at = ?, "
                "last_memory_seen_at = ?, last_refreshed_source_query = ?, last_refresh_failed_at = ?, "
                "last_full_refreshed_at = ?, cleared_at = ? WHERE bank_id = ? AND id = ?",
                (*model_params(model)[2:15], to_iso(model.cleared_at), model.bank_id, model.id),
            )
            if cur.rowcount == 0:
                raise LookupError(f"mental model {model.id!r} no longer exists")
            conn.execute(
                "DELETE FROM mental_model_citations WHERE bank_id = ? AND mental_model_id = ?",
                (model.bank_id, model.id),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (?, ?, ?)",
                [(model.bank_id, model.id, mid) for mid in cited_ids(model.structured_document)],
            )
            if history is not None:
                conn.execute(
                    "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at) "
                    "VALUES (?, ?, ?, ?)",
                    (model.bank_id, model.id, to_json(history), to_iso(utcnow())),
                )
                if history_cap > 0:
                    failure = history.get("kind") == "refresh_failed"
                    kind_clause = (
                        "json_extract(content, '$.kind') = 'refresh_failed'"
                        if failure
                        else "json_extract(content, '$.kind') IS NULL"
                    )
                    conn.execute(
                        f"DELETE FROM mental_model_history WHERE bank_id = ? AND mental_model_id = ? AND {kind_clause} "
                        f"AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = ? AND "
                        f"mental_model_id = ? AND {kind_clause} ORDER BY changed_at DESC, id DESC LIMIT ?)",
                        (model.bank_id, model.id, model.bank_id, model.id, history_cap),
                    )

    def delete_mental_model(self, bank_id: str, model_id: str) -> bool:
        """Delete a model with its history and citations; False if it did not exist."""
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM mental_models WHERE bank_id = ? AND id = ?", (bank_id, model_id))
            return cur.rowcount > 0

    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]:
        """History rows of a model, most recent first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id, mental_model_id, content, changed_at FROM mental_model_history "
                "WHERE bank_id = ? AND mental_model_id = ? ORDER BY changed_at DESC, id DESC",
                (bank_id, model_id),
            ).fetchall()
        return [HistoryEntry(r[0], r[1], json.loads(r[2]), datetime.fromisoformat(r[3])) for r in rows]

    # ------------------------------------------------------------------ operations
    def submit_operation(self, op: Operation) -> None:
        """Insert a new operation (bank auto-created)."""
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            self._insert_operation(conn, op)

    def _insert_operation(self, conn: sqlite3.Connection, op: Operation) -> None:
        conn.execute(
            "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
            "next_retry_at, mental_model_id, created_at, updated_at, completed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                op.id,
                op.bank_id,
                op.operation_type,
                op.status,
                to_json(op.payload),
                None if op.result is None else to_json(op.result),
                op.error,
                op.retry_count,
                to_iso(op.next_retry_at),
                op.mental_model_id,
                to_iso(op.created_at),
                to_iso(op.updated_at),
                to_iso(op.completed_at),
            ),
        )

    def submit_coalesced(self, op: Operation, *, full: bool = False) -> tuple[Operation, bool]:
        """Queue ``op`` unless an operation of the same type for the same bank and mental model (None = bank-wide)
        is still pending; then return that one (coalescing, checked atomically). Returns ``(operation, deduplicated)``.

        Folding into a pending operation: ``full`` upgrades it to full mode, and a non-automatic request
        (``payload["automatic"]`` false) clears any park (``next_retry_at``) and the automatic flag, because
        "refresh now" means now.
        """
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id IS ? AND status = 'pending' "
                "AND operation_type = ? ORDER BY created_at LIMIT 1",
                (op.bank_id, op.mental_model_id, op.operation_type),
            ).fetchone()
            if row is not None:
                folded = fold_into_pending(operation_row(row), op, full=full)
                conn.execute(
                    "UPDATE operations SET payload = ?, next_retry_at = ?, updated_at = ? WHERE id = ?",
                    (to_json(folded.payload), to_iso(folded.next_retry_at), to_iso(utcnow()), folded.id),
                )
                return folded, True
            self._insert_operation(conn, op)
            return op, False

    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]:
        """A page of the bank's operations, newest first, and the total."""
        where, params = "", []
        if status:
            where += " AND status = ?"
            params.append(status)
        if operation_type:
            where += " AND operation_type = ?"
            params.append(operation_type)
        with self._read() as conn:
            total = conn.execute(
                f"SELECT COUNT(*) FROM operations WHERE bank_id = ?{where}", (bank_id, *params)
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT * FROM operations WHERE bank_id = ?{where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (bank_id, *params, limit, offset),
            ).fetchall()
        return [operation_row(r) for r in rows], int(total)

    def cancel_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """Cancel a pending operation; returns the operation as it now stands (None: unknown).

        Operations already running or finished are returned unchanged.
        """
        now = to_iso(utcnow())
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'cancelled', updated_at = ?, completed_at = ? "
                "WHERE bank_id = ? AND id = ? AND status = 'pending'",
                (now, now, bank_id, operation_id),
            )
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND id = ?", (bank_id, operation_id)
            ).fetchone()
        return None if row is None else operation_row(row)

    def find_pending_refresh(self, bank_id: str, model_id: str) -> Operation | None:
        """The model's queued (not yet running) refresh, if any."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND mental_model_id = ? AND status = 'pending' "
                "AND operation_type = 'refresh_mental_model' ORDER BY created_at LIMIT 1",
                (bank_id, model_id),
            ).fetchone()
        return None if row is None else operation_row(row)

    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """One operation of the bank, or None."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT * FROM operations WHERE bank_id = ? AND id = ?", (bank_id, operation_id)
            ).fetchone()
        return None if row is None else operation_row(row)

    def claim_operation(self, worker_id: str, lease_seconds: float, *, now: datetime | None = None) -> Operation | None:
        """Claim the oldest runnable operation: pending and due (``next_retry_at`` at or before ``now``), or
        processing with an expired lease. At most one refresh per mental model runs at a time: a model with a live
        claimed refresh is skipped. ``now`` defaults to the clock (tests inject one)."""
        now = now or utcnow()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT o.id FROM operations o WHERE ((o.status = 'pending' AND (o.next_retry_at IS NULL OR "
                "o.next_retry_at <= ?)) OR (o.status = 'processing' AND o.lease_expires_at < ?)) "
                "AND (o.mental_model_id IS NULL OR NOT EXISTS (SELECT 1 FROM operations p WHERE "
                "p.bank_id = o.bank_id AND p.mental_model_id = o.mental_model_id AND p.status = 'processing' "
                "AND p.lease_expires_at >= ? AND p.id != o.id)) ORDER BY o.created_at LIMIT 1",
                (to_iso(now), to_iso(now), to_iso(now)),
            ).fetchone()
            if row is None:
                return None
            claimed = conn.execute(
                "UPDATE operations SET status = 'processing', worker_id = ?, lease_expires_at = ?, updated_at = ? "
                "WHERE id = ? RETURNING *",
                (worker_id, to_iso(now + timedelta(seconds=lease_seconds)), to_iso(now), row[0]),
            ).fetchone()
        return operation_row(claimed)

    def finish_operation(
        self, operation_id: str, *, status: str, result: dict[str, Any] | None, error: str | None
    ) -> None:
        """Mark an operation terminal (completed / failed / cancelled) with its result or error."""
        now = to_iso(utcnow())
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = ?, result = ?, error = ?, updated_at = ?, completed_at = ?, "
                "lease_expires_at = NULL WHERE id = ?",
                (status, None if result is None else to_json(result), error, now, now, operation_id),
            )

    def defer_operation(self, operation_id: str, *, next_retry_at: datetime) -> None:
        """Park a claimed operation: back to pending, due at ``next_retry_at``, no retry counted, no error."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'pending', next_retry_at = ?, updated_at = ?, worker_id = NULL, "
                "lease_expires_at = NULL WHERE id = ?",
                (to_iso(next_retry_at), to_iso(utcnow()), operation_id),
            )

    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]:
        """Every mental model (of ``bank_id``, or of all banks) whose trigger has a truthy ``key``."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM mental_models WHERE json_extract(trigger, '$.' || ?) IS NOT NULL "
                "AND json_extract(trigger, '$.' || ?) NOT IN (0, '') AND (? IS NULL OR bank_id = ?)",
                (key, key, bank_id, bank_id),
            ).fetchall()
        return [model_row(r) for r in rows]

    def retry_operation(self, operation_id: str, *, next_retry_at: datetime, error: str) -> None:
        """Put a failed attempt back in the queue: pending, ``retry_count + 1``, due at ``next_retry_at``."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE operations SET status = 'pending', retry_count = retry_count + 1, next_retry_at = ?, "
                "error = ?, updated_at = ?, worker_id = NULL, lease_expires_at = NULL WHERE id = ?",
                (to_iso(next_retry_at), error, to_iso(utcnow()), operation_id),
            )

    # ------------------------------------------------------------------ reflect expand / LLM tracing
    def memory_sources(self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True) -> list[MemorySource]:
        """Chunk and document text of the given memories, in the order of ``memory_ids`` (unknown ids left out);
        ``documents=False`` leaves ``document_text`` None and does not read documents."""
        found: dict[str, MemorySource] = {}
        document = (
            "d.original_text FROM memory_units m LEFT JOIN documents d "
            "ON d.bank_id = m.bank_id AND d.id = m.document_id "
            if documents
            else "NULL AS original_text FROM memory_units m "
        )
        with self._read() as conn:
            for start in range(0, len(memory_ids), 500):
                part = list(memory_ids[start : start + 500])
                for r in conn.execute(
                    f"SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, {document}"
                    "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
                    f"WHERE m.bank_id = ? AND m.id IN ({','.join('?' * len(part))})",
                    (bank_id, *part),
                ):
                    found[r["id"]] = MemorySource(
                        r["id"], r["document_id"], r["chunk_id"], r["chunk_text"], r["original_text"]
                    )
        return [found[i] for i in memory_ids if i in found]

    def record_llm_request(self, record: LLMRequestRecord) -> None:
        """Store one traced LLM attempt."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO llm_requests (id, bank_id, operation_id, scope, provider, model, attempt, request, "
                "response, error, input_tokens, output_tokens, duration_ms, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.bank_id,
                    record.operation_id,
                    record.scope,
                    record.provider,
                    record.model,
                    record.attempt,
                    to_json(record.request),
                    None if record.response is None else to_json(record.response),
                    record.error,
                    record.input_tokens,
                    record.output_tokens,
                    record.duration_ms,
                    to_iso(record.created_at),
                ),
            )

    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]:
        """The traced attempts of one operation, oldest first (at most ``limit``)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM llm_requests WHERE bank_id = ? AND operation_id = ? ORDER BY created_at, id LIMIT ?",
                (bank_id, operation_id, limit),
            ).fetchall()
        return [llm_request_row(r) for r in rows]

    def purge_llm_requests(self, before: datetime) -> int:
        """Delete traced attempts created before ``before``; returns how many went."""
        with self._tx() as conn:
            return conn.execute("DELETE FROM llm_requests WHERE created_at < ?", (to_iso(before),)).rowcount

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table (test helper for "a rejected request writes nothing")."""
        with self._read() as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_fts%' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            return {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1")] for t in tables}
