"""Memories: retained documents written with their chunks and facts, repeats, restatements, reads, edits,
listings, tag counts and the chunks and documents memories came from."""

from __future__ import annotations

from mindbank.store.lexical import preceding_sql
from mindbank.store.sqlite.consolidation_queries import MEMORY_COLUMNS


def preceding_of(bank: str, context: str, moment: str) -> str:
    """:func:`mindbank.store.lexical.preceding_sql` in SQLite's spelling (``group_concat``)."""
    return preceding_sql(bank, context, moment, concat="group_concat(p.text, ' ')")


MEMORY_COLUMNS_M = ", ".join("m." + c.strip() for c in MEMORY_COLUMNS.split(","))

MEMORY_Q: dict[str, str] = {
    "bank_memory_version": "SELECT memory_version FROM banks WHERE bank_id = ?",
    # the bank's memory state (every memory write moves both): the key of the memories a lookup by id keeps
    "bank_memory_state": "SELECT memory_version, last_memory_write_at FROM banks WHERE bank_id = ?",
    "index_rows": "SELECT id, embedding, fact_type, tags, updated_at FROM memory_units WHERE bank_id = ? ORDER BY seq",
    "get_document": "SELECT original_text, created_at FROM documents WHERE bank_id = ? AND id = ?",
    "count_document_chunks": "SELECT COUNT(*) FROM chunks WHERE bank_id = ? AND document_id = ?",
    # the ids a replaced document loses, to drop from the cached vector index
    "document_memory_ids": "SELECT id FROM memory_units WHERE bank_id = ? AND document_id = ?",
    "delete_document_memories": "DELETE FROM memory_units WHERE bank_id = ? AND document_id = ?",
    "delete_document_chunks": "DELETE FROM chunks WHERE bank_id = ? AND document_id = ?",
    "upsert_document": (
        "INSERT INTO documents (bank_id, id, original_text, content_hash, tags, metadata, context, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (bank_id, id) DO UPDATE SET original_text = excluded.original_text, "
        "content_hash = excluded.content_hash, tags = excluded.tags, metadata = excluded.metadata, "
        "context = excluded.context, updated_at = excluded.updated_at"
    ),
    "insert_chunk": "INSERT INTO chunks (id, bank_id, document_id, chunk_index, text) VALUES (?, ?, ?, ?, ?)",
    # a fact's preceding text is read as it is inserted (the facts of one write go in in order, each seeing those
    # before it); the write's last step fixes the rows a fact retained out of order changes
    "insert_memory": (
        "INSERT INTO memory_units (id, bank_id, document_id, chunk_id, text, fact_type, tags, context, "
        "metadata, occurred_start, occurred_end, mentioned_at, embedding, source_memory_ids, proof_count, "
        "created_at, updated_at, repeat_key, preceding_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        f"?, ?, CASE WHEN ? IS NULL OR ? = 'observation' THEN NULL ELSE {preceding_of('?', '?', '?')} END)"
    ),
    "document_hashes": "SELECT id, content_hash FROM documents WHERE bank_id = ? AND id IN ({marks})",
    # oldest first: the first fact with a key is the one its repeats land on
    "repeat_lookup": (
        "SELECT repeat_key, id FROM memory_units WHERE bank_id = ? AND repeat_key IN ({marks}) ORDER BY seq"
    ),
    # a repeat is a memory write (updated_at); the newest mention wins (times are fixed-width ISO text)
    "record_repeat": (
        "UPDATE memory_units SET mention_count = mention_count + ?, last_mentioned_at = "
        "MAX(COALESCE(last_mentioned_at, mentioned_at, ?), COALESCE(?, last_mentioned_at, mentioned_at)), "
        "updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    "document_state": "SELECT content_hash, tags, metadata, context FROM documents WHERE bank_id = ? AND id = ?",
    "document_fact_times": (
        "SELECT id, occurred_start FROM memory_units WHERE bank_id = ? AND document_id = ? "
        "AND fact_type != 'observation' ORDER BY seq"
    ),
    "restate_document": (
        "UPDATE documents SET tags = ?, metadata = ?, context = ?, updated_at = ? WHERE bank_id = ? AND id = ?"
    ),
    # in place, same ids; new tags send the facts back to consolidation (the CASE reads the old tags)
    "restate_document_memories": (
        "UPDATE memory_units SET tags = ?, metadata = ?, context = ?, occurred_start = COALESCE(?, occurred_start), "
        "occurred_end = COALESCE(?, occurred_end), mentioned_at = COALESCE(?, mentioned_at), "
        "consolidated_at = CASE WHEN tags = ? THEN consolidated_at END, updated_at = ? "
        "WHERE bank_id = ? AND document_id = ? AND fact_type != 'observation'"
    ),
    "delete_memory": "DELETE FROM memory_units WHERE bank_id = ? AND id = ?",
    # what update_memory keeps when a field is not given, and what the vector-index entry needs
    "memory_index_fields": "SELECT fact_type, tags, embedding FROM memory_units WHERE bank_id = ? AND id = ?",
    # an edit is a memory write; the fact goes back to consolidation; a new text or new tags end its repeats
    "update_memory": (
        "UPDATE memory_units SET text = COALESCE(?, text), embedding = ?, context = COALESCE(?, context), "
        "tags = ?, metadata = COALESCE(?, metadata), consolidated_at = NULL, updated_at = ?, "
        "repeat_key = CASE WHEN ? THEN NULL ELSE repeat_key END WHERE bank_id = ? AND id = ?"
    ),
    # unary +: look rows up by id, not by scanning the bank
    "get_memories": f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE +bank_id = ? AND id IN ({{marks}})",
    "count_memories": "SELECT COUNT(*) AS n FROM memory_units WHERE bank_id = ?",
    "list_memories": (
        f"SELECT {MEMORY_COLUMNS_M}, COUNT(*) OVER () AS total FROM memory_units m WHERE m.bank_id = ? AND {{where}} "
        "ORDER BY m.updated_at DESC, m.seq DESC LIMIT ? OFFSET ?"
    ),
    "count_filtered": "SELECT COUNT(*) AS n FROM memory_units m WHERE m.bank_id = ? AND {where}",
    "count_in_scope": (
        "SELECT m.fact_type, COUNT(*) AS n FROM memory_units m WHERE m.bank_id = ? AND {where} GROUP BY m.fact_type"
    ),
    # {table} is one of two fixed names chosen in code
    "list_tags": (
        "SELECT j.value AS tag, COUNT(*) AS n, COUNT(*) OVER () AS total FROM {table} t, json_each(t.tags) j "
        "WHERE t.bank_id = ?{where} GROUP BY j.value ORDER BY n DESC, tag LIMIT ? OFFSET ?"
    ),
    "count_tags": "SELECT COUNT(DISTINCT j.value) AS n FROM {table} t, json_each(t.tags) j WHERE t.bank_id = ?{where}",
    # lookups by a list of ids: the unary + keeps SQLite off the (bank, ...) indexes, which without table statistics
    # it prefers to the id index once the list is long, reading the whole bank to keep a hundred rows
    "memory_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, d.original_text "
        "FROM memory_units m "
        "LEFT JOIN documents d ON d.bank_id = m.bank_id AND d.id = m.document_id "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE +m.bank_id = ? AND m.id IN ({marks})"
    ),
    "memory_chunk_sources": (
        "SELECT m.id, m.document_id, m.chunk_id, c.text AS chunk_text, c.chunk_index, NULL AS original_text "
        "FROM memory_units m "
        "LEFT JOIN chunks c ON c.id = m.chunk_id AND c.bank_id = m.bank_id "
        "WHERE +m.bank_id = ? AND m.id IN ({marks})"
    ),
}
