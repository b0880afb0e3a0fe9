"""Banks: creation, profile and configuration, deletion, stats and the memory write stamp."""

from __future__ import annotations

BANK_Q: dict[str, str] = {
    "ensure_bank": (
        "INSERT INTO banks (bank_id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_exists": "SELECT 1 FROM banks WHERE bank_id = ?",
    "get_bank": "SELECT * FROM banks WHERE bank_id = ?",
    "list_banks": (
        "SELECT b.*, (SELECT COUNT(*) FROM memory_units m WHERE m.bank_id = b.bank_id) AS n "
        "FROM banks b ORDER BY b.bank_id"
    ),
    "upsert_bank": (
        "UPDATE banks SET name = COALESCE(?, name), mission = COALESCE(?, mission), "
        "disposition = COALESCE(?, disposition), updated_at = ? WHERE bank_id = ?"
    ),
    # inside BEGIN IMMEDIATE the whole database is write-locked, so this plain read is the locked read PostgreSQL
    # spells FOR UPDATE (same for lock_bank_for_delete)
    "lock_bank_config": "SELECT config FROM banks WHERE bank_id = ?",
    "set_bank_config": "UPDATE banks SET config = ?, updated_at = ? WHERE bank_id = ?",
    "lock_bank_for_delete": "SELECT 1 FROM banks WHERE bank_id = ?",
    "count_bank_memories": "SELECT COUNT(*) FROM memory_units WHERE bank_id = ?",
    "delete_bank_operations": "DELETE FROM operations WHERE bank_id = ?",
    "delete_bank": "DELETE FROM banks WHERE bank_id = ?",
    "stats_by_type": "SELECT fact_type, COUNT(*) AS n FROM memory_units WHERE bank_id = ? GROUP BY fact_type",
    "stats_by_status": "SELECT status, COUNT(*) AS n FROM operations WHERE bank_id = ? GROUP BY status",
    "stats_documents": "SELECT COUNT(*) AS n FROM documents WHERE bank_id = ?",
    "stats_pending_consolidation": (
        "SELECT COUNT(*) AS n FROM memory_units WHERE bank_id = ? AND fact_type != 'observation' "
        "AND consolidated_at IS NULL"
    ),
    "stats_last_consolidated": "SELECT MAX(consolidated_at) AS at FROM memory_units WHERE bank_id = ?",
    # the embedding model a bank's vectors were made with, recorded once (the first vector's)
    "bank_embedding_model": "SELECT model, dimension FROM bank_embedding_models WHERE bank_id = ?",
    "record_bank_embedding_model": (
        "INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at) "
        "SELECT bank_id, ?, ?, ? FROM banks WHERE bank_id = ? ON CONFLICT (bank_id) DO NOTHING"
    ),
    "bank_last_write": "SELECT last_memory_write_at FROM banks WHERE bank_id = ?",
    # the stamp is computed in Python between these two (one writer connection under the write lock, so nobody
    # stamps in between); PostgreSQL does both in its one stamp_bank statement
    "bank_stamp": "SELECT last_memory_write_at, memory_version FROM banks WHERE bank_id = ?",
    "stamp_bank": "UPDATE banks SET last_memory_write_at = ?, memory_version = ?, updated_at = ? WHERE bank_id = ?",
}
