"""Memory reads of the SQLite store: vector and keyword search, lookups by id, listing, scope counts and
watermarks, tags in use, and the chunk/document sources reflect expands memories with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemorySource, MemoryUnit
from mindbank.store.base import MemoryFilter
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.rows import memory_row
from mindbank.store.sqlite.sql import MEMORY_COLUMNS, MEMORY_COLUMNS_M, filter_sql, prune_common_terms, ts


class SearchMixin(SQLiteBase):
    """Read-only queries over ``memory_units`` (and its FTS index, chunks and documents)."""

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
