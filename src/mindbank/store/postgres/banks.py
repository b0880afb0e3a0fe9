"""Bank queries of the PostgreSQL store: profile and config updates, delete, live stats (create, read and list are
:mod:`mindbank.store.shared`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

from mindbank.domain.records import Bank
from mindbank.domain.timeutil import utcnow
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q
from mindbank.store.postgres.rows import COLUMNS, jsonb

# the embedding model a bank's vectors were made with (migration 0086)
_EMBEDDING_MODEL = "SELECT model, dimension FROM bank_embedding_models WHERE bank_id = %s"
_RECORD_EMBEDDING_MODEL = (
    "INSERT INTO bank_embedding_models (bank_id, model, dimension, recorded_at) "
    "SELECT bank_id, %s::text, %s::integer, %s::timestamptz FROM banks WHERE bank_id = %s "
    "ON CONFLICT (bank_id) DO NOTHING"
)


class BanksMixin(PostgresBase):
    """The ``banks`` table: existence, profile, config overrides, deletion and counts."""

    def upsert_bank(
        self, bank_id: str, *, name: str | None, mission: str | None, disposition: dict[str, int] | None
    ) -> Bank:
        """Create the bank or update the given profile fields (None = keep); returns the bank."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            row = conn.execute(Q["upsert_bank"], (name, mission, jsonb(disposition), bank_id)).fetchone()
        assert row is not None
        return COLUMNS.bank_row(row)

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> dict[str, Any]:
        """Merge ``updates`` into the bank's config overrides (a None value removes a key); returns the result.

        The row is locked while merging so concurrent updates from other processes are not lost.
        Raises ``LookupError`` for an unknown bank.
        """
        with self._tx() as conn:
            row = conn.execute(Q["lock_bank_config"], (bank_id,)).fetchone()
            if row is None:
                raise LookupError(bank_id)
            config = {**row["config"], **updates}
            config = {k: v for k, v in config.items() if v is not None}
            conn.execute(Q["set_bank_config"], (Jsonb(config), bank_id))
        return dict(sorted(config.items()))

    def delete_bank(self, bank_id: str) -> int:
        """Delete the bank and everything in it atomically; returns the number of memories removed (-1: no bank)."""
        with self._tx() as conn:
            # the bank lock first, like every memory write: no writer can add rows between the count and the delete
            if conn.execute(Q["lock_bank_for_delete"], (bank_id,)).fetchone() is None:
                return -1
            row = conn.execute(Q["count_bank_memories"], (bank_id,)).fetchone()
            conn.execute(Q["delete_bank_operations"], (bank_id,))
            conn.execute(Q["delete_bank"], (bank_id,))
        return int(row["count"]) if row else 0

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live counts: memories by fact type, documents, operations by status, pending consolidation, last write."""
        with self._read() as conn, conn.cursor(row_factory=tuple_row) as cur:
            by_type = {r[0]: int(r[1]) for r in cur.execute(Q["stats_by_type"], (bank_id,)).fetchall()}
            by_status = {r[0]: int(r[1]) for r in cur.execute(Q["stats_by_status"], (bank_id,)).fetchall()}
            documents = cur.execute(Q["stats_documents"], (bank_id,)).fetchone()
            pending = cur.execute(Q["stats_pending_consolidation"], (bank_id,)).fetchone()
            consolidated = cur.execute(Q["stats_last_consolidated"], (bank_id,)).fetchone()
            last = cur.execute(Q["bank_last_write"], (bank_id,)).fetchone()
        return {
            "nodes_by_fact_type": by_type,
            "total_nodes": sum(by_type.values()),
            "total_documents": int(documents[0]) if documents else 0,
            "operations_by_status": by_status,
            "pending_consolidation": int(pending[0]) if pending else 0,
            "last_consolidated_at": consolidated[0] if consolidated else None,
            "last_memory_write_at": None if last is None else last[0],
        }

    def bank_embedding_model(self, bank_id: str) -> tuple[str, int] | None:
        """``(model name, dimension)`` the bank's vectors were made with; None before its first recorded vector."""
        with self._read() as conn:
            row = conn.execute(_EMBEDDING_MODEL, (bank_id,)).fetchone()
        return None if row is None else (str(row["model"]), int(row["dimension"]))

    def record_bank_embedding_model(self, bank_id: str, model: str, dimension: int) -> tuple[str, int] | None:
        """Record ``(model, dimension)`` for the bank unless one is recorded already; returns the bank's record
        afterwards (the earlier one when it differs; None when the bank does not exist)."""
        with self._tx() as conn:
            conn.execute(_RECORD_EMBEDDING_MODEL, (model, dimension, utcnow(), bank_id))
            row = conn.execute(_EMBEDDING_MODEL, (bank_id,)).fetchone()
        return None if row is None else (str(row["model"]), int(row["dimension"]))

    def bank_last_memory_write_at(self, bank_id: str) -> datetime | None:
        """Stamp of the bank's newest memory write (insert, edit or delete); None before the first."""
        with self._read() as conn:
            row = conn.execute(Q["bank_last_write"], (bank_id,)).fetchone()
        return None if row is None else row["last_memory_write_at"]
