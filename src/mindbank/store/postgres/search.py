"""Memory reads of the PostgreSQL store: vector (HNSW) and keyword (tsvector) search, lookups by id, listing,
scope counts and watermarks, tags in use, and the chunk/document sources reflect expands memories with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemoryUnit
from mindbank.store.base import MemoryFilter
from mindbank.store.memory_reads import MemoryReads
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import nearest_sql
from mindbank.store.postgres.queries import Q, tsquery
from mindbank.store.shared import NEIGHBOURS_PER_SIDE

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
        where, params = self._filter_sql(flt, "m")
        with self._read() as conn:
            rows = conn.execute(Q["keyword_search"].format(where=where), (query, bank_id, *params, k)).fetchall()
        return [(r["id"], float(r["score"])) for r in rows]

    def memory_neighbours(
        self,
        bank_id: str,
        anchors: Sequence[tuple[str, datetime]],
        window_s: float,
        flt: MemoryFilter,
        *,
        per_side: int = NEIGHBOURS_PER_SIDE,
    ) -> list[MemoryUnit]:
        """The memories passing ``flt`` said at the nearest moment before and the nearest moment after each
        anchor ``(context, moment)``, in the same context and at most ``window_s`` seconds away; each memory once,
        in anchor order (before, then after).

        A memory's moment is ``occurred_start``, else ``mentioned_at`` (memories with neither have none). The
        pieces of one long turn share a moment, so a side returns every memory at its nearest moment, up to
        ``per_side``. One statement for all anchors, returning whole rows, so recall's neighbour expansion costs one
        round trip (an empty list asks nothing). On PostgreSQL the anchors are bound as arrays and joined
        ``LATERAL``, so the statement is planned once whatever their number.
        """
        if not anchors or per_side <= 0:
            return []
        where, params = self._filter_sql(flt, "m")
        inner, inner_params = self._filter_sql(flt, "x")
        window = timedelta(seconds=window_s)
        arrays = (
            [context for context, _ in anchors], [moment for _, moment in anchors],
            [moment - window for _, moment in anchors], [moment + window for _, moment in anchors],
        )  # fmt: skip
        side = (bank_id, bank_id, *inner_params, *params, per_side)
        with self._read() as conn:
            rows = conn.execute(
                Q["memory_neighbours"].format(where=where, inner=inner), (*arrays, *side, *side)
            ).fetchall()
        return self._memories_once(rows)
