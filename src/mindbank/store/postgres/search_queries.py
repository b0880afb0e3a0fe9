"""Recall's searches: vector (PostgreSQL), keyword, time window, neighbours and the scope watermark."""

from __future__ import annotations

from mindbank.store.lexical import PRECEDING_WEIGHT, nearest_moment
from mindbank.store.lexical import moment_sql as _m
from mindbank.store.postgres.memory_queries import preceding_of

# ts_rank_cd's weights are {D, C, B, A}: the memory's own words are 'A' (1.0), the text said before it 'B'
_WEIGHTS = f"ARRAY[0.1, 0.2, {PRECEDING_WEIGHT}, 1.0]::float4[]"

# a fact's preceding text: the text of the facts at the nearest earlier moment of its context (the pieces of one
# long turn share a moment, joined in write order); observations neither have nor lend one
_OWN = preceding_of("m.bank_id", "m.context", _m("m"))
_SET_PRECEDING = (
    f"UPDATE memory_units m SET preceding_text = {_OWN} "
    "WHERE m.bank_id = %s AND m.context IS NOT NULL AND m.fact_type <> 'observation'"
)

SEARCH_Q: dict[str, str] = {
    # search knobs are transaction-local (set_config(..., true) == SET LOCAL) so pooled connections stay clean
    "set_ef_search": "SELECT set_config('hnsw.ef_search', %s, true)",
    # both knobs in one statement where pgvector has iterative scans: one round trip less per vector search
    "set_ef_search_iterative": (
        "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)"
    ),
    "vector_search": (
        "SELECT m.id, m.embedding <=> %s::vector AS distance FROM memory_units m "
        "WHERE m.bank_id = %s AND {where} ORDER BY m.embedding <=> %s::vector LIMIT %s"
    ),
    "keyword_search": (
        f"SELECT m.id, ts_rank_cd({_WEIGHTS}, m.text_tsv, q.query) "
        f"+ COALESCE(ts_rank_cd({_WEIGHTS}, m.text_tsv, p.phrases), 0) AS score FROM memory_units m, "
        "to_tsquery('english', %s) AS q(query), to_tsquery('english', %s) AS p(phrases) "
        "WHERE m.bank_id = %s AND m.text_tsv @@ q.query AND {where} ORDER BY score DESC, m.seq LIMIT %s"
    ),
    # recall's temporal arm: memories whose own dates fall inside a window, latest first
    "memories_in_window": (
        "SELECT m.id FROM memory_units m WHERE m.bank_id = %s AND {where} AND ("
        "(m.occurred_start >= %s AND m.occurred_start <= %s) OR (m.occurred_end >= %s AND m.occurred_end <= %s) "
        "OR (m.mentioned_at >= %s AND m.mentioned_at <= %s)) "
        "ORDER BY COALESCE(m.occurred_start, m.mentioned_at) DESC, m.id LIMIT %s"
    ),
    # recall's neighbour expansion: per anchor (context, moment, moment - window, moment + window), the ids of the
    # memories of that context at the nearest visible moment before and after it (the inner query finds that
    # moment on the index; the pieces of one long turn share it). One statement whatever the number of anchors, so
    # it is planned once ({where} / {inner}: the filter over the outer / inner alias)
    "memory_neighbours": (
        "SELECT n.* FROM unnest(%s::text[], %s::timestamptz[], %s::timestamptz[], %s::timestamptz[]) "
        "WITH ORDINALITY AS a(context, at, lo, hi, part) CROSS JOIN LATERAL ("
        "(SELECT m.id, 2 * a.part + 0 AS side FROM memory_units m WHERE m.bank_id = %s "
        "AND m.context = a.context AND COALESCE(m.occurred_start, m.mentioned_at) = (SELECT MAX(COALESCE("
        "x.occurred_start, x.mentioned_at)) FROM memory_units x WHERE x.bank_id = %s AND x.context = a.context "
        "AND COALESCE(x.occurred_start, x.mentioned_at) < a.at AND COALESCE(x.occurred_start, x.mentioned_at) "
        ">= a.lo AND {inner}) AND {where} LIMIT %s)"
        " UNION ALL "
        "(SELECT m.id, 2 * a.part + 1 AS side FROM memory_units m WHERE m.bank_id = %s "
        "AND m.context = a.context AND COALESCE(m.occurred_start, m.mentioned_at) = (SELECT MIN(COALESCE("
        "x.occurred_start, x.mentioned_at)) FROM memory_units x WHERE x.bank_id = %s AND x.context = a.context "
        "AND COALESCE(x.occurred_start, x.mentioned_at) > a.at AND COALESCE(x.occurred_start, x.mentioned_at) "
        "<= a.hi AND {inner}) AND {where} LIMIT %s)"
        ") n ORDER BY n.side"
    ),
    # the lexical index's second field, per bank: every fact's preceding text (after an archive import)
    "link_preceding_bank": _SET_PRECEDING,
    # ... of the listed memories and of the memories said at the next moment after each (after a write)
    # (one IN over a union, so the rows are found by id: with two ORed conditions the planner filtered the whole
    # bank, making every write cost time in proportion to the bank's size)
    "link_preceding": (
        _SET_PRECEDING + " AND m.id IN (SELECT unnest(%s::text[]) UNION "
        "SELECT n.id FROM memory_units f JOIN memory_units n ON n.bank_id = f.bank_id AND n.context = f.context "
        f"AND {_m('n')} = {nearest_moment('y', 'f.bank_id', 'f.context', '> ' + _m('f'))} "
        f"WHERE f.bank_id = %s AND f.id = ANY(%s)) AND m.preceding_text IS DISTINCT FROM {_OWN}"
    ),
    "scope_watermark": (
        "SELECT m.updated_at FROM memory_units m WHERE m.bank_id = %s AND {where} ORDER BY m.updated_at DESC LIMIT 1"
    ),
}
