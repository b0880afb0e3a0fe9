"""The knowledge base: the tree of folders and pages, pages' settings, page vectors and the page log."""

from __future__ import annotations

KNOWLEDGE_Q: dict[str, str] = {
    # one knowledge-base writer per bank at a time (SQLite: BEGIN IMMEDIATE): the parent checks, the cycle check
    # and the write then see one tree
    "lock_knowledge_tree": "SELECT pg_advisory_xact_lock(hashtextextended('mindbank.knowledge:' || %s, 0))",
    "list_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = %s",
    "get_knowledge_node": "SELECT * FROM knowledge_nodes WHERE bank_id = %s AND id = %s",
    # the node and its ancestors, nearest first (depth-bounded: a stored cycle cannot loop the query)
    "knowledge_ancestors": (
        "WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s "
        "UNION ALL SELECT k.parent_id, chain.depth + 1 FROM knowledge_nodes k JOIN chain ON k.id = chain.id "
        "WHERE k.bank_id = %s AND k.parent_id IS NOT NULL AND chain.depth < 10000) "
        "SELECT k.* FROM chain JOIN knowledge_nodes k ON k.id = chain.id AND k.bank_id = %s ORDER BY chain.depth"
    ),
    "knowledge_subtree": (
        "WITH RECURSIVE sub(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s "
        "UNION ALL SELECT k.id, sub.depth + 1 FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id "
        "WHERE k.bank_id = %s AND sub.depth < 10000) "
        "SELECT k.* FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = %s"
    ),
    "insert_knowledge_node": (
        "INSERT INTO knowledge_nodes (bank_id, id, kind, name, parent_id, mental_model_id, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "update_knowledge_node": (
        "UPDATE knowledge_nodes SET name = %s, parent_id = %s, updated_at = %s WHERE bank_id = %s AND id = %s"
    ),
    # a page's settings only: a concurrent refresh's content, watermark and history stay untouched
    "update_page_settings": (
        "UPDATE mental_models SET name = %s, source_query = %s, tags = %s, max_tokens = %s, trigger = %s "
        "WHERE bank_id = %s AND id = %s"
    ),
    # the pages' mental models of a subtree (their nodes go with them: ON DELETE CASCADE)
    "delete_subtree_models": (
        "DELETE FROM mental_models WHERE bank_id = %s AND id IN (WITH RECURSIVE sub(id, depth) AS ("
        "SELECT id, 0 FROM knowledge_nodes WHERE bank_id = %s AND id = %s UNION ALL SELECT k.id, sub.depth + 1 "
        "FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id WHERE k.bank_id = %s AND sub.depth < 10000) "
        "SELECT k.mental_model_id FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = %s "
        "WHERE k.mental_model_id IS NOT NULL)"
    ),
    "delete_knowledge_node": "DELETE FROM knowledge_nodes WHERE bank_id = %s AND id = %s",
    # a {where} fragment of list_mental_models / count_mental_models
    "exclude_knowledge_pages": (
        " AND NOT EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
        "AND k.mental_model_id = mental_models.id)"
    ),
    "knowledge_page_models": (
        "SELECT {columns} FROM mental_models WHERE bank_id = %s AND EXISTS (SELECT 1 FROM knowledge_nodes k "
        "WHERE k.bank_id = mental_models.bank_id AND k.mental_model_id = mental_models.id)"
    ),
    "page_vectors": "SELECT mental_model_id, text_hash, embedding FROM knowledge_page_vectors WHERE bank_id = %s",
    # a page deleted meanwhile gets no vector (the WHERE EXISTS), rather than a foreign-key error
    "upsert_page_vector": (
        "INSERT INTO knowledge_page_vectors (bank_id, mental_model_id, text_hash, embedding) SELECT %s, %s, %s, %s "
        "WHERE EXISTS (SELECT 1 FROM mental_models WHERE bank_id = %s AND id = %s) "
        "ON CONFLICT (bank_id, mental_model_id) DO UPDATE SET text_hash = excluded.text_hash, "
        "embedding = excluded.embedding"
    ),
    "knowledge_history_log": (
        "SELECT h.mental_model_id, h.changed_at, h.content->>'kind' AS kind, "
        "h.content->>'outcome' AS outcome, h.content->>'failure_reason' AS reason "
        "FROM mental_model_history h JOIN knowledge_nodes k ON k.bank_id = h.bank_id "
        "AND k.mental_model_id = h.mental_model_id WHERE h.bank_id = %s"
    ),
}
