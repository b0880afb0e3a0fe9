"""Memory reads of the PostgreSQL store: vector (HNSW) and keyword (tsvector) search, lookups by id, listing,
scope counts and watermarks, tags in use, and the chunk/document sources reflect expands memories with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemorySource, MemoryUnit
from mindbank.store.base import MemoryFilter
from mindbank.store.columns import memory_source
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import nearest_sql
from mindbank.store.postgres.queries import Q, filter_sql, like_pattern, substring_pattern, tsquery
from mindbank.store.postgres.rows import COLUMNS

_EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search


class SearchMixin(PostgresBase):
    """Read-only queries over ``memory_units`` (and its indexes, chunks and documents)."""

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
            rows = conn.execute(
                nearest_sql(Q["vector_search"].format(where=where), self.dimension), (vec, bank_id, *params, vec, k)
            ).fetchall()
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
        found = {r["id"]: COLUMNS.memory_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def list_memories(
        self, bank_id: str, flt: MemoryFilter, *, query: str | None, limit: int, offset: int,
        document_id: str | None = None,
    ) -> tuple[list[MemoryUnit], int]:  # fmt: skip
        """A page of memories passing ``flt`` (and containing ``query`` as a substring, case-insensitive; drawn
        from ``document_id`` when given), newest first, with the total."""
        where, params = filter_sql(flt)
        if document_id is not None:
            where += " AND m.document_id = %s"
            params.append(document_id)
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
        return [COLUMNS.memory_row(r) for r in rows], total

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

    def memory_sources(self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True) -> list[MemorySource]:
        """Chunk and document text of the given memories, in the order of ``memory_ids`` (unknown ids left out);
        ``documents=False`` leaves ``document_text`` None and does not read documents."""
        if not memory_ids:
            return []
        query = Q["memory_sources"] if documents else Q["memory_chunk_sources"]
        with self._read() as conn:
            rows = conn.execute(query, (bank_id, list(memory_ids))).fetchall()
        found = {r["id"]: memory_source(r) for r in rows}
        return [found[i] for i in memory_ids if i in found]
