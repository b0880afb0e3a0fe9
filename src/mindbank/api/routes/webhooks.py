"""Webhooks: ``POST/GET /webhooks``, ``PATCH/DELETE /webhooks/{id}``, ``GET /webhooks/{id}/deliveries`` (the
reference's shapes: ``WebhookResponse``, ``WebhookListResponse``, ``WebhookDeliveryListResponse``). A URL that is
not http(s), or whose host resolves to an internal address (unless allowed by configuration), answers 422."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from mindbank.api.deps import Bank, deleted_response
from mindbank.api.schemas import RequestBody
from mindbank.domain.fields import Offset
from mindbank.domain.timeutil import parse_timestamp, to_iso
from mindbank.errors import InvalidInputError
from mindbank.service.webhooks import KEEP
from mindbank.wire.resources import delivery_response, webhook_response

router = APIRouter(prefix="/v1/default/banks/{bank_id}/webhooks", tags=["webhooks"])


class WebhookHttpConfig(RequestBody):
    """``WebhookHttpConfig``."""

    method: str = "POST"
    timeout_seconds: int = 30
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, str] = Field(default_factory=dict)


class CreateWebhookRequest(RequestBody):
    """``CreateWebhookRequest``."""

    url: str
    secret: str | None = Field(default=None, max_length=512)
    event_types: list[str] = Field(default_factory=lambda: ["consolidation.completed"])
    enabled: bool = True
    http_config: WebhookHttpConfig = Field(default_factory=WebhookHttpConfig)


class UpdateWebhookRequest(BaseModel):
    """``UpdateWebhookRequest``: the fields given change (null keeps one); ``secret: null`` clears the secret and
    leaving it out keeps it, so this body is not a :class:`RequestBody` (which drops every null). Unknown keys are
    refused (422 naming the key), as in every request body."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = None
    secret: str | None = Field(default=None, max_length=512)
    event_types: list[str] | None = None
    enabled: bool | None = None
    http_config: WebhookHttpConfig | None = None


@router.post("", status_code=201)
def create_webhook(bank_id: str, body: CreateWebhookRequest, mb: Bank) -> dict[str, Any]:
    """Register a webhook (bank auto-created)."""
    created = mb.create_webhook(
        bank_id, url=body.url, secret=body.secret, event_types=body.event_types, enabled=body.enabled,
        http_config=body.http_config.model_dump(),
    )  # fmt: skip
    return webhook_response(created)


@router.get("")
def list_webhooks(
    bank_id: str,
    mb: Bank,
    limit: Annotated[int, Query(ge=0, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """The bank's webhooks, oldest first (secrets redacted)."""
    items, total = mb.list_webhooks(bank_id, limit=limit, offset=offset)
    return {"items": [webhook_response(w) for w in items], "total": total, "limit": limit, "offset": offset}


@router.patch("/{webhook_id}")
def update_webhook(bank_id: str, webhook_id: str, body: UpdateWebhookRequest, mb: Bank) -> dict[str, Any]:
    """Change the given fields of a webhook."""
    updated = mb.update_webhook(
        bank_id, webhook_id, url=body.url, secret=body.secret if "secret" in body.model_fields_set else KEEP,
        event_types=body.event_types, enabled=body.enabled,
        http_config=None if body.http_config is None else body.http_config.model_dump(),
    )  # fmt: skip
    return webhook_response(updated)


@router.delete("/{webhook_id}")
def delete_webhook(bank_id: str, webhook_id: str, mb: Bank) -> dict[str, Any]:
    """Delete a webhook and its delivery log."""
    mb.delete_webhook(bank_id, webhook_id)
    return deleted_response("Webhook", webhook_id)


@router.get("/{webhook_id}/deliveries")
def list_deliveries(
    bank_id: str,
    webhook_id: str,
    mb: Bank,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    """The webhook's deliveries, newest first; ``cursor`` is the previous page's ``next_cursor``."""
    try:
        before = parse_timestamp(cursor) if cursor else None
    except ValueError as exc:
        raise InvalidInputError("cursor", f"is not a timestamp: {exc}") from exc
    items = mb.list_webhook_deliveries(bank_id, webhook_id, limit=limit, before=before)
    next_cursor = to_iso(items[-1].created_at) if len(items) == limit else None
    return {"items": [delivery_response(d) for d in items], "next_cursor": next_cursor}
