"""Re-embedding a bank: the staging area (``reembed_vectors``) and the one-transaction switch of its vectors."""

from __future__ import annotations

# a staged vector counts only while the memory still has the text it was computed from (an edit makes it stale)
_STAGED = "reembed_vectors s ON s.memory_id = m.id AND s.model = %s AND s.text = m.text"

REEMBED_Q: dict[str, str] = {
    "reembed_discard_other": "DELETE FROM reembed_vectors WHERE bank_id = %s AND model != %s",
    "reembed_pending": (
        f"SELECT m.id, m.text FROM memory_units m LEFT JOIN {_STAGED} "
        "WHERE m.bank_id = %s AND m.id > %s AND s.memory_id IS NULL ORDER BY m.id LIMIT %s"
    ),
    "reembed_counts": (
        f"SELECT COUNT(*) AS total, COUNT(s.memory_id) AS staged FROM memory_units m LEFT JOIN {_STAGED} "
        "WHERE m.bank_id = %s"
    ),
    # a memory deleted since it was read is skipped (its staged vector would have nothing to replace)
    "reembed_stage": (
        "INSERT INTO reembed_vectors (memory_id, bank_id, model, text, embedding) SELECT %s, %s, %s, %s, %s::vector "
        "WHERE EXISTS (SELECT 1 FROM memory_units WHERE id = %s AND bank_id = %s) "
        "ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model, text = excluded.text, "
        "embedding = excluded.embedding"
    ),
    # the caller holds the bank lock and checked that every memory has a current staged vector (reembed_counts)
    "reembed_swap": (
        "UPDATE memory_units m SET embedding = s.embedding FROM reembed_vectors s "
        "WHERE s.memory_id = m.id AND m.bank_id = %s"
    ),
    "reembed_record_model": (
        "INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (bank_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, "
        "recorded_at = excluded.recorded_at"
    ),
    "reembed_clear": "DELETE FROM reembed_vectors WHERE bank_id = %s",
    "reembed_clear_page_vectors": "DELETE FROM knowledge_page_vectors WHERE bank_id = %s",
    "reembed_bump_version": "UPDATE banks SET memory_version = memory_version + 1 WHERE bank_id = %s",
}
