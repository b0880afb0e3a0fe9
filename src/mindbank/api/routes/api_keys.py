"""Scoped API keys: ``POST/GET /v1/default/api-keys`` and ``DELETE /v1/default/api-keys/{key_id}`` (admin key only;
docs/security.md). Beyond the reference."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import Field

from mindbank.api.access import ADMIN_ONLY
from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.api.schemas import RequestBody
from mindbank.domain.access import MAX_SCOPES, ApiKey
from mindbank.domain.fields import NameText
from mindbank.domain.timeutil import to_iso

router = APIRouter(prefix="/v1/default/api-keys", tags=["api-keys"])

Scope = Annotated[str, Field(min_length=1, max_length=130, pattern=r"^[^\x00-\x1f\x7f-\x9f/\\]*$")]


class CreateApiKeyRequest(RequestBody):
    """A key limited to ``banks`` (bank ids, ``prefix*``, or ``*`` for every bank), read-only or read-write."""

    banks: Annotated[list[Scope], Field(min_length=1, max_length=MAX_SCOPES)]
    read_only: bool = False
    name: NameText | None = None


def api_key_item(key: ApiKey) -> dict[str, Any]:
    """A key as listed: never its secret."""
    return {
        "id": key.id,
        "name": key.name,
        "banks": list(key.banks),
        "read_only": key.read_only,
        "created_at": to_iso(key.created_at),
        "revoked_at": to_iso(key.revoked_at),
    }


@router.post("", openapi_extra=ADMIN_ONLY, responses=errors(409), status_code=201)
def create_api_key(body: CreateApiKeyRequest, mb: Bank) -> dict[str, Any]:
    """Create a scoped key; the response's ``key`` is the secret, shown this once. 409 without an admin key."""
    key, token = mb.create_api_key(banks=body.banks, read_only=body.read_only, name=body.name)
    return {**api_key_item(key), "key": token}


@router.get("", openapi_extra=ADMIN_ONLY)
def list_api_keys(mb: Bank) -> dict[str, Any]:
    """Every key (revoked ones too), oldest first, without secrets."""
    keys = mb.list_api_keys()
    return {"items": [api_key_item(k) for k in keys], "total": len(keys)}


@router.delete("/{key_id}", openapi_extra=ADMIN_ONLY, responses=errors(404))
def revoke_api_key(key_id: str, mb: Bank) -> dict[str, Any]:
    """Revoke a key at once (its next request answers 401); 404 for an unknown or already revoked key."""
    return {"success": True, **api_key_item(mb.revoke_api_key(key_id))}
