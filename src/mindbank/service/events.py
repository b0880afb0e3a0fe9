"""Service events: what a webhook may subscribe to, and the one place each event is emitted from.

Declared here: every event type (:data:`WEBHOOK_EVENTS`: the reference's three plus the mental-model events it
lacks), the event record (:class:`ServiceEvent`) and the hub observers subscribe to (:class:`EventHub`: the webhook
dispatcher and the Prometheus metrics). Emitted here: ``retain.completed`` (:func:`emit_retain`, by a retain,
synchronous or queued) and the events of finished worker operations (:func:`observed`, wrapping a handler):
``consolidation.completed``, ``mental_model.refreshed``, ``mental_model.draft_ready`` (a review-mode refresh wrote a
draft) and ``mental_model.refresh_failed``. A new event is a name in the lists below and its emit helper beside
the others (plus its documentation under ``POST /webhooks`` in ``docs/api.md``).

Events are emitted after the work committed, in the thread that did it; an observer that raises is logged and
never breaks that work (nor the other observers).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.refresh.review import draft_view
from mindbank.store.base import Store
from mindbank.worker.runner import Deferred, PermanentFailure, Requeue

log = logging.getLogger(__name__)

RETAIN_COMPLETED = "retain.completed"
CONSOLIDATION_COMPLETED = "consolidation.completed"
# accepted for compatibility with the reference; mindbank has no memory defense, so it never fires
MEMORY_DEFENSE_TRIGGERED = "memory_defense.triggered"
MODEL_REFRESHED = "mental_model.refreshed"
MODEL_REFRESH_FAILED = "mental_model.refresh_failed"
MODEL_DRAFT_READY = "mental_model.draft_ready"

REFERENCE_EVENTS: tuple[str, ...] = (RETAIN_COMPLETED, CONSOLIDATION_COMPLETED, MEMORY_DEFENSE_TRIGGERED)
MENTAL_MODEL_EVENTS: tuple[str, ...] = (MODEL_REFRESHED, MODEL_REFRESH_FAILED, MODEL_DRAFT_READY)
WEBHOOK_EVENTS: tuple[str, ...] = REFERENCE_EVENTS + MENTAL_MODEL_EVENTS
DEFAULT_WEBHOOK_EVENTS: tuple[str, ...] = (CONSOLIDATION_COMPLETED,)


@dataclass(frozen=True, slots=True)
class ServiceEvent:
    """One event: ``type`` (one of :data:`WEBHOOK_EVENTS`), the bank, the operation it came from (None for
    synchronous work), ``status`` (``completed`` or ``failed``) and its ``data`` (JSON-able)."""

    type: str
    bank_id: str
    data: dict[str, Any]
    operation_id: str | None = None
    status: str = "completed"
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    at: datetime = field(default_factory=utcnow)


Observer = Callable[[ServiceEvent], None]
Handler = Callable[[Operation], dict[str, Any]]


class EventHub:
    """Observers of service events (thread-safe). :meth:`emit` calls each in subscription order."""

    def __init__(self) -> None:
        self._observers: list[Observer] = []
        self._lock = threading.Lock()

    def subscribe(self, observer: Observer) -> None:
        """Call ``observer`` with every event emitted from now on."""
        with self._lock:
            self._observers.append(observer)

    def emit(self, event: ServiceEvent) -> None:
        """Tell every observer; one that raises is logged and skipped."""
        with self._lock:
            observers = list(self._observers)
        for observer in observers:
            try:
                observer(event)
            except Exception:  # an observer (webhooks, metrics) must never break the work it watches
                log.exception("event observer %r failed on %s", observer, event.type)


def emit_retain(
    hub: EventHub,
    bank_id: str,
    document_ids: Sequence[str],
    memory_count: int,
    operation_id: str | None,
    *,
    items_count: int,
) -> None:
    """``retain.completed`` for one retain of ``items_count`` items: its documents and how many memories they
    yielded (``document_id``: the first document, as the reference's single-document retains carry it)."""
    data = {
        "document_id": document_ids[0] if document_ids else None,
        "document_ids": list(document_ids),
        "items_count": items_count,
        "memory_unit_count": memory_count,
    }
    hub.emit(ServiceEvent(RETAIN_COMPLETED, bank_id, data, operation_id=operation_id))


def observed(hub: EventHub, store: Store, max_retries: Callable[[], int], kind: str, handler: Handler) -> Handler:
    """``handler`` emitting the events of operations of type ``kind`` (consolidations and refreshes; other types
    are returned as they are). A result is a completed event; a ``PermanentFailure``, or an error on the attempt
    the worker will not retry (``max_retries()`` retries already made), a failed one; a parked (``Deferred``) or
    retried attempt is no event yet."""
    if kind not in ("consolidation", "refresh_mental_model"):
        return handler

    def run(op: Operation) -> dict[str, Any]:
        try:
            result = handler(op)
        except (Deferred, Requeue):  # parked or stepping aside: not finished yet
            raise
        except PermanentFailure as exc:
            _emit_finished(hub, store, kind, op, {**exc.details, "error_message": str(exc)}, failed=True)
            raise
        except Exception as exc:
            if op.retry_count >= max_retries():  # the worker fails it now (worker/runner.py)
                _emit_finished(hub, store, kind, op, {"error_message": f"{type(exc).__name__}: {exc}"}, failed=True)
            raise
        _emit_finished(hub, store, kind, op, result, failed=False)
        return result

    return run


def _emit_finished(
    hub: EventHub, store: Store, kind: str, op: Operation, data: dict[str, Any], *, failed: bool
) -> None:
    """The event of a finished operation. A refresh event carries the outcome, the model id and the history entry
    the refresh wrote (None when it wrote none: an unchanged document keeps its history as it was)."""
    status = "failed" if failed else "completed"
    if kind == "consolidation":
        if not failed:
            hub.emit(ServiceEvent(CONSOLIDATION_COMPLETED, op.bank_id, dict(data), operation_id=op.id))
        return
    model_id = op.payload.get("mental_model_id") or op.mental_model_id
    payload = {
        **data,
        "mental_model_id": model_id,
        "outcome": data.get("outcome") or ("refresh_failed_error" if failed else None),
        "history_entry": _history_entry(store, op, model_id),
    }
    event_type = MODEL_REFRESH_FAILED if failed else MODEL_REFRESHED
    if data.get("draft") and not failed:  # review before publish: a draft waits for a person
        event_type = MODEL_DRAFT_READY
        payload["draft"] = draft_summary(store, op.bank_id, model_id)
    hub.emit(ServiceEvent(event_type, op.bank_id, payload, operation_id=op.id, status=status))


def draft_summary(store: Store, bank_id: str, model_id: str | None) -> dict[str, Any] | None:
    """The waiting draft of a model, without its full content: ``{draft_id, created_at, diff, ...}``."""
    model = store.get_mental_model(bank_id, model_id) if model_id else None
    view = draft_view(model) if model is not None else None
    return None if view is None else {k: v for k, v in view.items() if k not in ("content", "published_content")}


def _history_entry(store: Store, op: Operation, model_id: str | None) -> dict[str, Any] | None:
    """The newest history row of the model if this run wrote it (at or after the operation was claimed)."""
    if model_id is None:
        return None
    rows = store.list_history(op.bank_id, model_id)
    if not rows or rows[0].changed_at < op.updated_at:
        return None
    return {"id": rows[0].id, **rows[0].content, "changed_at": to_iso(rows[0].changed_at)}
