"""Named statements of the PostgreSQL store for bank transfer — the pages a snapshot reads, the ids an import
checks for collisions, the rows an import writes as archived — and for stored files. :mod:`.queries` merges them
into ``Q``; the keys are the SQLite store's (:mod:`mindbank.store.sqlite.transfer_queries`).
"""

from __future__ import annotations

# every memory column a snapshot reads: the stored row itself, embedding and bookkeeping included (not the generated
# search column)
_MEMORY = (
    "m.seq, m.id, m.bank_id, m.document_id, m.chunk_id, m.text, m.fact_type, m.tags, m.context, m.metadata, "
    "m.occurred_start, m.occurred_end, m.mentioned_at, m.source_memory_ids, m.proof_count, m.consolidated_at, "
    "m.created_at, m.updated_at, m.embedding, m.mention_count, m.last_mentioned_at, m.repeat_key"
)

TRANSFER_Q: dict[str, str] = {
    # ---------------------------------------------------------------- bank transfer: snapshot reads (keyset pages)
    # the first statement of the snapshot transaction: every page then reads the same commit
    "set_snapshot": "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    "snap_documents": "SELECT * FROM documents WHERE bank_id = %s AND id > %s ORDER BY id LIMIT %s",
    "snap_documents_in": "SELECT * FROM documents WHERE bank_id = %s AND id = ANY(%s::text[]) ORDER BY id",
    "snap_chunks_in": (
        "SELECT * FROM chunks WHERE bank_id = %s AND document_id = ANY(%s::text[]) ORDER BY document_id, chunk_index"
    ),
    # %s = whether observations are read too
    # the chunk's position in its document is read along (an archive names chunks by position)
    "snap_memories": (
        f"SELECT {_MEMORY}, c.chunk_index FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id WHERE m.bank_id = %s "
        "AND (%s OR m.fact_type <> 'observation') AND m.seq > %s ORDER BY m.seq LIMIT %s"
    ),
    "snap_document_memories": (
        f"SELECT {_MEMORY}, c.chunk_index FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id WHERE m.bank_id = %s AND m.document_id = ANY(%s::text[]) "
        "AND m.fact_type <> 'observation' AND m.seq > %s ORDER BY m.seq LIMIT %s"
    ),
    "snap_mental_models": "SELECT * FROM mental_models WHERE bank_id = %s ORDER BY id",
    "snap_history": (
        "SELECT id, mental_model_id, content, changed_at, version FROM mental_model_history "
        "WHERE bank_id = %s AND mental_model_id = %s ORDER BY id"
    ),
    "snap_operations": "SELECT * FROM operations WHERE bank_id = %s AND id > %s ORDER BY id LIMIT %s",
    "snap_llm_requests": "SELECT * FROM llm_requests WHERE bank_id = %s AND id > %s ORDER BY id LIMIT %s",
    # ---------------------------------------------------------------- bank transfer: ids an import would collide with
    "existing_memory_ids": "SELECT id FROM memory_units WHERE id = ANY(%s::text[])",
    "existing_chunk_ids": "SELECT id FROM chunks WHERE id = ANY(%s::text[])",
    "existing_operation_ids": "SELECT id FROM operations WHERE id = ANY(%s::text[])",
    "existing_llm_request_ids": "SELECT id FROM llm_requests WHERE id = ANY(%s::text[])",
    "existing_history_ids": "SELECT id FROM mental_model_history WHERE id = ANY(%s::bigint[])",
    "existing_document_ids": "SELECT id FROM documents WHERE bank_id = %s AND id = ANY(%s::text[])",
    "existing_mental_model_ids": "SELECT id FROM mental_models WHERE bank_id = %s AND id = ANY(%s::text[])",
    # ---------------------------------------------------------------- bank transfer: import (rows as archived)
    "import_bank": (
        "INSERT INTO banks (bank_id, name, config, created_at, updated_at, last_memory_write_at, mission, "
        "disposition) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    # the restored bank's stamp covers every imported memory (its own stamp may be newer: a deletion);
    # GREATEST ignores NULL
    "import_bank_stamp": (
        "UPDATE banks SET last_memory_write_at = GREATEST(last_memory_write_at, %s::timestamptz, %s::timestamptz), "
        "memory_version = memory_version + 1 WHERE bank_id = %s"
    ),
    "import_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, created_at, "
        "updated_at) VALUES (%s, %s, %s, %s, %s::text[], %s, %s, %s, %s)"
    ),
    "delete_document": "DELETE FROM documents WHERE bank_id = %s AND id = %s",
    "import_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, metadata, "
        "occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, consolidated_at, "
        "created_at, updated_at, mention_count, last_mentioned_at, repeat_key) VALUES (%s, %s, %s, %s, %s, %s, "
        "%s::text[], %s, %s, %s, %s, %s, %s::vector, %s::text[], %s, %s, %s, %s, %s, %s, %s)"
    ),
    "import_history": (
        "INSERT INTO mental_model_history (id, bank_id, mental_model_id, content, changed_at, version) "
        "VALUES (%s, %s, %s, %s, %s, %s)"
    ),
    # version rows an archive written before numbers were stored left unnumbered: numbered as they stand (the
    # model's version rows oldest first, from 0 when the oldest replaced the empty state), as migration 0091 did
    "number_history": (
        "UPDATE mental_model_history SET version = n.v FROM (SELECT id, (ROW_NUMBER() OVER w - 1 + CASE WHEN "
        "COALESCE(FIRST_VALUE(content ->> 'previous_content') OVER w, '') = '' THEN 0 ELSE 1 END)::integer AS v "
        "FROM mental_model_history WHERE bank_id = %s AND content -> 'previous_content' IS NOT NULL "
        "AND (content ->> 'kind') IS DISTINCT FROM 'refresh_failed' "
        "WINDOW w AS (PARTITION BY bank_id, mental_model_id ORDER BY changed_at, id)) AS n "
        "WHERE n.id = mental_model_history.id AND mental_model_history.version IS NULL"
    ),
    "import_history_new": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at, version) "
        "VALUES (%s, %s, %s, %s, %s)"
    ),
    # explicit ids leave the identity sequence behind: move it past them so the next history row gets a free id
    "sync_history_ids": (
        "SELECT setval(pg_get_serial_sequence('mental_model_history', 'id'), "
        "(SELECT MAX(id) FROM mental_model_history))"
    ),
    "import_operation": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at, worker_id, lease_expires_at, progress) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    # ---------------------------------------------------------------- bank transfer: the bank's other resources
    "snap_directives": "SELECT * FROM directives WHERE bank_id = %s ORDER BY id",
    "snap_webhooks": "SELECT * FROM webhooks WHERE bank_id = %s ORDER BY id",
    "snap_deliveries": "SELECT * FROM webhook_deliveries WHERE bank_id = %s AND id > %s ORDER BY id LIMIT %s",
    # the knowledge base (few rows per bank: read whole) and the refresh spend ledger (keyset pages by day, model)
    "snap_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = %s ORDER BY id",
    "snap_refresh_spend": (
        "SELECT * FROM refresh_spend WHERE bank_id = %s AND (day > %s OR (day = %s AND mental_model_id > %s)) "
        "ORDER BY day, mental_model_id LIMIT %s"
    ),
    # a page renamed by a merge (a sibling had its name): its mental model carries the page's name
    "import_rename_page_model": "UPDATE mental_models SET name = %s WHERE bank_id = %s AND id = %s",
    "snap_document_events": "SELECT * FROM document_events WHERE bank_id = %s AND id > %s ORDER BY id LIMIT %s",
    "existing_delivery_ids": "SELECT id FROM webhook_deliveries WHERE id = ANY(%s::text[])",
    "existing_document_event_ids": "SELECT id FROM document_events WHERE id = ANY(%s::bigint[])",
    "import_document_event": (
        "INSERT INTO document_events (id, bank_id, document_id, kind, operation_id, fact_id, facts_added, "
        "facts_removed, created_at) OVERRIDING SYSTEM VALUE VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    # explicit ids leave the identity sequence behind: move it past them
    "sync_document_event_ids": (
        "SELECT setval(pg_get_serial_sequence('document_events', 'id'), (SELECT MAX(id) FROM document_events))"
    ),
    "import_delivery": (
        "INSERT INTO webhook_deliveries (id, bank_id, webhook_id, event_id, event_type, url, payload, status, "
        "attempts, operation_id, next_retry_at, last_error, last_response_status, last_response_body, "
        "last_attempt_at, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s)"
    ),
    # ---------------------------------------------------------------- stored files
    "insert_file": (
        "INSERT INTO file_storage (key, bank_id, filename, content_type, byte_size, chunk_count, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)"
    ),
    "insert_file_chunk": "INSERT INTO file_storage_chunks (key, seq, data) VALUES (%s, %s, %s)",
    "finish_file": "UPDATE file_storage SET byte_size = %s, chunk_count = %s WHERE key = %s",
    "get_file": "SELECT * FROM file_storage WHERE key = %s",
    "get_file_chunk": "SELECT data FROM file_storage_chunks WHERE key = %s AND seq = %s",
    "delete_file": "DELETE FROM file_storage WHERE key = %s",
    "purge_files": "DELETE FROM file_storage WHERE created_at < %s AND key LIKE %s ESCAPE '\\'",
}
