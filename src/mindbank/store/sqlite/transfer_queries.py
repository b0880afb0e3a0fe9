"""Named statements of the SQLite store for bank transfer — the pages a snapshot reads, the ids an import
checks for collisions, the rows an import writes as archived — and for stored files. :mod:`.queries` merges them
into ``Q``; the keys are the PostgreSQL store's (:mod:`mindbank.store.postgres.transfer_queries`).
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
    # a read transaction on a reader connection is a snapshot in WAL mode: every page sees the same commit
    "begin_snapshot": "BEGIN",
    "end_snapshot": "COMMIT",
    "snap_documents": "SELECT * FROM documents WHERE bank_id = ? AND id > ? ORDER BY id LIMIT ?",
    "snap_documents_in": "SELECT * FROM documents WHERE bank_id = ? AND id IN ({marks}) ORDER BY id",
    "snap_chunks_in": (
        "SELECT * FROM chunks WHERE bank_id = ? AND document_id IN ({marks}) ORDER BY document_id, chunk_index"
    ),
    # ? = whether observations are read too
    # the chunk's position in its document is read along (an archive names chunks by position)
    "snap_memories": (
        f"SELECT {_MEMORY}, c.chunk_index FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id WHERE m.bank_id = ? "
        "AND (? OR m.fact_type != 'observation') AND m.seq > ? ORDER BY m.seq LIMIT ?"
    ),
    "snap_document_memories": (
        f"SELECT {_MEMORY}, c.chunk_index FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id WHERE m.bank_id = ? AND m.document_id IN ({marks}) "
        "AND m.fact_type != 'observation' AND m.seq > ? ORDER BY m.seq LIMIT ?"
    ),
    "snap_mental_models": "SELECT * FROM mental_models WHERE bank_id = ? ORDER BY id",
    "snap_history": (
        "SELECT id, mental_model_id, content, changed_at, version FROM mental_model_history "
        "WHERE bank_id = ? AND mental_model_id = ? ORDER BY id"
    ),
    "snap_operations": "SELECT * FROM operations WHERE bank_id = ? AND id > ? ORDER BY id LIMIT ?",
    "snap_llm_requests": "SELECT * FROM llm_requests WHERE bank_id = ? AND id > ? ORDER BY id LIMIT ?",
    # ---------------------------------------------------------------- bank transfer: ids an import would collide with
    "existing_memory_ids": "SELECT id FROM memory_units WHERE id IN ({marks})",
    "existing_chunk_ids": "SELECT id FROM chunks WHERE id IN ({marks})",
    "existing_operation_ids": "SELECT id FROM operations WHERE id IN ({marks})",
    "existing_llm_request_ids": "SELECT id FROM llm_requests WHERE id IN ({marks})",
    "existing_history_ids": "SELECT id FROM mental_model_history WHERE id IN ({marks})",
    "existing_document_ids": "SELECT id FROM documents WHERE bank_id = ? AND id IN ({marks})",
    "existing_mental_model_ids": "SELECT id FROM mental_models WHERE bank_id = ? AND id IN ({marks})",
    # ---------------------------------------------------------------- bank transfer: import (rows as archived)
    "import_bank": (
        "INSERT INTO banks (bank_id, name, config, created_at, updated_at, last_memory_write_at, mission, "
        "disposition) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # the restored bank's stamp covers every imported memory (its own stamp may be newer: a deletion)
    "import_bank_stamp": (
        "UPDATE banks SET last_memory_write_at = CASE WHEN last_memory_write_at IS NULL OR last_memory_write_at < ? "
        "THEN ? ELSE last_memory_write_at END, memory_version = memory_version + 1 WHERE bank_id = ?"
    ),
    "import_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "delete_document": "DELETE FROM documents WHERE bank_id = ? AND id = ?",
    "import_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, "
        "metadata, occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, "
        "consolidated_at, created_at, updated_at, mention_count, last_mentioned_at, repeat_key) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    "import_history": (
        "INSERT INTO mental_model_history (id, bank_id, mental_model_id, content, changed_at, version) "
        "VALUES (?, ?, ?, ?, ?, ?)"
    ),
    # version rows an archive written before numbers were stored left unnumbered: numbered as they stand (the
    # model's version rows oldest first, from 0 when the oldest replaced the empty state), as migration 0091 did
    "number_history": (
        "UPDATE mental_model_history SET version = n.v FROM (SELECT id, (ROW_NUMBER() OVER w - 1 + CASE WHEN "
        "COALESCE(FIRST_VALUE(json_extract(content, '$.previous_content')) OVER w, '') = '' THEN 0 ELSE 1 END) AS v "
        "FROM mental_model_history WHERE bank_id = ? AND json_type(content, '$.previous_content') IS NOT NULL "
        "AND json_extract(content, '$.kind') IS NOT 'refresh_failed' "
        "WINDOW w AS (PARTITION BY bank_id, mental_model_id ORDER BY changed_at, id)) AS n "
        "WHERE n.id = mental_model_history.id AND mental_model_history.version IS NULL"
    ),
    "import_history_new": (
        "INSERT INTO mental_model_history (bank_id, mental_model_id, content, changed_at, version) "
        "VALUES (?, ?, ?, ?, ?)"
    ),
    # AUTOINCREMENT already moves past explicit ids; kept so both stores run the same import
    "sync_history_ids": (
        "UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT MAX(id) FROM mental_model_history)) "
        "WHERE name = 'mental_model_history'"
    ),
    "import_operation": (
        "INSERT INTO operations (id, bank_id, operation_type, status, payload, result, error, retry_count, "
        "next_retry_at, mental_model_id, created_at, updated_at, completed_at, worker_id, lease_expires_at, progress) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # ---------------------------------------------------------------- bank transfer: the bank's other resources
    "snap_directives": "SELECT * FROM directives WHERE bank_id = ? ORDER BY id",
    "snap_webhooks": "SELECT * FROM webhooks WHERE bank_id = ? ORDER BY id",
    "snap_deliveries": "SELECT * FROM webhook_deliveries WHERE bank_id = ? AND id > ? ORDER BY id LIMIT ?",
    # the knowledge base (few rows per bank: read whole) and the refresh spend ledger (keyset pages by day, model)
    "snap_knowledge_nodes": "SELECT * FROM knowledge_nodes WHERE bank_id = ? ORDER BY id",
    "snap_refresh_spend": (
        "SELECT * FROM refresh_spend WHERE bank_id = ? AND (day > ? OR (day = ? AND mental_model_id > ?)) "
        "ORDER BY day, mental_model_id LIMIT ?"
    ),
    # a page renamed by a merge (a sibling had its name): its mental model carries the page's name
    "import_rename_page_model": "UPDATE mental_models SET name = ? WHERE bank_id = ? AND id = ?",
    "snap_document_events": "SELECT * FROM document_events WHERE bank_id = ? AND id > ? ORDER BY id LIMIT ?",
    "existing_delivery_ids": "SELECT id FROM webhook_deliveries WHERE id IN ({marks})",
    "existing_document_event_ids": "SELECT id FROM document_events WHERE id IN ({marks})",
    "import_document_event": (
        "INSERT INTO document_events (id, bank_id, document_id, kind, operation_id, fact_id, facts_added, "
        "facts_removed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # AUTOINCREMENT already moves past explicit ids; kept so both stores run the same import
    "sync_document_event_ids": (
        "UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT MAX(id) FROM document_events)) "
        "WHERE name = 'document_events'"
    ),
    "import_delivery": (
        "INSERT INTO webhook_deliveries (id, bank_id, webhook_id, event_id, event_type, url, payload, status, "
        "attempts, operation_id, next_retry_at, last_error, last_response_status, last_response_body, "
        "last_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    # ---------------------------------------------------------------- stored files
    "insert_file": (
        "INSERT INTO file_storage (key, bank_id, filename, content_type, byte_size, chunk_count, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    ),
    "insert_file_chunk": "INSERT INTO file_storage_chunks (key, seq, data) VALUES (?, ?, ?)",
    "finish_file": "UPDATE file_storage SET byte_size = ?, chunk_count = ? WHERE key = ?",
    "get_file": "SELECT * FROM file_storage WHERE key = ?",
    "get_file_chunk": "SELECT data FROM file_storage_chunks WHERE key = ? AND seq = ?",
    "delete_file": "DELETE FROM file_storage WHERE key = ?",
    "purge_files": "DELETE FROM file_storage WHERE created_at < ? AND key LIKE ? ESCAPE '\\'",
}
