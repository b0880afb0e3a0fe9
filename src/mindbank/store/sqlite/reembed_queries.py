"""Re-embedding a bank: the staging area (``reembed_vectors``) and the one-transaction switch of its vectors."""

from __future__ import annotations

# a staged vector counts only while the memory still has the text it was computed from (an edit makes it stale)
_STAGED = "reembed_vectors s ON s.memory_id = m.id AND s.model = ? AND s.text = m.text"

REEMBED_Q: dict[str, str] = {
    "reembed_discard_other": "DELETE FROM reembed_vectors WHERE bank_id = ? AND model != ?",
    "reembed_pending": (
        f"SELECT m.id, m.text FROM memory_units m LEFT JOIN {_STAGED} "
        "WHERE m.bank_id = ? AND m.id > ? AND s.memory_id IS NULL ORDER BY m.id LIMIT ?"
    ),
    "reembed_counts": (
        f"SELECT COUNT(*) AS total, COUNT(s.memory_id) AS staged FROM memory_units m LEFT JOIN {_STAGED} "
        "WHERE m.bank_id = ?"
    ),
    # a memory deleted since it was read is skipped (its staged vector would have nothing to replace)
    "reembed_stage": (
        "INSERT INTO reembed_vectors (memory_id, bank_id, model, text, embedding) SELECT ?, ?, ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM memory_units WHERE id = ? AND bank_id = ?) "
        "ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model, text = excluded.text, "
        "embedding = excluded.embedding"
    ),
    # the caller checked that every memory of the bank has a current staged vector (reembed_counts)
    "reembed_swap": (
        "UPDATE memory_units SET embedding = (SELECT s.embedding FROM reembed_vectors s "
        "WHERE s.memory_id = memory_units.id) WHERE bank_id = ?"
    ),
    "reembed_record_model": (
        "INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (bank_id) DO UPDATE SET model = excluded.model, dimension = excluded.dimension, "
        "recorded_at = excluded.recorded_at"
    ),
    "reembed_clear": "DELETE FROM reembed_vectors WHERE bank_id = ?",
    "reembed_clear_page_vectors": "DELETE FROM knowledge_page_vectors WHERE bank_id = ?",
    # other processes see the new version and rebuild their in-process vector index of the bank
    "reembed_bump_version": "UPDATE banks SET memory_version = memory_version + 1 WHERE bank_id = ?",
}
