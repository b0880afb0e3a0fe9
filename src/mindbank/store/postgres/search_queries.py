"""Recall's searches: vector (PostgreSQL), keyword, time window, neighbours and the scope watermark."""

from __future__ import annotations

SEARCH_Q: dict[str, str] = {
    # search knobs are transaction-local (set_config(..., true) == SET LOCAL) so pooled connections stay clean
    "set_ef_search": "SELECT set_config('hnsw.ef_search', %s, true)",
    "set_iterative_scan": "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)",
    "vector_search": (
        "SELECT m.id, m.embedding <=> %s::vector AS distance FROM memory_units m "
        "WHERE m.bank_id = %s AND {where} ORDER BY m.embedding <=> %s::vector LIMIT %s"
    ),
    "keyword_search": (
        "SELECT m.id, ts_rank_cd(m.text_tsv, q.query) AS score FROM memory_units m, "
        "to_tsquery('english', %s) AS q(query) "
        "WHERE m.bank_id = %s AND m.text_tsv @@ q.query AND {where} ORDER BY score DESC, m.seq LIMIT %s"
    ),
    # recall's temporal arm: memories whose own dates fall inside a window, latest first
    "memories_in_window": (
        "SELECT m.id FROM memory_units m WHERE m.bank_id = %s AND {where} AND ("
        "(m.occurred_start >= %s AND m.occurred_start <= %s) OR (m.occurred_end >= %s AND m.occurred_end <= %s) "
        "OR (m.mentioned_at >= %s AND m.mentioned_at <= %s)) "
        "ORDER BY COALESCE(m.occurred_start, m.mentioned_at) DESC, m.id LIMIT %s"
    ),
    # recall's neighbour expansion: per anchor (context, moment), the memories of that context at the nearest
    # moments before / after it within a window (a few rows: the pieces of one long turn share a moment); the
    # parts are joined with UNION ALL, one pair per anchor ({n}: the part's number: even before, odd after)
    "neighbours_before": (
        "SELECT * FROM (SELECT {n} AS part, m.id, COALESCE(m.occurred_start, m.mentioned_at) AS moment "
        "FROM memory_units m "
        "WHERE m.bank_id = %s AND m.context = %s AND COALESCE(m.occurred_start, m.mentioned_at) < %s "
        "AND COALESCE(m.occurred_start, m.mentioned_at) >= %s AND {where} ORDER BY moment DESC LIMIT %s) AS p{n}"
    ),
    "neighbours_after": (
        "SELECT * FROM (SELECT {n} AS part, m.id, COALESCE(m.occurred_start, m.mentioned_at) AS moment "
        "FROM memory_units m "
        "WHERE m.bank_id = %s AND m.context = %s AND COALESCE(m.occurred_start, m.mentioned_at) > %s "
        "AND COALESCE(m.occurred_start, m.mentioned_at) <= %s AND {where} ORDER BY moment ASC LIMIT %s) AS p{n}"
    ),
    "scope_watermark": (
        "SELECT m.updated_at FROM memory_units m WHERE m.bank_id = %s AND {where} ORDER BY m.updated_at DESC LIMIT 1"
    ),
}
