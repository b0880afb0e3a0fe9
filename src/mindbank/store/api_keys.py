"""The ``api_keys`` table (scoped API keys, docs/security.md), the same on both backends.

One named statement per job in each backend's ``queries.py`` (same keys), values encoded by the backend's
:class:`~mindbank.store.columns.Columns`; a mixin of both store classes, over
:class:`~mindbank.store.shared.SharedQueries`.
"""

from __future__ import annotations

from datetime import datetime

from mindbank.domain.access import ApiKey
from mindbank.store.columns import Row
from mindbank.store.shared import SharedQueries


class ApiKeysQueries(SharedQueries):
    """Create, read, list and revoke scoped API keys (never their secrets: only the token's digest is stored)."""

    def _api_key_row(self, r: Row) -> ApiKey:
        revoked = r["revoked_at"]
        return ApiKey(
            id=r["id"],
            name=r["name"],
            banks=tuple(self._columns.load_json(r["banks"])),
            read_only=bool(r["read_only"]),
            secret_hash=r["secret_hash"],
            created_at=self._columns.load_time(r["created_at"]),
            revoked_at=None if revoked is None else self._columns.load_time(revoked),
        )

    def insert_api_key(self, key: ApiKey) -> None:
        """Store a new key."""
        c = self._columns
        with self._tx() as conn:
            conn.execute(
                self._q["insert_api_key"],
                (key.id, key.name, c.json(list(key.banks)), key.read_only, key.secret_hash, c.time(key.created_at)),
            )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        """One key (revoked ones too), or None."""
        return self._one(self._q["get_api_key"], (key_id,), self._api_key_row)

    def list_api_keys(self) -> list[ApiKey]:
        """Every key, oldest first."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_api_keys"]).fetchall()
        return [self._api_key_row(r) for r in rows]

    def revoke_api_key(self, key_id: str, at: datetime) -> bool:
        """Mark a key revoked at ``at``; False when there is no such key or it was already revoked."""
        return self._changed(self._q["revoke_api_key"], (self._columns.time(at), key_id)) > 0
