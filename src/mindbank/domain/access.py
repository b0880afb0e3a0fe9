"""Who is calling and what they may touch: the admin key, scoped API keys and their bank scopes.

The admin key (``MINDBANK_API_KEY``) opens everything, and is the only way to create or revoke scoped keys. A
scoped key is limited to a list of bank scopes, each an exact bank id (``team-a``), a prefix ending in ``*``
(``team-*``: every bank whose id starts with ``team-``, including banks the key creates) or ``*`` (every bank), and is
either read-only (GET requests and the POSTs that write nothing: recall, reflect, dry runs, scope previews) or
read-write. A bank outside its scopes does not exist for the key (HTTP 404, not 403: a key cannot probe for bank
names). Keys are stored as SHA-256 digests: the secret is shown once, at creation.

Every surface finds the caller under :data:`PRINCIPAL_SCOPE_KEY` in the ASGI scope (set by the API-key middleware);
absent means no key was configured or the caller is in-process, i.e. unrestricted.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mindbank.domain.limits import check_bank_id
from mindbank.errors import InvalidInputError, NotFoundError

PRINCIPAL_SCOPE_KEY = "mindbank.principal"
TOKEN_PREFIX = "mbk_"
MAX_SCOPES = 100


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of a request: the admin (``key_id`` None, every bank) or a scoped key."""

    key_id: str | None
    banks: tuple[str, ...]
    read_only: bool

    @property
    def admin(self) -> bool:
        """Whether this is the admin key (unrestricted, may manage keys)."""
        return self.key_id is None

    def covers(self, bank_id: str) -> bool:
        """Whether ``bank_id`` is inside one of the key's scopes."""
        return self.admin or any(bank_matches(scope, bank_id) for scope in self.banks)


ADMIN = Principal(key_id=None, banks=("*",), read_only=False)


def check_new_bank(principal: Principal | None, bank_id: str, field: str) -> str:
    """The one rule for every path that names a bank to create or write (restore, clone, MCP URLs and tools):
    ``bank_id`` must be a valid bank id (:class:`InvalidInputError` naming ``field``, 422), and inside the caller's
    scopes, else :class:`NotFoundError` (404) — the answer a bank outside the scopes gets whether it exists or not,
    so a key can neither create banks outside its scopes nor probe them. ``principal`` None: unrestricted."""
    check_bank_id(bank_id, field=field)
    if principal is not None and not principal.covers(bank_id):
        raise NotFoundError(f"Bank '{bank_id}' not found")
    return bank_id


def bank_matches(scope: str, bank_id: str) -> bool:
    """Whether a scope (exact id, ``prefix*`` or ``*``) admits ``bank_id``."""
    if scope.endswith("*"):
        return bank_id.startswith(scope[:-1])
    return bank_id == scope


def check_scopes(scopes: Sequence[str], field: str = "banks") -> tuple[str, ...]:
    """Validated bank scopes (1..100 of them; exact ids must be valid bank ids, a prefix before ``*`` a valid
    start of one). Raises :class:`InvalidInputError` naming the scope."""
    if not scopes:
        raise InvalidInputError(field, "must name at least one bank or prefix (e.g. 'team-*', or '*' for all)")
    if len(scopes) > MAX_SCOPES:
        raise InvalidInputError(field, f"must have at most {MAX_SCOPES} entries")
    for i, scope in enumerate(scopes):
        prefix = scope[:-1] if scope.endswith("*") else scope
        if prefix or not scope.endswith("*"):
            check_bank_id(prefix, field=f"{field}[{i}]")
    return tuple(dict.fromkeys(scopes))


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored scoped key (never its secret): ``secret_hash`` is the SHA-256 hex digest of the whole token."""

    id: str
    name: str | None
    banks: tuple[str, ...]
    read_only: bool
    secret_hash: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def principal(self) -> Principal:
        """The caller this key authenticates."""
        return Principal(key_id=self.id, banks=self.banks, read_only=self.read_only)


def new_token() -> tuple[str, str]:
    """A fresh ``(key id, token)``: the token is ``mbk_<id>_<secret>`` with 256 random bits of secret."""
    key_id = secrets.token_hex(8)
    return key_id, f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def token_key_id(token: str) -> str | None:
    """The key id a token names (None when it is not shaped like one of ours)."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    key_id, sep, secret = token[len(TOKEN_PREFIX) :].partition("_")
    return key_id if sep and secret and len(key_id) == 16 else None


def hash_token(token: str) -> str:
    """The stored digest of a token. A plain SHA-256 suffices: tokens carry 256 random bits, so there is nothing
    for a slow password hash to protect against."""
    return hashlib.sha256(token.encode()).hexdigest()
