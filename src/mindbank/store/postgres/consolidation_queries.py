"""Named statements of the PostgreSQL store for consolidation: pending facts, observations (listing, those losing
sources, updates with their mentions, rewrites, deletes), earlier neighbours and the ``consolidated_at`` mark.
:mod:`.queries` merges them into ``Q``. ``{where}`` is a compiled filter, itself parameterised.
"""

from __future__ import annotations

# memory columns returned to callers (never the embedding or the tsvector: they are large and nobody reads them);
# :mod:`.queries` takes them from here
MEMORY_COLUMNS = (
    "m.id, m.bank_id, m.document_id, m.chunk_id, m.text, m.fact_type, m.tags, m.context, m.metadata, "
    "m.occurred_start, m.occurred_end, m.mentioned_at, m.source_memory_ids, m.proof_count, m.created_at, m.updated_at, "
    "m.mention_count, m.last_mentioned_at, m.seq"
)

CONSOLIDATION_Q: dict[str, str] = {
    "unconsolidated_facts": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units m WHERE m.bank_id = %s AND m.fact_type <> 'observation' "
        "AND m.consolidated_at IS NULL ORDER BY m.seq LIMIT %s"
    ),
    "list_observations": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units m WHERE m.bank_id = %s AND m.fact_type = 'observation' "
        "ORDER BY m.seq"
    ),
    # observations citing a source that is gone, or one of the given facts (sent back to consolidation by an edit);
    # memory ids are unique across banks: each source is one lookup in memory_units_id_key
    "observations_losing_sources": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units m WHERE m.bank_id = %s AND m.fact_type = 'observation' "
        "AND EXISTS (SELECT 1 FROM unnest(m.source_memory_ids) AS s(id) LEFT JOIN memory_units x ON x.id = s.id "
        "WHERE x.id IS NULL OR s.id = ANY(%s::text[])) ORDER BY m.seq"
    ),
    "memory_vectors": "SELECT id, embedding FROM memory_units WHERE bank_id = %s AND id = ANY(%s::text[])",
    # facts consolidation has already seen, nearest first (SQLite: its in-process index, pending facts masked)
    "consolidated_neighbours": (
        "SELECT m.id, m.embedding <=> %s::vector AS distance FROM memory_units m WHERE m.bank_id = %s "
        "AND m.fact_type <> 'observation' AND m.consolidated_at IS NOT NULL AND {where} "
        "ORDER BY m.embedding <=> %s::vector LIMIT %s"
    ),
    # an observation's mentions are its sources: how many, and the newest of their mentions
    "update_observation": (
        "UPDATE memory_units SET source_memory_ids = %s::text[], proof_count = %s, updated_at = %s, "
        "mention_count = %s, last_mentioned_at = (SELECT MAX(COALESCE(s.mentioned_at, s.occurred_start)) "
        "FROM memory_units s WHERE s.bank_id = %s AND s.id = ANY(%s::text[])) WHERE bank_id = %s AND id = %s"
    ),
    "rewrite_observation": (
        "UPDATE memory_units SET text = %s, embedding = %s::vector, updated_at = %s "
        "WHERE bank_id = %s AND id = %s AND fact_type = 'observation'"
    ),
    "delete_observations": (
        "DELETE FROM memory_units WHERE bank_id = %s AND id = ANY(%s::text[]) AND fact_type = 'observation'"
    ),
    # bookkeeping, not a memory write: no stamp, updated_at untouched
    "mark_consolidated": (
        "UPDATE memory_units SET consolidated_at = clock_timestamp() WHERE bank_id = %s AND id = ANY(%s::text[])"
    ),
}
