"""Named statements of the SQLite store for a bank's resources beyond memories and mental models: documents (listing,
chunks, change history, deletion, retagging), directives, webhooks and their deliveries, operation administration,
the bank-wide LLM request log, worker heartbeats and the schema version. :mod:`.queries` merges them into ``Q``;
the keys are the PostgreSQL store's (:mod:`mindbank.store.postgres.resource_queries`).

Slots filled in code with fixed fragments only: ``{where}`` (a compiled filter, itself parameterised), ``{order}``
(one of two column names) and ``{hits}`` (which fields a text search matched, itself parameterised).
"""

from __future__ import annotations

# a chunk with its age: as old as the facts drawn from it; one that yielded none is as old as its document
_CHUNK = (
    "SELECT c.id, c.bank_id, c.document_id, c.chunk_index, c.text, COALESCE((SELECT MIN(m.created_at) "
    "FROM memory_units m WHERE m.bank_id = c.bank_id AND m.document_id = c.document_id AND m.chunk_id = c.id), "
    "d.created_at) AS created_at FROM chunks c JOIN documents d ON d.bank_id = c.bank_id AND d.id = c.document_id "
)

# every filter of the LLM request log is optional: a NULL parameter switches its condition off. The reference's
# "operation" of a traced call: reflect (a reflect request's id), retain, consolidation, else a mental-model refresh
_OPERATION = (
    "(? IS NULL OR (CASE WHEN operation_id LIKE 'reflect-%' THEN 'reflect' WHEN scope = 'retain_extract' "
    "THEN 'retain' WHEN scope = 'consolidation' THEN 'consolidation' ELSE 'refresh' END) = ?)"
)
_LLM_FILTER = (
    "bank_id = ? AND (? IS NULL OR (? = 'error') = (error IS NOT NULL)) AND (? IS NULL OR scope = ?) "
    "AND (? IS NULL OR provider = ?) AND (? IS NULL OR operation_id = ?) AND (? IS NULL OR created_at >= ?) "
    f"AND (? IS NULL OR created_at < ?) AND {_OPERATION}"
)

