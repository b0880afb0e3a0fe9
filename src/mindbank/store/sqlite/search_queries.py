"""Recall's searches: vector (PostgreSQL), keyword, time window, neighbours and the scope watermark."""

from __future__ import annotations

from mindbank.store.lexical import PRECEDING_WEIGHT, nearest_moment
from mindbank.store.lexical import moment_sql as _m
from mindbank.store.sqlite.memory_queries import preceding_of

# BM25 over the two fields of the index: the memory's text (weight 1) and the text said just before it
_WEIGHTS = f"1.0, {PRECEDING_WEIGHT}"
_RANK = f"bm25(memory_fts, {_WEIGHTS})"

# a fact's preceding text: the text of the facts at the nearest earlier moment of its context (the pieces of one
# long turn share a moment); observations neither have nor lend one


_OWN = preceding_of("memory_units.bank_id", "memory_units.context", _m("memory_units"))
_SET_PRECEDING = (
    f"UPDATE memory_units SET preceding_text = {_OWN} "
    "WHERE bank_id = ? AND context IS NOT NULL AND fact_type <> 'observation'"
)

SEARCH_Q: dict[str, str] = {
    # keyword search ranks the FTS index on its own first (FTS5 answers ORDER BY rank LIMIT without touching the
    # memory table), then keeps the candidates in the bank and filter; keyword_search is the joined fallback
    "keyword_ranked": (
        f"SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? AND rank MATCH 'bm25({_WEIGHTS})' "
        "ORDER BY rank LIMIT ?"
    ),
    # (by rowid: the unary + keeps SQLite from reading the whole bank through a (bank, ...) index instead), in
    # conversation order (context, moment, write order): keyword_search keeps this order among equal BM25 scores, and
    # it is the order the lookup returned them in while SQLite read them through that index
    "keyword_candidates": (
        "SELECT m.seq, m.id FROM memory_units m WHERE m.seq IN ({marks}) AND +m.bank_id = ? AND {where} "
        "ORDER BY m.context, COALESCE(m.occurred_start, m.mentioned_at), m.seq"
    ),
    "keyword_search": (
        f"SELECT m.id, {_RANK} AS score FROM memory_fts JOIN memory_units m ON m.seq = memory_fts.rowid "
        "WHERE memory_fts MATCH ? AND m.bank_id = ? AND {where} ORDER BY score LIMIT ?"
    ),
    # term pruning: the memory count (seq never goes back) and the document count of each candidate stem
    "max_memory_seq": "SELECT MAX(seq) FROM memory_units",
    "term_documents": "SELECT term, doc FROM memory_fts_vocab WHERE term IN ({marks})",
    # recall's temporal arm: memories whose own dates fall inside a window, latest first
    "memories_in_window": (
        "SELECT m.id FROM memory_units m WHERE m.bank_id = ? AND {where} AND ("
        "(m.occurred_start >= ? AND m.occurred_start <= ?) OR (m.occurred_end >= ? AND m.occurred_end <= ?) "
        "OR (m.mentioned_at >= ? AND m.mentioned_at <= ?)) "
        "ORDER BY COALESCE(m.occurred_start, m.mentioned_at) DESC, m.id LIMIT ?"
    ),
    # recall's neighbour expansion: per anchor (context, moment, moment - window, moment + window; all bound as one
    # JSON array, so the statement's text and prepared plan are the same whatever the number of anchors), the ids of
    # at most the last parameter's number of memories of that context at the nearest visible moment before / after
    # it within the window, in write order (the inner query finds that moment on the (bank, context, moment) index;
    # the pieces of one long turn share it), anchor by anchor, before then after. {where} / {inner}: the filter over
    # the outer / inner alias. The sides are ranked on the index alone (rowids) and only the rows kept are read for
    # their ids: a moment of a long turn can hold many more facts than a side keeps
    "memory_neighbours": (
        "WITH a AS (SELECT key AS part, value ->> 0 AS context, value ->> 1 AS at, value ->> 2 AS lo, "
        "value ->> 3 AS hi FROM json_each(?)), "
        "s AS (SELECT a.part, 0 AS side, a.context, (SELECT MAX(COALESCE(x.occurred_start, x.mentioned_at)) "
        "FROM memory_units x WHERE x.bank_id = ? AND x.context = a.context "
        "AND COALESCE(x.occurred_start, x.mentioned_at) < a.at "
        "AND COALESCE(x.occurred_start, x.mentioned_at) >= a.lo AND {inner}) AS moment FROM a "
        "UNION ALL SELECT a.part, 1 AS side, a.context, (SELECT MIN(COALESCE(x.occurred_start, x.mentioned_at)) "
        "FROM memory_units x WHERE x.bank_id = ? AND x.context = a.context "
        "AND COALESCE(x.occurred_start, x.mentioned_at) > a.at "
        "AND COALESCE(x.occurred_start, x.mentioned_at) <= a.hi AND {inner}) AS moment FROM a) "
        "SELECT u.id FROM (SELECT s.part, s.side, m.seq, "
        "ROW_NUMBER() OVER (PARTITION BY s.part, s.side ORDER BY m.seq) AS r FROM s JOIN memory_units m "
        "ON m.bank_id = ? AND m.context = s.context AND COALESCE(m.occurred_start, m.mentioned_at) = s.moment "
        "WHERE {where}) AS t JOIN memory_units u ON u.seq = t.seq WHERE t.r <= ? ORDER BY t.part, t.side, t.seq"
    ),
    # the lexical index's second field, per bank: every fact's preceding text (after an archive import)
    "link_preceding_bank": _SET_PRECEDING,
    # ... of the listed memories and of the memories said at the next moment after each (after a write)
    # (rows whose value is already right are not written: a write inserted in order changes nothing here)
    # The rows are found by id (both the updated rows and the facts just written, f): the unary + keeps SQLite off the
    # (bank, context) index, which it would otherwise walk for the whole bank, making every write cost time in
    # proportion to the bank's size.
    "link_preceding": (
        f"UPDATE memory_units SET preceding_text = {_OWN} "
        "WHERE +bank_id = ? AND +context IS NOT NULL AND fact_type <> 'observation' "
        "AND id IN (SELECT value FROM (SELECT id AS value FROM memory_units WHERE id IN ({marks}) "
        "UNION SELECT n.id FROM memory_units f JOIN memory_units n ON n.bank_id = f.bank_id AND n.context = f.context "
        f"AND {_m('n')} = {nearest_moment('y', 'f.bank_id', 'f.context', '> ' + _m('f'))} "
        f"WHERE +f.bank_id = ? AND f.id IN ({{marks}}))) AND preceding_text IS NOT {_OWN}"
    ),
    "scope_watermark": (
        "SELECT m.updated_at FROM memory_units m WHERE m.bank_id = ? AND {where} ORDER BY m.updated_at DESC LIMIT 1"
    ),
}
