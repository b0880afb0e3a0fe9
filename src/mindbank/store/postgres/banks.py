"""Bank queries of the PostgreSQL store: profile and config updates, delete, live stats (create, read and list are
:mod:`mindbank.store.shared`)."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from mindbank.domain.records import Bank
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q
from mindbank.store.postgres.rows import COLUMNS, jsonb


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