RESOURCE_Q: dict[str, str] = {
    # ---------------------------------------------------------------- documents
    # the page is chosen first (on the time index), then only its rows get their text length and memory count
    "list_documents": (
        "SELECT d.bank_id, d.id, d.content_hash, d.tags, d.metadata, d.context, d.created_at, d.updated_at, "
        "length(d.original_text) AS text_length, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = d.bank_id "
        "AND m.document_id = d.id) AS memory_count, {hits} FROM (SELECT d.bank_id, d.id FROM documents d "
        "WHERE d.bank_id = ? AND {where} ORDER BY d.{order} DESC, d.id DESC LIMIT ? OFFSET ?) page "
        "JOIN documents d ON d.bank_id = page.bank_id AND d.id = page.id ORDER BY d.{order} DESC, d.id DESC"
    ),
    "count_documents": "SELECT COUNT(*) AS n FROM documents d WHERE d.bank_id = ? AND {where}",
    "get_document_summary": (
        "SELECT d.*, length(d.original_text) AS text_length, 0 AS memory_count FROM documents d "
        "WHERE d.bank_id = ? AND d.id = ?"
    ),
    "document_memories_by_type": (
        "SELECT fact_type, COUNT(*) AS n FROM memory_units WHERE bank_id = ? AND document_id = ? GROUP BY fact_type"
    ),
    "list_chunks": _CHUNK + "WHERE c.bank_id = ? AND c.document_id = ? ORDER BY c.chunk_index LIMIT ? OFFSET ?",
    # the chunks at many (document, index) positions at once, bound as one JSON array of pairs
    "chunks_at": (
        _CHUNK + "WHERE c.bank_id = ? AND (c.document_id, c.chunk_index) IN "
        "(SELECT value ->> 0, value ->> 1 FROM json_each(?))"
    ),
    "count_chunks": "SELECT COUNT(*) AS n FROM chunks WHERE bank_id = ? AND document_id = ?",
    "get_chunk": _CHUNK + "WHERE c.id = ?",
    "lock_document": "SELECT 1 FROM documents WHERE bank_id = ? AND id = ?",
    "delete_document_row": "DELETE FROM documents WHERE bank_id = ? AND id = ?",
    "retag_document": "UPDATE documents SET tags = ?, updated_at = ? WHERE bank_id = ? AND id = ?",
    # a retag is a memory write: the facts go back to consolidation under their new tags
    "retag_document_memories": (
        "UPDATE memory_units SET tags = ?, consolidated_at = NULL, updated_at = ? WHERE bank_id = ? "
        "AND document_id = ? AND fact_type != 'observation'"
    ),
    "insert_document_event": (
        "INSERT INTO document_events (bank_id, document_id, kind, operation_id, fact_id, facts_added, "
        "facts_removed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # an edit or delete of a fact is an event of its document (if it came from one still stored)
    "insert_fact_event": (
        "INSERT INTO document_events (bank_id, document_id, kind, fact_id, facts_removed, created_at) "
        "SELECT m.bank_id, m.document_id, ?, m.id, ?, ? FROM memory_units m WHERE m.bank_id = ? AND m.id = ? "
        "AND EXISTS (SELECT 1 FROM documents d WHERE d.bank_id = m.bank_id AND d.id = m.document_id)"
    ),
    "list_document_events": (
        "SELECT * FROM document_events WHERE bank_id = ? AND document_id = ? "
        "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    ),
    "count_document_events": "SELECT COUNT(*) AS n FROM document_events WHERE bank_id = ? AND document_id = ?",
    # ---------------------------------------------------------------- directives
    "insert_directive": (
        "INSERT INTO directives (bank_id, id, name, content, priority, is_active, tags, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "get_directive": "SELECT * FROM directives WHERE bank_id = ? AND id = ?",
    "list_directives": "SELECT * FROM directives WHERE bank_id = ? AND (? = 0 OR is_active = 1)",
    "update_directive": (
        "UPDATE directives SET name = ?, content = ?, priority = ?, is_active = ?, tags = ?, updated_at = ? "
        "WHERE bank_id = ? AND id = ?"
    ),
    "delete_directive": "DELETE FROM directives WHERE bank_id = ? AND id = ?",
    # ---------------------------------------------------------------- webhooks and deliveries
    "insert_webhook": (
        "INSERT INTO webhooks (bank_id, id, url, secret, event_types, enabled, http_config, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "get_webhook": "SELECT * FROM webhooks WHERE bank_id = ? AND id = ?",
    "list_webhooks": "SELECT * FROM webhooks WHERE bank_id = ? ORDER BY created_at, id",
    "update_webhook": (
        "UPDATE webhooks SET url = ?, secret = ?, event_types = ?, enabled = ?, http_config = ?, updated_at = ? "
        "WHERE bank_id = ? AND id = ?"
    ),
    "delete_webhook": "DELETE FROM webhooks WHERE bank_id = ? AND id = ?",
    "insert_delivery": (
        "INSERT INTO webhook_deliveries (id, bank_id, webhook_id, event_id, event_type, url, payload, status, "
        "attempts, operation_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "get_delivery": "SELECT * FROM webhook_deliveries WHERE id = ?",
    "update_delivery": (
        "UPDATE webhook_deliveries SET status = ?, attempts = ?, next_retry_at = ?, last_error = ?, "
        "last_response_status = ?, last_response_body = ?, last_attempt_at = ?, updated_at = ? WHERE id = ?"
    ),
    "list_deliveries": (
        "SELECT * FROM webhook_deliveries WHERE bank_id = ? AND webhook_id = ? AND (? IS NULL OR created_at < ?) "
        "ORDER BY created_at DESC, id DESC LIMIT ?"
    ),
    # ---------------------------------------------------------------- operation administration and metrics
    "requeue_operation": (
        "UPDATE operations SET status = 'pending', retry_count = 0, next_retry_at = NULL, error = NULL, "
        "result = NULL, completed_at = NULL, worker_id = NULL, lease_expires_at = NULL, updated_at = ? "
        "WHERE bank_id = ? AND id = ? AND status = 'failed'"
    ),
    "delete_operation": "DELETE FROM operations WHERE bank_id = ? AND id = ? AND status != 'processing'",
    "operation_counts": "SELECT operation_type, status, COUNT(*) AS n FROM operations GROUP BY operation_type, status",
    "oldest_due_pending": (
        "SELECT MIN(created_at) AS oldest FROM operations WHERE status = 'pending' "
        "AND (next_retry_at IS NULL OR next_retry_at <= ?)"
    ),
    # ---------------------------------------------------------------- the bank's LLM request log
    "page_llm_requests": (
        f"SELECT * FROM llm_requests WHERE {_LLM_FILTER} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    ),
    "count_llm_requests": f"SELECT COUNT(*) AS n FROM llm_requests WHERE {_LLM_FILTER}",
    # buckets of an hour (the first 13 characters of the ISO stamp) or a day (10)
    "llm_request_buckets": (
        "SELECT substr(created_at, 1, CASE ? WHEN 'hour' THEN 13 ELSE 10 END) AS bucket, error IS NOT NULL AS failed, "
        "COUNT(*) AS n, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens FROM llm_requests "
        f"WHERE bank_id = ? AND created_at >= ? AND {_OPERATION} GROUP BY bucket, failed ORDER BY bucket"
    ),
    # ---------------------------------------------------------------- health
    "schema_version": "SELECT MAX(version) AS v FROM schema_version",
    "beat": (
        "INSERT INTO worker_heartbeats (worker_id, host, pid, started_at, last_seen_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = excluded.last_seen_at"
    ),
    "list_heartbeats": "SELECT * FROM worker_heartbeats WHERE last_seen_at >= ? ORDER BY last_seen_at DESC",
    "drop_heartbeat": "DELETE FROM worker_heartbeats WHERE worker_id = ?",
    "purge_heartbeats": "DELETE FROM worker_heartbeats WHERE last_seen_at < ?",
    # ---------------------------------------------------------------- what cites a memory
    "citing_models": (
        "SELECT c.mental_model_id FROM mental_model_citations c WHERE c.bank_id = ? AND c.memory_id = ? "
        "ORDER BY c.mental_model_id"
    ),
}
