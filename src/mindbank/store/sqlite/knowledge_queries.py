"""The knowledge base: the tree of folders and pages, pages' settings, page vectors and the page log."""

from __future__ import annotations

KNOWLEDGE_Q: dict[str, str] = {
    "list_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = ?",
    "get_knowledge_node": "SELECT * FROM knowledge_nodes WHERE bank_id = ? AND id = ?",
    # the node and its ancestors, nearest first (depth-bounded: a stored cycle cannot loop the query)
    "knowledge_ancestors": (
        "WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? "
        "UNION ALL SELECT k.parent_id, chain.depth + 1 FROM knowledge_nodes k JOIN chain ON k.id = chain.id "
        "WHERE k.bank_id = ? AND k.parent_id IS NOT NULL AND chain.depth < 10000) "
        "SELECT k.* FROM chain JOIN knowledge_nodes k ON k.id = chain.id AND k.bank_id = ? ORDER BY chain.depth"
    ),
    "knowledge_subtree": (
        "WITH RECURSIVE sub(id, depth) AS (SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? "
        "UNION ALL SELECT k.id, sub.depth + 1 FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id "
        "WHERE k.bank_id = ? AND sub.depth < 10000) "
        "SELECT k.* FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = ?"
    ),
    "insert_knowledge_node": (
        "INSERT INTO knowledge_nodes (bank_id, id, kind, name, parent_id, mental_model_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "update_knowledge_node": (
        "UPDATE knowledge_nodes SET name = ?, parent_id = ?, updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    # a page's settings only: a concurrent refresh's content, watermark and history stay untouched
    "update_page_settings": (
        "UPDATE mental_models SET name = ?, source_query = ?, tags = ?, max_tokens = ?, trigger = ? "
        "WHERE bank_id = ? AND id = ?"
    ),
    # the pages' mental models of a subtree (their nodes go with them: ON DELETE CASCADE)
    "delete_subtree_models": (
        "DELETE FROM mental_models WHERE bank_id = ? AND id IN (WITH RECURSIVE sub(id, depth) AS ("
        "SELECT id, 0 FROM knowledge_nodes WHERE bank_id = ? AND id = ? UNION ALL SELECT k.id, sub.depth + 1 "
        "FROM knowledge_nodes k JOIN sub ON k.parent_id = sub.id WHERE k.bank_id = ? AND sub.depth < 10000) "
        "SELECT k.mental_model_id FROM sub JOIN knowledge_nodes k ON k.id = sub.id AND k.bank_id = ? "
        "WHERE k.mental_model_id IS NOT NULL)"
    ),
    "delete_knowledge_node": "DELETE FROM knowledge_nodes WHERE bank_id = ? AND id = ?",
    # a {where} fragment of list_mental_models / count_mental_models
    "exclude_knowledge_pages": (
        " AND NOT EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
        "AND k.mental_model_id = mental_models.id)"
    ),
    "knowledge_page_models": (
        "SELECT {columns} FROM mental_models WHERE bank_id = ? AND EXISTS (SELECT 1 FROM knowledge_nodes k "
        "WHERE k.bank_id = mental_models.bank_id AND k.mental_model_id = mental_models.id)"
    ),
    "page_vectors": "SELECT mental_model_id, text_hash, embedding FROM knowledge_page_vectors WHERE bank_id = ?",
    # a page deleted meanwhile gets no vector (the WHERE EXISTS), rather than a foreign-key error
    "upsert_page_vector": (
        "INSERT INTO knowledge_page_vectors (bank_id, mental_model_id, text_hash, embedding) SELECT ?, ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM mental_models WHERE bank_id = ? AND id = ?) "
        "ON CONFLICT (bank_id, mental_model_id) DO UPDATE SET text_hash = excluded.text_hash, "
        "embedding = excluded.embedding"
    ),
    "knowledge_history_log": (
        "SELECT h.mental_model_id, h.changed_at, json_extract(h.content, '$.kind') AS kind, "
        "json_extract(h.content, '$.outcome') AS outcome, json_extract(h.content, '$.failure_reason') AS reason "
        "FROM mental_model_history h JOIN knowledge_nodes k ON k.bank_id = h.bank_id "
        "AND k.mental_model_id = h.mental_model_id WHERE h.bank_id = ?"
    ),
}
