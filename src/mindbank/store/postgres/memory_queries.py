"""Memories: retained documents written with their chunks and facts, repeats, restatements, reads, edits,
listings, tag counts and the chunks and documents memories came from."""

from __future__ import annotations

from mindbank.store.lexical import preceding_sql
from mindbank.store.postgres.consolidation_queries import MEMORY_COLUMNS


def preceding_of(bank: str, context: str, moment: str) -> str:
    """:func:`mindbank.store.lexical.preceding_sql` in PostgreSQL's spelling (``string_agg`` in write order)."""
    return preceding_sql(bank, context, moment, concat="string_agg(p.text, ' ' ORDER BY p.seq)")


MEMORY_Q: dict[str, str] = {
    # the bank's memory state (every memory write moves both): the key of the memories a lookup by id keeps
    "bank_memory_state": "SELECT memory_version, last_memory_write_at FROM banks WHERE bank_id = %s",
    "get_document": "SELECT original_text, created_at FROM documents WHERE bank_id = %s AND id = %s",
    "count_document_chunks": "SELECT COUNT(*) FROM chunks WHERE bank_id = %s AND document_id = %s",
    "delete_document_memories": "DELETE FROM memory_units WHERE bank_id = %s AND document_id = %s",
    "delete_document_chunks": "DELETE FROM chunks WHERE bank_id = %s AND document_id = %s",
    "upsert_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, created_at, "
        "updated_at) VALUES (%s, %s, %s, %s, %s::text[], %s, %s, %s, %s) "
        "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
        "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
        "context = excluded.context, updated_at = excluded.updated_at"
    ),
    "insert_chunk": "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (%s, %s, %s, %s, %s)",
    # a fact's preceding text is read as it is inserted (the facts of one write go in in order, each seeing those
    # before it); the write's last step fixes the rows a fact retained out of order changes
    "insert_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, metadata, "
        "occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, created_at, "
        "updated_at, repeat_key, preceding_text) VALUES (%s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s, %s, %s, "
        "%s::vector, %s::text[], %s, %s, %s, %s, CASE WHEN %s::text IS NULL OR %s::text = 'observation' THEN NULL "
        f"ELSE {preceding_of('%s::text', '%s::text', '%s::timestamptz')} END)"
    ),
    "document_hashes": "SELECT id, content_hash FROM documents WHERE bank_id = %s AND id = ANY(%s::text[])",
    # oldest first: the first fact with a key is the one its repeats land on
    "repeat_lookup": (
        "SELECT repeat_key, id FROM memory_units WHERE bank_id = %s AND repeat_key = ANY(%s::text[]) ORDER BY seq"
    ),
    # a repeat is a memory write (updated_at); the newest mention wins
    "record_repeat": (
        "UPDATE memory_units SET mention_count = mention_count + %s, last_mentioned_at = "
        "GREATEST(COALESCE(last_mentioned_at, mentioned_at, %s), COALESCE(%s, last_mentioned_at, mentioned_at)), "
        "updated_at = %s WHERE bank_id = %s AND id = %s"
    ),
    "document_state": "SELECT content_hash, tags, metadata, context FROM documents WHERE bank_id = %s AND id = %s",
    "document_fact_times": (
        "SELECT id, occurred_start FROM memory_units WHERE bank_id = %s AND document_id = %s "
        "AND fact_type <> 'observation' ORDER BY seq"
    ),
    "restate_document": (
        "UPDATE documents SET tags = %s::text[], metadata = %s, context = %s, updated_at = %s "
        "WHERE bank_id = %s AND id = %s"
    ),
    # in place, same ids; new tags send the facts back to consolidation (the CASE reads the old tags)
    "restate_document_memories": (
        "UPDATE memory_units SET tags = %s::text[], metadata = %s, context = %s, "
        "occurred_start = COALESCE(%s, occurred_start), occurred_end = COALESCE(%s, occurred_end), "
        "mentioned_at = COALESCE(%s, mentioned_at), "
        "consolidated_at = CASE WHEN tags = %s::text[] THEN consolidated_at END, updated_at = %s "
        "WHERE bank_id = %s AND document_id = %s AND fact_type <> 'observation'"
    ),
    "delete_memory": "DELETE FROM memory_units WHERE bank_id = %s AND id = %s",
    # an edit is a memory write; the fact goes back to consolidation
    "update_memory": (
        "UPDATE memory_units SET text = COALESCE(%s, text), embedding = COALESCE(%s::vector, embedding), "
        "context = COALESCE(%s, context), tags = COALESCE(%s::text[], tags), metadata = COALESCE(%s, metadata), "
        "consolidated_at = NULL, updated_at = %s, repeat_key = CASE WHEN %s THEN NULL ELSE repeat_key END "
        "WHERE bank_id = %s AND id = %s"
    ),
    "get_memories": f"SELECT {MEMORY_COLUMNS} FROM memory_units m WHERE m.bank_id = %s AND m.id = ANY(%s::text[])",
    "count_memories": "SELECT COUNT(*) AS n FROM memory_units WHERE bank_id = %s",
    "list_memories": (
        f"SELECT {MEMORY_COLUMNS}, COUNT(*) OVER () AS total FROM memory_units m WHERE m.bank_id = %s AND {{where}} "
        "ORDER BY m.updated_at DESC, m.seq DESC LIMIT %s OFFSET %s"
    ),
    "count_filtered": "SELECT COUNT(*) AS n FROM memory_units m WHERE m.bank_id = %s AND {where}",
    "count_in_scope": (
        "SELECT m.fact_type, COUNT(*) AS n FROM memory_units m WHERE m.bank_id = %s AND {where} GROUP BY m.fact_type"
    ),
    # {table} is one of two fixed names chosen in code
    "list_tags": (
        "SELECT j.tag, COUNT(*) AS n, COUNT(*) OVER () AS total FROM {table} t CROSS JOIN LATERAL unnest(t.tags) "
        'AS j(tag) WHERE t.bank_id = %s{where} GROUP BY j.tag ORDER BY n DESC, j.tag COLLATE "C" LIMIT %s OFFSET %s'
    ),
    "count_tags": (
        "SELECT COUNT(DISTINCT j.tag) AS n FROM {table} t CROSS JOIN LATERAL unnest(t.tags) AS j(tag) "
        "WHERE t.bank_id = %s{where}"
    ),
    "memory_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, d.original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "LEFT JOIN documents d ON d.bank_id = m.bank_id AND d.id = m.document_id "
        "WHERE m.bank_id = %s AND m.id = ANY(%s::text[])"
    ),
    "memory_chunk_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, NULL AS original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE m.bank_id = %s AND m.id = ANY(%s::text[])"
    ),
}
