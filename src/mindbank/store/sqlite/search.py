"""Memory reads of the SQLite store: vector and keyword search, lookups by id, listing, scope counts and
watermarks, tags in use, and the chunk/document sources reflect expands memories with."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from mindbank.store.base import MemoryFilter
from mindbank.store.columns import Row
from mindbank.store.memory_reads import MemoryReads
from mindbank.store.shared import NEIGHBOURS_PER_SIDE, Anchors, FilterSQL
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import (
    Q,
    fts_match,
    marks,
)
from mindbank.store.sqlite.rows import to_json

COMMON_TERM_SHARE = 0.05


def prune_common_terms(conn: sqlite3.Connection, terms: Sequence[str]) -> list[str]:
    """Drop query terms present in more than ``COMMON_TERM_SHARE`` of all memories (the rarest always stays);
    below 1000 memories every term is kept."""
    total = conn.execute(Q["max_memory_seq"]).fetchone()[0] or 0
    if total < 1000 or len(terms) <= 1:
        return list(terms)
    # the index holds porter stems; a stem is the word or the word cut by up to three letters ("caroline" ->
    # "carolin"), so the largest document count among those forms is the term's (an estimate good enough to prune)
    forms = {t: [t] + [t[: len(t) - cut] for cut in range(1, 4) if len(t) - cut >= 3] for t in terms}
    candidates = sorted({f for fs in forms.values() for f in fs})
    docs = dict(conn.execute(Q["term_documents"].format(marks=marks(len(candidates))), candidates).fetchall())
    frequency = {t: max((int(docs.get(f, 0)) for f in fs), default=0) for t, fs in forms.items()}
    rarest = min(terms, key=lambda t: frequency[t])
    return [t for t in terms if t == rarest or frequency[t] <= COMMON_TERM_SHARE * total]


class SearchMixin(SQLiteBase, MemoryReads):
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
        where, params = self._filter_sql(flt, "m")
        with self._read() as conn:
            terms = prune_common_terms(conn, terms)
            match = fts_match(terms)
            over = 2 * k
            ranked = conn.execute(Q["keyword_ranked"], (match, over)).fetchall()
            score = {r[0]: -float(r[1]) for r in ranked}
            kept: list[tuple[str, float]] = []
            if ranked:
                rows = conn.execute(
                    Q["keyword_candidates"].format(marks=marks(len(ranked)), where=where), (*score, bank_id, *params)
                ).fetchall()
                # stable: equal scores keep the candidates' conversation order (the statement's)
                kept = sorted(((r[1], score[r[0]]) for r in rows), key=lambda x: -x[1])[:k]
            if len(kept) < k and len(ranked) == over:
                rows = conn.execute(Q["keyword_search"].format(where=where), (match, bank_id, *params, k)).fetchall()
                kept = [(r[0], -float(r[1])) for r in rows]
        return kept

    def _neighbour_rows(
        self, bank_id: str, anchors: Anchors, window: timedelta, outer: FilterSQL, inner: FilterSQL
    ) -> list[Row]:
        """One statement over the anchors bound as a JSON array (``json_each``): the same text, so one prepared
        plan, whatever their number."""
        time = self._columns.time
        bound = to_json([[context, time(at), time(at - window), time(at + window)] for context, at in anchors])
        statement = Q["memory_neighbours"].format(where=outer[0], inner=inner[0])
        params = (bound, bank_id, *inner[1], bank_id, *inner[1], bank_id, *outer[1], NEIGHBOURS_PER_SIDE)
        with self._read() as conn:
            return list(conn.execute(statement, params).fetchall())
