"""Mental models: rows, citations, history, triggers and the staleness reads."""

from __future__ import annotations

# whether a mental model is a knowledge page (a page is a model placed in the knowledge-base tree), read with it
IS_PAGE = (
    "EXISTS (SELECT 1 FROM knowledge_nodes k WHERE k.bank_id = mental_models.bank_id "
    "AND k.mental_model_id = mental_models.id) AS is_knowledge_page"
)

MODEL_Q: dict[str, str] = {
    # staleness_reads is assembled from these branches into ONE UNION ALL statement (stale_compound); {key} is the
    # scope's position in the page, an integer chosen in code
    "stale_bank": "SELECT 'bank', NULL, last_memory_write_at, NULL FROM banks WHERE bank_id = ?",
    "stale_scope": (
        "SELECT 'scope', {key}, (SELECT MAX(m.updated_at) FROM memory_units m WHERE m.bank_id = ? "
        "AND m.updated_at > ? AND {where}), NULL"
    ),
    "stale_citations": (
        "SELECT CASE WHEN m.id IS NULL THEN 'cite' ELSE 'written' END, c.mental_model_id, m.updated_at, "
        "c.memory_id FROM mental_model_citations c LEFT JOIN memory_units m ON m.id = c.memory_id "
        "WHERE c.bank_id = ? AND c.mental_model_id IN ({marks}) AND (m.id IS NULL OR m.updated_at > ?)"
    ),
    "insert_mental_model": (
        "INSERT INTO mental_models (bank_id, id, name, source_query, content, structured_document, "
        "reflect_response, tags, max_tokens, trigger, last_refreshed_at, last_memory_seen_at, "
        "last_refreshed_source_query, last_refresh_failed_at, last_full_refreshed_at, created_at, "
        "cleared_at, refresh_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "get_mental_model": f"SELECT *, {IS_PAGE} FROM mental_models WHERE bank_id = ? AND id = ?",
    "count_mental_models": "SELECT COUNT(*) AS n FROM mental_models WHERE bank_id = ?{where}",
    "list_mental_models": (
        f"SELECT {{columns}}, {IS_PAGE}, (SELECT COUNT(*) FROM mental_models WHERE bank_id = ?{{where}}) "
        f"AS total_rows FROM mental_models WHERE bank_id = ?{{where}} "
        "ORDER BY last_refreshed_at DESC, id DESC LIMIT ? OFFSET ?"
    ),
    "update_mental_model": (
        "UPDATE mental_models SET name = ?, source_query = ?, content = ?, structured_document = ?, "
        "reflect_response = ?, tags = ?, max_tokens = ?, trigger = ?, last_refreshed_at = ?, "
        "last_memory_seen_at = ?, last_refreshed_source_query = ?, last_refresh_failed_at = ?, "
        "last_full_refreshed_at = ?, cleared_at = ?, refresh_state = ? WHERE bank_id = ? AND id = ?"
    ),
    "delete_citations": "DELETE FROM mental_model_citations WHERE bank_id = ? AND mental_model_id = ?",
    "insert_citation": (
        "INSERT OR IGNORE INTO mental_model_citations (bank_id, mental_model_id, memory_id) VALUES (?, ?, ?)"
    ),
    # a version row is numbered when written: one past the model's newest number, else its first number (0 when it
    # replaced the empty starting state); a failure record has none
    "insert_history": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at, version) VALUES (?, ?, ?, ?, "
        "CASE WHEN ? THEN COALESCE((SELECT MAX(version) + 1 FROM mental_model_history WHERE bank_id = ? "
        "AND mental_model_id = ?), ?) END)"
    ),
    # {kind} is one of the two fixed predicates of HISTORY_KIND
    "trim_history": (
        "DELETE FROM mental_model_history WHERE bank_id = ? AND mental_model_id = ? AND {kind} "
        "AND id NOT IN (SELECT id FROM mental_model_history WHERE bank_id = ? AND "
        "mental_model_id = ? AND {kind} ORDER BY changed_at DESC, id DESC LIMIT ?)"
    ),
    "delete_mental_model": "DELETE FROM mental_models WHERE bank_id = ? AND id = ?",
    "list_history": (
        "SELECT id, mental_model_id, content, changed_at, version FROM mental_model_history "
        "WHERE bank_id = ? AND mental_model_id = ? ORDER BY changed_at DESC, id DESC"
    ),
    # "truthy": present and not null, false, 0 or "" (json_extract yields 0 for false)
    "list_models_with_trigger": (
        "SELECT * FROM mental_models WHERE json_extract(trigger, '$.' || ?) IS NOT NULL "
        "AND json_extract(trigger, '$.' || ?) NOT IN (0, '') AND (? IS NULL OR bank_id = ?)"
    ),
}

# trim_history's {kind}: the history rows of a failed refresh (True) or of a written one (False)
HISTORY_KIND = {
    True: "json_extract(content, '$.kind') = 'refresh_failed'",
    False: "json_extract(content, '$.kind') IS NULL",
}
