"""Named statements of the PostgreSQL store for a bank's resources beyond memories and mental models: documents
(listing, chunks, change history, deletion, retagging), directives, webhooks and their deliveries, operation
administration, the bank-wide LLM request log, worker heartbeats and the schema version. :mod:`.queries` merges them
into ``Q``; the keys are the SQLite store's (:mod:`mindbank.store.sqlite.resource_queries`).

Slots filled in code with fixed fragments only: ``{where}`` (a compiled filter, itself parameterised), ``{order}``
(one of two column names) and ``{hits}`` (which fields a text search matched, itself parameterised). Optional
filters bind NULL to switch their condition off, cast so PostgreSQL knows the parameter's type.
"""

from __future__ import annotations

_CHUNK = (
    "SELECT c.id, c.bank_id, c.document_id, c.chunk_index, c.text, COALESCE((SELECT MIN(m.created_at) "
    "FROM memory_units m WHERE m.bank_id = c.bank_id AND m.document_id = c.document_id AND m.chunk_id = c.id), "
    "d.created_at) AS created_at FROM chunks c JOIN documents d ON d.bank_id = c.bank_id AND d.id = c.document_id "
)
# the reference's "operation" of a traced call: reflect (a reflect request's id), retain, consolidation, else a
# mental-model refresh ('%%' is a literal % in a psycopg statement)
_OPERATION = (
    "(%s::text IS NULL OR (CASE WHEN operation_id LIKE 'reflect-%%' THEN 'reflect' WHEN scope = 'retain_extract' "
    "THEN 'retain' WHEN scope = 'consolidation' THEN 'consolidation' ELSE 'refresh' END) = %s)"
)
_LLM_FILTER = (
    "bank_id = %s AND (%s::text IS NULL OR (%s::text = 'error') = (error IS NOT NULL)) "
    "AND (%s::text IS NULL OR scope = %s) AND (%s::text IS NULL OR provider = %s) "
    "AND (%s::text IS NULL OR operation_id = %s) AND (%s::timestamptz IS NULL OR created_at >= %s) "
    f"AND (%s::timestamptz IS NULL OR created_at < %s) AND {_OPERATION}"
)

