"""Named statements of the SQLite store for consolidation: pending facts, observations (listing, those losing sources,
updates with their mentions, rewrites, deletes) and the ``consolidated_at`` mark. :mod:`.queries` merges them into
``Q``; ``{marks}`` is the ``?,?,…`` of an ``IN`` list.
"""

from __future__ import annotations

# every memory column but the embedding blob, which readers of MemoryUnit never need
MEMORY_COLUMNS = (
    "id, bank_id, document_id, chunk_id, text, fact_type, tags, context, metadata, occurred_start, occurred_end, "
    "mentioned_at, source_memory_ids, proof_count, consolidated_at, created_at, updated_at, mention_count, "
    "last_mentioned_at, seq"
)

CONSOLIDATION_Q: dict[str, str] = {
    "unconsolidated_facts": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' "
        "AND consolidated_at IS NULL ORDER BY seq LIMIT ?"
    ),
    # the facts consolidation has not seen, masked out of the in-process index for consolidated_neighbours
    # (idx_memory_units_pending)
    "pending_fact_ids": (
        "SELECT id FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' AND consolidated_at IS NULL"
    ),
    "list_observations": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' ORDER BY seq"
    ),
    # observations citing a source that is gone, or one of the given facts (sent back to consolidation by an edit)
    "observations_losing_sources": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' AND EXISTS ("
        "SELECT 1 FROM json_each(memory_units.source_memory_ids) j WHERE j.value IN (SELECT value FROM json_each(?)) "
        "OR NOT EXISTS (SELECT 1 FROM memory_units x WHERE x.bank_id = memory_units.bank_id AND x.id = j.value)) "
        "ORDER BY seq"
    ),
    # an observation's mentions are its sources: how many, and the newest of their mentions
    "update_observation": (
        "UPDATE memory_units SET source_memory_ids = ?, proof_count = ?, updated_at = ?, mention_count = ?, "
        "last_mentioned_at = (SELECT MAX(COALESCE(s.mentioned_at, s.occurred_start)) FROM memory_units s "
        "WHERE +s.bank_id = ? AND s.id IN (SELECT value FROM json_each(?))) WHERE bank_id = ? AND id = ?"
    ),
    # RETURNING tags: the rewritten row's tags, for its new vector-index entry
    "rewrite_observation": (
        "UPDATE memory_units SET text = ?, embedding = ?, updated_at = ? WHERE bank_id = ? AND id = ? "
        "AND fact_type = 'observation' RETURNING tags"
    ),
    # one id per execution (PostgreSQL binds them all as one array)
    "delete_observations": "DELETE FROM memory_units WHERE bank_id = ? AND id = ? AND fact_type = 'observation'",
    # bookkeeping, not a memory write: no stamp, updated_at untouched
    # (+bank_id, here and in update_observation: the rows are found by id, not by walking the bank's index)
    "mark_consolidated": "UPDATE memory_units SET consolidated_at = ? WHERE +bank_id = ? AND id IN ({marks})",
}
