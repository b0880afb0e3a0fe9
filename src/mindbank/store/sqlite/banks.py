"""Bank queries of the SQLite store: profile and config updates, delete, live stats (create, read and list are
:mod:`mindbank.store.shared`)."""

from __future__ import annotations

import json
from typing import Any

from mindbank.domain.records import Bank
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import Q
from mindbank.store.sqlite.rows import COLUMNS, to_json


class BanksMixin(SQLiteBase):
    """The ``banks`` table: existence, profile, config overrides, deletion and counts."""

    def upsert_bank(
        self, bank_id: str, *, name: str | None, mission: str | None, disposition: dict[str, int] | None
    ) -> Bank:
        """Create the bank or update the given profile fields (None = keep); returns the bank."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)
            conn.execute(
                Q["upsert_bank"],
                (name, mission, None if disposition is None else to_json(disposition), to_iso(utcnow()), bank_id),
            )
            return COLUMNS.bank_row(conn.execute(Q["get_bank"], (bank_id,)).fetchone())

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> dict[str, Any]:
        """Merge ``updates`` into the bank's config overrides (a None value removes a key); returns the result.

        Raises ``LookupError`` for an unknown bank.
        """
        with self._tx() as conn:
            row = conn.execute(Q["lock_bank_config"], (bank_id,)).fetchone()
            if row is None:
                raise LookupError(bank_id)
            config = {**json.loads(row[0]), **updates}
            config = {k: v for k, v in config.items() if v is not None}
            conn.execute(Q["set_bank_config"], (to_json(config), to_iso(utcnow()), bank_id))
        return config

    def delete_bank(self, bank_id: str) -> int:
        """Delete the bank and everything in it atomically; returns the number of memories removed (-1: no bank)."""
        with self._tx() as conn:
            if conn.execute(Q["lock_bank_for_delete"], (bank_id,)).fetchone() is None:
                return -1
            count = conn.execute(Q["count_bank_memories"], (bank_id,)).fetchone()[0]
            conn.execute(Q["delete_bank_operations"], (bank_id,))
            conn.execute(Q["delete_bank"], (bank_id,))
        with self._index_lock:
            self._indexes.pop(bank_id, None)
        return int(count)
