"""Scoped API keys: create, list, revoke, and authenticate a bearer token (docs/security.md).

Keys exist only beside an admin key (``MINDBANK_API_KEY``): without one the server has no authentication at all,
so a scoped key would restrict nothing, and creating one is refused.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence

from mindbank.domain.access import ADMIN, ApiKey, Principal, check_scopes, hash_token, new_token, token_key_id
from mindbank.domain.limits import MAX_NAME_CHARS, check_text
from mindbank.domain.timeutil import utcnow
from mindbank.errors import ConflictError, NotFoundError
from mindbank.service.core import ServiceCore


class AccessService(ServiceCore):
    """API-key methods of the service."""

    def create_api_key(
        self, *, banks: Sequence[str], read_only: bool = False, name: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key limited to ``banks`` (ids, ``prefix*`` or ``*``): ``(stored key, token)``; the token is
        returned only here. Raises :class:`ConflictError` when no admin key is configured and
        :class:`InvalidInputError` for a bad scope or name."""
        if not self.settings.api_key:
            raise ConflictError("scoped API keys need an admin key: set MINDBANK_API_KEY first")
        scopes = check_scopes(list(banks))
        if name is not None:
            check_text(name, "name", MAX_NAME_CHARS)
        key_id, token = new_token()
        key = ApiKey(
            id=key_id,
            name=name,
            banks=scopes,
            read_only=read_only,
            secret_hash=hash_token(token),
            created_at=utcnow(),
            revoked_at=None,
        )
        self.store.insert_api_key(key)
        return key, token

    def list_api_keys(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first (no secrets)."""
        return self.store.list_api_keys()

    def revoke_api_key(self, key_id: str) -> ApiKey:
        """Revoke a key at once (its next request answers 401). Raises :class:`NotFoundError` for an unknown or
        already revoked key."""
        if not self.store.revoke_api_key(key_id, utcnow()):
            raise NotFoundError(f"API key '{key_id}' not found (or already revoked)")
        key = self.store.get_api_key(key_id)
        assert key is not None
        return key

    def authenticate(self, token: str) -> Principal | None:
        """The caller a bearer token stands for: the admin for ``MINDBANK_API_KEY``, the key's principal for a live
        scoped key, None otherwise (compared in constant time)."""
        admin = self.settings.api_key
        if admin and hmac.compare_digest(token.encode(), admin.encode()):
            return ADMIN
        key_id = token_key_id(token)
        if not admin or key_id is None:
            return None
        key = self.store.get_api_key(key_id)
        if key is None or key.revoked_at is not None or not hmac.compare_digest(key.secret_hash, hash_token(token)):
            return None
        return key.principal
