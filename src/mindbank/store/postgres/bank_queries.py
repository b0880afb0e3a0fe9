"""Banks: creation, profile and configuration, deletion, stats and the memory write stamp."""

from __future__ import annotations

_STAMP = "GREATEST(clock_timestamp(), last_memory_write_at + interval '1 microsecond')"

BANK_Q: dict[str, str] = {
    "ensure_bank": (
        "INSERT INTO banks (bank_id, name, created_at, updated_at) VALUES (%s, %s, now(), now()) "
        "ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_exists": "SELECT 1 FROM banks WHERE bank_id = %s",
    "get_bank": "SELECT * FROM banks WHERE bank_id = %s",
    "list_banks": (
        "SELECT b.*, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = b.bank_id) AS n "
        'FROM banks b ORDER BY b.bank_id COLLATE "C"'
    ),
    "upsert_bank": (
        "UPDATE banks SET name = COALESCE(%s, name), mission = COALESCE(%s, mission), "
        "disposition = COALESCE(%s::jsonb, disposition), updated_at = now() WHERE bank_id = %s RETURNING *"
    ),
    "lock_bank_config": "SELECT config FROM banks WHERE bank_id = %s FOR UPDATE",
    "set_bank_config": "UPDATE banks SET config = %s, updated_at = now() WHERE bank_id = %s",
    # NO KEY UPDATE: serialises memory writers of the bank exactly like FOR UPDATE, but does not block the
    # FOR KEY SHARE locks that foreign-key checks take, so creating a model or queueing an operation in the bank
    # never waits behind a long retain
    "lock_bank": "SELECT memory_version FROM banks WHERE bank_id = %s FOR NO KEY UPDATE",
    "lock_bank_for_delete": "SELECT 1 FROM banks WHERE bank_id = %s FOR UPDATE",
    "count_bank_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = %s",
    "delete_bank_operations": "DELETE FROM operations WHERE bank_id = %s",
    "delete_bank": "DELETE FROM banks WHERE bank_id = %s",
    "stats_by_type": "SELECT fact_type, COUNT(*) AS n FROM memory_units WHERE bank_id = %s GROUP BY fact_type",
    "stats_by_status": "SELECT status, COUNT(*) AS n FROM operations WHERE bank_id = %s GROUP BY status",
    "stats_documents": "SELECT COUNT(*) AS n FROM documents WHERE bank_id = %s",
    "stats_pending_consolidation": (
        "SELECT COUNT(*) AS n FROM memory_units WHERE bank_id = %s AND fact_type <> 'observation' "
        "AND consolidated_at IS NULL"
    ),
    "stats_last_consolidated": "SELECT MAX(consolidated_at) AS at FROM memory_units WHERE bank_id = %s",
    # the embedding model a bank's vectors were made with, recorded once (the first vector's)
    "bank_embedding_model": "SELECT model, dimension FROM bank_embedding_models WHERE bank_id = %s",
    "record_bank_embedding_model": (
        "INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at) "
        "SELECT bank_id, %s::text, %s::integer, %s::timestamptz FROM banks WHERE bank_id = %s "
        "ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_last_write": "SELECT last_memory_write_at FROM banks WHERE bank_id = %s",
    # the caller holds the bank row lock (lock_bank), so this statement's snapshot sees the latest stamp and no other
    # writer can stamp until we commit: stamps are strictly increasing in commit order
    "stamp_bank": (
        f"WITH s AS (SELECT {_STAMP} AS stamp FROM banks WHERE bank_id = %s) "
        "UPDATE banks SET last_memory_write_at = s.stamp, updated_at = s.stamp, memory_version = memory_version + 1 "
        "FROM s WHERE banks.bank_id = %s RETURNING banks.last_memory_write_at, banks.memory_version"
    ),
}
