"""Webhooks: the reference's ``/webhooks`` API, its delivery log, and delivery itself.

A webhook subscribes to event types (:data:`~mindbank.service.events.WEBHOOK_EVENTS`: the reference's
``retain.completed``, ``consolidation.completed`` and ``memory_defense.triggered``, plus ``mental_model.refreshed``
and ``mental_model.refresh_failed``). Each service event (:mod:`mindbank.service.events`) of a bank becomes one
delivery per enabled, subscribed webhook: a ``webhook_deliveries`` row stored together with the
``webhook_delivery`` operation that sends it, so deliveries ride the worker queue and survive restarts. A failed
attempt (no answer, or a non-2xx one) is retried with exponential backoff (``MINDBANK_WEBHOOK_RETRY_BACKOFF_SECONDS``,
doubling) up to ``MINDBANK_WEBHOOK_MAX_ATTEMPTS``, then the delivery is ``failed``. Targets and signatures:
:mod:`mindbank.providers.webhooks`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Final

from mindbank.domain.projection import project
from mindbank.domain.records import Operation
from mindbank.domain.resource_checks import DEFAULT_TIMEOUT_SECONDS, check_http_config, split_webhook_url
from mindbank.domain.resources import DeliveryStatus, Webhook, WebhookDelivery
from mindbank.domain.timeutil import utcnow
from mindbank.errors import InvalidInputError
from mindbank.providers.webhooks import DeliveryError, UnsafeTarget, deliver, resolve_target, signature_headers
from mindbank.service.core import ServiceCore, changed_in_bank, found_in_bank
from mindbank.service.events import DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS, ServiceEvent
from mindbank.version import __version__
from mindbank.worker.runner import Deferred, PermanentFailure

MAX_WEBHOOKS = 100  # per bank


class _Keep:
    """Sentinel: a PATCH field that was not sent (``None`` is a value: it clears the secret)."""


KEEP: Final = _Keep()


def _event_types(values: Sequence[str] | None) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(values)) if values is not None else DEFAULT_WEBHOOK_EVENTS
    if not chosen:
        raise InvalidInputError("event_types", "must name at least one event type")
    for i, name in enumerate(chosen):
        if name not in WEBHOOK_EVENTS:
            known = ", ".join(WEBHOOK_EVENTS)
            raise InvalidInputError(f"event_types[{i}]", f"unknown event type {name!r}; known: {known}")
    return chosen


def envelope(event: ServiceEvent) -> dict[str, Any]:
    """The JSON body a receiver gets: ``{event, event_id, bank_id, operation_id, status, timestamp, data}``."""
    keys = ("event", "event_id", "bank_id", "operation_id", "status", "timestamp")
    return {**project(event, keys, {"event": "type", "event_id": "id", "timestamp": "at"}), "data": event.data}


class WebhooksService(ServiceCore):
    """Webhook methods of the service, the event dispatcher and the delivery
    handler."""

    def _check_url(self, url: str) -> str:
        url = url.strip()
        split_webhook_url(url)
        try:
            resolve_target(url, allow_private=self.settings.webhook_allow_private_targets)
        except UnsafeTarget as exc:
            raise InvalidInputError("url", str(exc)) from exc
        return url

    def create_webhook(
        self, bank_id: str, *, url: str, secret: str | None = None, event_types: Sequence[str] | None = None,
        enabled: bool = True, http_config: Mapping[str, Any] | None = None,
    ) -> Webhook:  # fmt: skip
        """Register a webhook (bank auto-created). Raises :class:`InvalidInputError` naming the field: a URL that
        is not http(s) or whose host resolves to an internal address (unless allowed), an unknown event type, a bad
        ``http_config``, or a bank already holding ``MAX_WEBHOOKS``."""
        checked = self._check_url(url)
        events = _event_types(event_types)
        config = check_http_config(http_config)
        if self.store.bank_exists(bank_id) and len(self.store.list_webhooks(bank_id)) >= MAX_WEBHOOKS:
            raise InvalidInputError("url", f"a bank holds at most {MAX_WEBHOOKS} webhooks")
        now = utcnow()
        webhook = Webhook(
            id=str(uuid.uuid4()), bank_id=bank_id, url=checked, secret=secret or None, event_types=events,
            enabled=enabled, http_config=config, created_at=now, updated_at=now,
        )  # fmt: skip
        self.store.insert_webhook(webhook)
        return webhook

    def get_webhook(self, bank_id: str, webhook_id: str) -> Webhook:
        """One webhook. Raises :class:`NotFoundError`."""
        return found_in_bank(self.store.get_webhook(bank_id, webhook_id), "Webhook", webhook_id, bank_id)

    def list_webhooks(self, bank_id: str, *, limit: int = 100, offset: int = 0) -> tuple[list[Webhook], int]:
        """A page of the bank's webhooks, oldest first, and the total."""
        found = self.store.list_webhooks(bank_id)
        return found[offset : offset + limit], len(found)

    def update_webhook(
        self, bank_id: str, webhook_id: str, *, url: str | None = None, secret: str | _Keep | None = KEEP,
        event_types: Sequence[str] | None = None, enabled: bool | None = None,
        http_config: Mapping[str, Any] | None = None,
    ) -> Webhook:  # fmt: skip
        """Change the given fields (None = keep; ``secret=None`` clears the secret, leaving it out keeps it).
        Raises :class:`NotFoundError`, :class:`InvalidInputError` (as :meth:`create_webhook`)."""
        current = self.get_webhook(bank_id, webhook_id)
        updated = replace(
            current,
            url=current.url if url is None else self._check_url(url),
            secret=current.secret if isinstance(secret, _Keep) else (secret or None),
            event_types=current.event_types if event_types is None else _event_types(event_types),
            enabled=current.enabled if enabled is None else enabled,
            http_config=current.http_config if http_config is None else check_http_config(http_config),
            updated_at=utcnow(),
        )
        changed_in_bank(self.store.update_webhook(updated), "Webhook", webhook_id, bank_id)
        return updated

    def delete_webhook(self, bank_id: str, webhook_id: str) -> None:
        """Delete a webhook and its delivery log (queued deliveries are dropped). Raises :class:`NotFoundError`."""
        changed_in_bank(self.store.delete_webhook(bank_id, webhook_id), "Webhook", webhook_id, bank_id)

    def list_webhook_deliveries(
        self, bank_id: str, webhook_id: str, *, limit: int = 50, before: datetime | None = None
    ) -> list[WebhookDelivery]:
        """A webhook's deliveries, newest first; ``before`` (the previous page's last ``created_at``) pages on.
        Raises :class:`NotFoundError`."""
        self.get_webhook(bank_id, webhook_id)
        return self.store.list_deliveries(bank_id, webhook_id, limit=limit, before=before)

    # ---------------------------------------------------------------- dispatch and delivery

    def dispatch_webhooks(self, event: ServiceEvent) -> None:
        """Event observer: queue one delivery per enabled webhook of the event's bank subscribed to its type."""
        targets = [w for w in self.store.list_webhooks(event.bank_id) if w.enabled and event.type in w.event_types]
        if not targets:
            return
        now = utcnow()
        body = envelope(event)
        queued = []
        for webhook in targets:
            delivery_id = str(uuid.uuid4())
            op = self._new_operation(event.bank_id, "webhook_delivery", {"delivery_id": delivery_id})
            delivery = WebhookDelivery(
                id=delivery_id, bank_id=event.bank_id, webhook_id=webhook.id, event_id=event.id,
                event_type=event.type, url=webhook.url, payload=body, status="pending", attempts=0, created_at=now,
                updated_at=now, operation_id=op.id,
            )  # fmt: skip
            queued.append((delivery, op))
        self.store.enqueue_deliveries(queued)
        self.wake()

    def run_webhook_delivery(self, op: Operation) -> dict[str, Any]:
        """Worker handler of ``webhook_delivery``: one signed attempt. Success (2xx) completes the operation; a
        failure parks it until the next backoff step (``Deferred``) or, after the last attempt, fails it."""
        delivery = self.store.get_delivery(op.payload["delivery_id"])
        webhook = None if delivery is None else self.store.get_webhook(delivery.bank_id, delivery.webhook_id)
        if delivery is None or webhook is None:
            return {"delivery_id": op.payload["delivery_id"], "skipped": "the webhook was deleted"}
        if delivery.status != "pending":
            return {"delivery_id": delivery.id, "status": delivery.status}
        now = utcnow()
        attempt = replace(delivery, attempts=delivery.attempts + 1, last_attempt_at=now, updated_at=now,
                          next_retry_at=None)  # fmt: skip
        if not webhook.enabled:
            self.store.save_delivery_attempt(replace(attempt, status="failed", last_error="webhook disabled"))
            raise PermanentFailure("webhook disabled", {"delivery_id": delivery.id})
        error, retry_at = self._attempt(webhook, delivery, attempt)
        if error is None:
            return {"delivery_id": delivery.id, "status": "delivered", "attempts": attempt.attempts}
        if retry_at is None:
            raise PermanentFailure(f"webhook delivery failed after {attempt.attempts} attempts: {error}",
                                   {"delivery_id": delivery.id})  # fmt: skip
        raise Deferred(retry_at, f"retrying webhook delivery: {error}")

    def _attempt(
        self, webhook: Webhook, delivery: WebhookDelivery, attempt: WebhookDelivery
    ) -> tuple[str | None, datetime | None]:
        """Send once and record the outcome; returns ``(error, when to retry)``: ``(None, None)`` when delivered,
        ``(error, None)`` after the last attempt."""
        body = json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()
        headers = {
            **webhook.http_config.get("headers", {}),
            "Content-Type": "application/json",
            "User-Agent": f"mindbank-webhooks/{__version__}",
            "X-Hindsight-Event": delivery.event_type,
            "X-Hindsight-Delivery": delivery.id,
            **(signature_headers(webhook.secret, body) if webhook.secret else {}),
        }
        status: DeliveryStatus = "delivered"
        error: str | None = None
        reply = None
        try:
            response = deliver(
                webhook.url, body, headers, params=webhook.http_config.get("params") or None,
                timeout=float(webhook.http_config.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
                allow_private=self.settings.webhook_allow_private_targets,
            )  # fmt: skip
            reply = response
            if not response.ok:
                error = f"HTTP {response.status_code}"
        except DeliveryError as exc:
            error = str(exc)
        retry_at = None
        if error is not None:
            last = attempt.attempts >= self.settings.webhook_max_attempts
            status = "failed" if last else "pending"
            delay = self.settings.webhook_retry_backoff_seconds * 2 ** (attempt.attempts - 1)
            retry_at = None if last else utcnow() + timedelta(seconds=delay)
        recorded = replace(
            attempt, status=status, last_error=error, next_retry_at=retry_at,
            last_response_status=None if reply is None else reply.status_code,
            last_response_body=None if reply is None else reply.body,
        )  # fmt: skip
        self.store.save_delivery_attempt(recorded)
        return error, retry_at