RESOURCE_Q: dict[str, str] = {
    # ---------------------------------------------------------------- documents
    # the page is chosen first (on the time index), then only its rows get their text length and memory count
    "list_documents": (
        "SELECT d.bank_id, d.id, d.content_hash, d.tags, d.metadata, d.context, d.created_at, d.updated_at, "
        "length(d.original_text) AS text_length, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = d.bank_id "
        "AND m.document_id = d.id) AS memory_count, {hits} FROM (SELECT d.bank_id, d.id FROM documents d "
        'WHERE d.bank_id = %s AND {where} ORDER BY d.{order} DESC, d.id COLLATE "C" DESC LIMIT %s OFFSET %s) page '
        'JOIN documents d ON d.bank_id = page.bank_id AND d.id = page.id ORDER BY d.{order} DESC, d.id COLLATE "C" DESC'
    ),
    "count_documents": "SELECT COUNT(*) AS n FROM documents d WHERE d.bank_id = %s AND {where}",
    "get_document_summary": (
        "SELECT d.*, length(d.original_text) AS text_length, 0 AS memory_count FROM documents d "
        "WHERE d.bank_id = %s AND d.id = %s"
    ),
    "document_memories_by_type": (
        "SELECT fact_type, COUNT(*) AS n FROM memory_units WHERE bank_id = %s AND document_id = %s GROUP BY fact_type"
    ),
    "list_chunks": _CHUNK + "WHERE c.bank_id = %s AND c.document_id = %s ORDER BY c.chunk_index LIMIT %s OFFSET %s",
    # the chunks at many (document, index) positions at once, bound as one JSON array of pairs
    "chunks_at": (
        _CHUNK + "WHERE c.bank_id = %s AND (c.document_id, c.chunk_index) IN "
        "(SELECT e ->> 0, (e ->> 1)::int FROM jsonb_array_elements(%s::jsonb) AS e)"
    ),
    "count_chunks": "SELECT COUNT(*) AS n FROM chunks WHERE bank_id = %s AND document_id = %s",
    "get_chunk": _CHUNK + "WHERE c.id = %s",
    "lock_document": "SELECT 1 FROM documents WHERE bank_id = %s AND id = %s FOR UPDATE",
    "delete_document_row": "DELETE FROM documents WHERE bank_id = %s AND id = %s",
    "retag_document": "UPDATE documents SET tags = %s, updated_at = %s WHERE bank_id = %s AND id = %s",
    "retag_document_memories": (
        "UPDATE memory_units SET tags = %s, consolidated_at = NULL, updated_at = %s WHERE bank_id = %s "
        "AND document_id = %s AND fact_type != 'observation'"
    ),
    "insert_document_event": (
        "INSERT INTO document_events (bank_id, document_id, kind, operation_id, fact_id, facts_added, "
        "facts_removed, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "insert_fact_event": (
        "INSERT INTO document_events (bank_id, document_id, kind, fact_id, facts_removed, created_at) "
        "SELECT m.bank_id, m.document_id, %s, m.id, %s, %s FROM memory_units m WHERE m.bank_id = %s AND m.id = %s "
        "AND EXISTS (SELECT 1 FROM documents d WHERE d.bank_id = m.bank_id AND d.id = m.document_id)"
    ),
    "list_document_events": (
        "SELECT * FROM document_events WHERE bank_id = %s AND document_id = %s "
        "ORDER BY created_at DESC, id DESC LIMIT %s OFFSET %s"
    ),
    "count_document_events": "SELECT COUNT(*) AS n FROM document_events WHERE bank_id = %s AND document_id = %s",
    # ---------------------------------------------------------------- directives
    "insert_directive": (
        "INSERT INTO directives (bank_id, id, name, content, priority, is_active, tags, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "get_directive": "SELECT * FROM directives WHERE bank_id = %s AND id = %s",
    "list_directives": "SELECT * FROM directives WHERE bank_id = %s AND (NOT %s OR is_active)",
    "update_directive": (
        "UPDATE directives SET name = %s, content = %s, priority = %s, is_active = %s, tags = %s, updated_at = %s "
        "WHERE bank_id = %s AND id = %s"
    ),
    "delete_directive": "DELETE FROM directives WHERE bank_id = %s AND id = %s",
    # ---------------------------------------------------------------- webhooks and deliveries
    "insert_webhook": (
        "INSERT INTO webhooks (bank_id, id, url, secret, event_types, enabled, http_config, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "get_webhook": "SELECT * FROM webhooks WHERE bank_id = %s AND id = %s",
    "list_webhooks": 'SELECT * FROM webhooks WHERE bank_id = %s ORDER BY created_at, id COLLATE "C"',
    "update_webhook": (
        "UPDATE webhooks SET url = %s, secret = %s, event_types = %s, enabled = %s, http_config = %s, "
        "updated_at = %s WHERE bank_id = %s AND id = %s"
    ),
    "delete_webhook": "DELETE FROM webhooks WHERE bank_id = %s AND id = %s",
    "insert_delivery": (
        "INSERT INTO webhook_deliveries (id, bank_id, webhook_id, event_id, event_type, url, payload, status, "
        "attempts, operation_id, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    "get_delivery": "SELECT * FROM webhook_deliveries WHERE id = %s",
    "update_delivery": (
        "UPDATE webhook_deliveries SET status = %s, attempts = %s, next_retry_at = %s, last_error = %s, "
        "last_response_status = %s, last_response_body = %s, last_attempt_at = %s, updated_at = %s WHERE id = %s"
    ),
    "list_deliveries": (
        "SELECT * FROM webhook_deliveries WHERE bank_id = %s AND webhook_id = %s AND "
        '(%s::timestamptz IS NULL OR created_at < %s) ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT %s'
    ),
    # ---------------------------------------------------------------- operation administration and metrics
    "requeue_operation": (
        "UPDATE operations SET status = 'pending', retry_count = 0, next_retry_at = NULL, error = NULL, "
        "result = NULL, completed_at = NULL, worker_id = NULL, lease_expires_at = NULL, updated_at = %s "
        "WHERE bank_id = %s AND id = %s AND status = 'failed'"
    ),
    "delete_operation": "DELETE FROM operations WHERE bank_id = %s AND id = %s AND status != 'processing'",
    "operation_counts": "SELECT operation_type, status, COUNT(*) AS n FROM operations GROUP BY operation_type, status",
    "oldest_due_pending": (
        "SELECT MIN(created_at) AS oldest FROM operations WHERE status = 'pending' "
        "AND (next_retry_at IS NULL OR next_retry_at <= %s)"
    ),
    # ---------------------------------------------------------------- the bank's LLM request log
    "page_llm_requests": (
        f'SELECT * FROM llm_requests WHERE {_LLM_FILTER} ORDER BY created_at DESC, id COLLATE "C" DESC '
        "LIMIT %s OFFSET %s"
    ),
    "count_llm_requests": f"SELECT COUNT(*) AS n FROM llm_requests WHERE {_LLM_FILTER}",
    "llm_request_buckets": (
        "SELECT date_trunc(%s, created_at) AS bucket, error IS NOT NULL AS failed, COUNT(*) AS n, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens FROM llm_requests "
        f"WHERE bank_id = %s AND created_at >= %s AND {_OPERATION} GROUP BY bucket, failed ORDER BY bucket"
    ),
    # ---------------------------------------------------------------- health
    "schema_version": "SELECT MAX(version) AS v FROM schema_version",
    "beat": (
        "INSERT INTO worker_heartbeats (worker_id, host, pid, started_at, last_seen_at) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at"
    ),
    "list_heartbeats": "SELECT * FROM worker_heartbeats WHERE last_seen_at >= %s ORDER BY last_seen_at DESC",
    "drop_heartbeat": "DELETE FROM worker_heartbeats WHERE worker_id = %s",
    "purge_heartbeats": "DELETE FROM worker_heartbeats WHERE last_seen_at < %s",
    # ---------------------------------------------------------------- what cites a memory
    "citing_models": (
        "SELECT c.mental_model_id FROM mental_model_citations c WHERE c.bank_id = %s AND c.memory_id = %s "
        "ORDER BY c.mental_model_id"
    ),
}
