"""Mental models: rows, citations, history, triggers and the staleness reads."""

from __future__ import annotations

# whether a mental model is a knowledge page (a page is a model placed in the knowledge-base tree), read with it
IS_PAGE = (
    "EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
    "AND k.mental_model_id = mental_models.id) AS is_knowledge_page"
)

MODEL_Q: dict[str, str] = {
    # staleness_reads is assembled from these branches into ONE UNION ALL statement
    "stale_bank": (
        "SELECT 'bank' AS kind, NULL::text AS key, last_memory_write_at AS at, NULL::text AS memory_id "
        "FROM banks WHERE bank_id = %s"
    ),
    "stale_scope": (
        "SELECT 'scope', %s::text, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = %s "
        "AND m.updated_at > %s AND {where}), NULL::text"
    ),
    "stale_citations": (
        "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, c.memory_id "
        "FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
        "WHERE c.bank_id = %s AND c.mental_model_id = ANY(%s::text[]) "
        "AND (m.id IS NULL OR m.updated_at > %s::timestamptz)"
    ),
    "insert_mental_model": (
        "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, reflect_response, "
        "tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, last_refreshed_source_query, "
        "last_refresh_failed_at, last_full_refreshed_at, created_at, cleared_at, refresh_state) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "get_mental_model": f"SELECT *, {IS_PAGE} FROM mental_models WHERE bank_id = %s AND id = %s",
    "count_mental_models": "SELECT COUNT(*) AS n FROM mental_models WHERE bank_id = %s{where}",
    "list_mental_models": (
        f"SELECT {{columns}}, {IS_PAGE}, (SELECT COUNT(*) FROM mental_models WHERE bank_id = %s{{where}}) "
        f"AS total_rows FROM mental_models WHERE bank_id = %s{{where}} "
        'ORDER BY last_refreshed_at DESC, id COLLATE "C" DESC LIMIT %s OFFSET %s'
    ),
    "update_mental_model": (
        "UPDATE mental_models SET name = %s, source_query = %s, content = %s, structured_document = %s, "
        "reflect_response = %s, tags = %s::text[], max_tokens = %s, trigger = %s, last_refreshed_at = %s, "
        "last_memory_seen_at = %s, last_refreshed_source_query = %s, last_refresh_failed_at = %s, "
        "last_full_refreshed_at = %s, cleared_at = %s, refresh_state = %s WHERE bank_id = %s AND id = %s"
    ),
    "delete_citations": "DELETE FROM mental_model_citations WHERE bank_id = %s AND mental_model_id = %s",
    "insert_citation": (
        "INSERT INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (%s, %s, %s) "
        "ON CONFLICT DO NOTHING"
    ),
    # a version row is numbered when written: one past the model's newest number, else its first number (0 when it
    # replaced the empty starting state); a failure record has none
    "insert_history": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at, version) "
        "VALUES (%s, %s, %s, clock_timestamp(), CASE WHEN %s THEN COALESCE((SELECT MAX(version) + 1 "
        "FROM mental_model_history WHERE bank_id = %s AND mental_model_id = %s), %s) END)"
    ),
    # {kind} is one of the two fixed predicates of HISTORY_KIND
    "trim_history": (
        "DELETE FROM mental_model_history WHERE bank_id = %s AND mental_model_id = %s AND {kind} "
        "AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = %s AND mental_model_id = %s AND {kind} "
        "ORDER BY changed_at DESC, id DESC LIMIT %s)"
    ),
    "delete_mental_model": "DELETE FROM mental_models WHERE bank_id = %s AND id = %s",
    "list_history": (
        "SELECT id, mental_model_id, content, changed_at, version FROM mental_model_history "
        "WHERE bank_id = %s AND mental_model_id = %s ORDER BY changed_at DESC, id DESC"
    ),
    # "truthy" as the SQLite store reads it: present and not null, false, 0 or ""
    "list_models_with_trigger": (
        "SELECT * FROM mental_models WHERE trigger -> %s::text IS NOT NULL "
        "AND trigger -> %s::text NOT IN ('null'::jsonb, 'false'::jsonb, '0'::jsonb, '\"\"'::jsonb) "
        "AND (%s::text IS NULL OR bank_id = %s::text) "
        'ORDER BY created_at, bank_id COLLATE "C", id COLLATE "C"'
    ),
}

# trim_history's {kind}: the history rows of a failed refresh (True) or of a written one (False)
HISTORY_KIND = {
    True: "content->>'kind' = 'refresh_failed'",
    False: "content->>'kind' IS NULL",
}
