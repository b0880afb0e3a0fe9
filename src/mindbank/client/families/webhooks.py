"""Client methods over a bank's webhooks and their delivery log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mindbank.client._wire import Request, bank_path, child_path, clean, endpoint
from mindbank.client.resource_models import DeliveryList, SuccessResponse, Webhook, WebhookList

_UNSET: Any = object()  # update_webhook: a secret left out is kept, None clears it


class WebhookMethods:
    """``create_webhook``, ``list_webhooks``, ``update_webhook``, ``delete_webhook``, ``list_webhook_deliveries``."""

    @endpoint
    def create_webhook(
        self, bank_id: str, url: str, *, event_types: Sequence[str] | None = None, secret: str | None = None,
        enabled: bool = True, http_config: Mapping[str, Any] | None = None,
    ) -> Request[Webhook]:  # fmt: skip
        """Register a webhook: ``event_types`` (default ``consolidation.completed``), an HMAC ``secret``,
        ``http_config`` (``timeout_seconds``, ``headers``, ``params``)."""
        body = clean({"url": url, "event_types": None if event_types is None else list(event_types),
                      "secret": secret, "enabled": enabled,
                      "http_config": None if http_config is None else dict(http_config)})  # fmt: skip
        return Request("POST", f"{bank_path(bank_id)}/webhooks", Webhook.model_validate, json=body)

    @endpoint
    def list_webhooks(self, bank_id: str, *, limit: int = 100, offset: int = 0) -> Request[WebhookList]:
        """The bank's webhooks (secrets redacted)."""
        params = {"limit": limit, "offset": offset}
        return Request("GET", f"{bank_path(bank_id)}/webhooks", WebhookList.model_validate, params=params)

    @endpoint
    def update_webhook(
        self, bank_id: str, webhook_id: str, *, url: str | None = None, event_types: Sequence[str] | None = None,
        secret: str | None = _UNSET, enabled: bool | None = None, http_config: Mapping[str, Any] | None = None,
    ) -> Request[Webhook]:  # fmt: skip
        """Change the given fields; ``secret=None`` clears the secret (left out, it is kept)."""
        config = None if http_config is None else dict(http_config)
        events = None if event_types is None else list(event_types)
        body = clean({"url": url, "event_types": events, "enabled": enabled, "http_config": config})
        if secret is not _UNSET:
            body["secret"] = secret
        return Request("PATCH", child_path(bank_id, "webhooks", webhook_id), Webhook.model_validate, json=body)

    @endpoint
    def delete_webhook(self, bank_id: str, webhook_id: str) -> Request[SuccessResponse]:
        """Delete a webhook and its delivery log."""
        return Request("DELETE", child_path(bank_id, "webhooks", webhook_id), SuccessResponse.model_validate)

    @endpoint
    def list_webhook_deliveries(
        self, bank_id: str, webhook_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> Request[DeliveryList]:
        """A webhook's deliveries, newest first; pass the previous page's ``next_cursor`` to page on."""
        path = child_path(bank_id, "webhooks", webhook_id) + "/deliveries"
        return Request("GET", path, DeliveryList.model_validate, params=clean({"limit": limit, "cursor": cursor}))
