"""Named statements of the SQLite store for observation curation: an observation's history (snapshot, trim, read),
the bank's observation scopes, and the reference's deletes (observations drawn from a memory, every observation, a
bank's memories). :mod:`.queries` merges them into ``Q``; the PostgreSQL store has the same keys."""

from __future__ import annotations

from mindbank.store.sqlite.consolidation_queries import MEMORY_COLUMNS

OBSERVATION_Q: dict[str, str] = {
    "observation_history": (
        "SELECT id, observation_id, previous_text, previous_source_memory_ids, changed_at FROM observation_history "
        "WHERE bank_id = ? AND observation_id = ? ORDER BY changed_at DESC, id DESC"
    ),
    # the state an observation has before a consolidation round changes it (nothing for a row that is no observation)
    "snapshot_observation": (
        "INSERT INTO observation_history (bank_id, observation_id, previous_text, previous_source_memory_ids, "
        "changed_at) SELECT bank_id, id, text, COALESCE(source_memory_ids, '[]'), ? FROM memory_units "
        "WHERE bank_id = ? AND id = ? AND fact_type = 'observation'"
    ),
    # a restated observation's successor (a new row) takes over its history and records its last state
    "carry_observation_history": (
        "UPDATE observation_history SET observation_id = ? WHERE bank_id = ? AND observation_id = ?"
    ),
    "snapshot_observation_as": (
        "INSERT INTO observation_history (observation_id, bank_id, previous_text, previous_source_memory_ids, "
        "changed_at) SELECT ?, bank_id, text, COALESCE(source_memory_ids, '[]'), ? FROM memory_units "
        "WHERE bank_id = ? AND id = ? AND fact_type = 'observation'"
    ),
    "trim_observation_history": (
        "DELETE FROM observation_history WHERE observation_id = ? AND id NOT IN (SELECT id FROM observation_history "
        "WHERE observation_id = ? ORDER BY changed_at DESC, id DESC LIMIT ?)"
    ),
    # tags are stored sorted and de-duplicated, so equal tag sets group together; most populous first
    # the observations built from a memory (those listing it among their sources), oldest first
    "derived_observations": (
        f"SELECT {MEMORY_COLUMNS} FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' "
        "AND EXISTS (SELECT 1 FROM json_each(memory_units.source_memory_ids) j WHERE j.value = ?) ORDER BY seq"
    ),
    "observation_scopes": (
        "SELECT tags, COUNT(*) AS count FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' "
        "GROUP BY tags ORDER BY count DESC, tags LIMIT ? OFFSET ?"
    ),
    "count_observation_scopes": (
        "SELECT COUNT(DISTINCT tags) AS n FROM memory_units WHERE bank_id = ? AND fact_type = 'observation'"
    ),
    # the memory itself and every source of the observations drawn from it go back to consolidation
    "unconsolidate_derived_sources": (
        "UPDATE memory_units SET consolidated_at = NULL WHERE bank_id = ? AND fact_type != 'observation' AND (id = ? "
        "OR id IN (SELECT j.value FROM memory_units o, json_each(o.source_memory_ids) j WHERE o.bank_id = ? "
        "AND o.fact_type = 'observation' AND EXISTS (SELECT 1 FROM json_each(o.source_memory_ids) k "
        "WHERE k.value = ?)))"
    ),
    "delete_derived_observations": (
        "DELETE FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' AND EXISTS (SELECT 1 FROM "
        "json_each(memory_units.source_memory_ids) j WHERE j.value = ?) RETURNING id"
    ),
    "unconsolidate_all_facts": (
        "UPDATE memory_units SET consolidated_at = NULL WHERE bank_id = ? AND fact_type != 'observation'"
    ),
    "delete_all_observations": "DELETE FROM memory_units WHERE bank_id = ? AND fact_type = 'observation' RETURNING id",
    "clear_memories_of_type": "DELETE FROM memory_units WHERE bank_id = ? AND fact_type = ?",
    "clear_memories": "DELETE FROM memory_units WHERE bank_id = ?",
    # with every memory gone, the documents they came from go too (their chunks and history cascade)
    "clear_documents": "DELETE FROM documents WHERE bank_id = ?",
}
