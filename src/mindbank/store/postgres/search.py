"""Memory reads of the PostgreSQL store: vector (HNSW) and keyword (tsvector) search, lookups by id, listing,
scope counts and watermarks, tags in use, and the chunk/document sources reflect expands memories with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from mindbank.store.base import MemoryFilter
from mindbank.store.columns import Row
from mindbank.store.memory_reads import MemoryReads
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import nearest_sql
from mindbank.store.postgres.queries import Q, tsquery
from mindbank.store.shared import NEIGHBOURS_PER_SIDE, Anchors, FilterSQL

_EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search


class SearchMixin(PostgresBase, MemoryReads):
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
        where, params = self._filter_sql(flt, "m")
        vec = self._vector(query)
        with self._tx() as conn:
            knobs = Q["set_ef_search_iterative"] if self._iterative_scan else Q["set_ef_search"]
            conn.execute(knobs, (str(min(_EF_SEARCH_MAX, max(40, 2 * k))),))
            rows = conn.execute(
                nearest_sql(Q["vector_search"], where, len(query)), (vec, bank_id, *params, vec, k)
            ).fetchall()
        hits = [(r["id"], 1.0 - float(r["distance"])) for r in rows]
        hits.sort(key=lambda h: -h[1])  # stable: ties keep the index's order
        return hits

    def keyword_search(self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        """Top ``k`` (memory id, ``ts_rank_cd`` score, higher is better) matching any of ``terms``, passing ``flt``.

        Each term is a phrase of its words (English stemming and stop words, like the SQLite porter tokenizer). The
        score is ``ts_rank_cd`` over the memory's text (weight 1) and the text said before it (weight
        ``PRECEDING_WEIGHT``), plus the same rank of the multi-word terms alone.
        """
        query = tsquery(terms)
        if query is None or k <= 0:
            return []
        # a phrase of the query (a term of several words) ranks again on its own, as it counts as one more term
        # in SQLite's BM25: cover density alone would rank the words said apart, but more often, above it
        phrases = tsquery([t for t in terms if " " in t.strip()])
        where, params = self._filter_sql(flt, "m")
        with self._read() as conn:
            statement = Q["keyword_search"].format(where=where)
            rows = conn.execute(statement, (query, phrases, bank_id, *params, k)).fetchall()
        return [(r["id"], float(r["score"])) for r in rows]

    def _neighbour_rows(
        self, bank_id: str, anchors: Anchors, window: timedelta, outer: FilterSQL, inner: FilterSQL
    ) -> list[Row]:
        """The anchors bound as arrays and joined ``LATERAL``: one statement, planned once whatever their number."""
        arrays = (
            [context for context, _ in anchors], [moment for _, moment in anchors],
            [moment - window for _, moment in anchors], [moment + window for _, moment in anchors],
        )  # fmt: skip
        side = (bank_id, bank_id, *inner[1], *outer[1], NEIGHBOURS_PER_SIDE)
        with self._read() as conn:
            statement = Q["memory_neighbours"].format(where=outer[0], inner=inner[0])
            return list(conn.execute(statement, (*arrays, *side, *side)).fetchall())
