"""Service events from the worker's handlers: ``consolidation.completed``, ``mental_model.refreshed``,
``mental_model.draft_ready`` (a review-mode refresh wrote a draft) and ``mental_model.refresh_failed``
(``retain.completed`` comes from the retain itself, synchronous or queued).

:func:`observed` wraps a handler: a result is a completed event; a ``PermanentFailure``, or an error on the
attempt the worker will not retry, a failed one; a parked (``Deferred``) or retried attempt is no event yet. A
refresh event carries the outcome, the model id and the history entry the refresh wrote (None when it wrote none:
an unchanged document keeps its history as it was).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import to_iso
from mindbank.engine.refresh.review import draft_view
from mindbank.service.events import ServiceEvent
from mindbank.worker.runner import Deferred, PermanentFailure, Requeue

if TYPE_CHECKING:
    from mindbank.service.facade import MindBank

Handler = Callable[[Operation], dict[str, Any]]


def observed(mb: MindBank, kind: str, handler: Handler) -> Handler:
    """``handler`` emitting the events of operations of type ``kind`` (module docstring)."""
    if kind not in ("consolidation", "refresh_mental_model"):
        return handler

    def run(op: Operation) -> dict[str, Any]:
        try:
            result = handler(op)
        except (Deferred, Requeue):  # parked or stepping aside: not finished yet
            raise
        except PermanentFailure as exc:
            _emit(mb, kind, op, {**exc.details, "error_message": str(exc)}, failed=True)
            raise
        except Exception as exc:
            if op.retry_count >= mb.settings.worker_max_retries:  # the worker fails it now (worker/runner.py)
                _emit(mb, kind, op, {"error_message": f"{type(exc).__name__}: {exc}"}, failed=True)
            raise
        _emit(mb, kind, op, result, failed=False)
        return result

    return run


def _emit(mb: MindBank, kind: str, op: Operation, data: dict[str, Any], *, failed: bool) -> None:
    status = "failed" if failed else "completed"
    if kind == "consolidation":
        if not failed:
            mb.events.emit(ServiceEvent("consolidation.completed", op.bank_id, dict(data), operation_id=op.id))
        return
    model_id = op.payload.get("mental_model_id") or op.mental_model_id
    payload = {
        **data,
        "mental_model_id": model_id,
        "outcome": data.get("outcome") or ("refresh_failed_error" if failed else None),
        "history_entry": _history_entry(mb, op, model_id),
    }
    event_type = "mental_model.refresh_failed" if failed else "mental_model.refreshed"
    if data.get("draft") and not failed:  # review before publish: a draft waits for a person
        event_type = "mental_model.draft_ready"
        payload["draft"] = draft_summary(mb, op.bank_id, model_id)
    mb.events.emit(ServiceEvent(event_type, op.bank_id, payload, operation_id=op.id, status=status))


def draft_summary(mb: MindBank, bank_id: str, model_id: str | None) -> dict[str, Any] | None:
    """The waiting draft of a model, without its full content: ``{draft_id, created_at, diff, ...}``."""
    model = mb.store.get_mental_model(bank_id, model_id) if model_id else None
    view = draft_view(model) if model is not None else None
    return None if view is None else {k: v for k, v in view.items() if k not in ("content", "published_content")}


def _history_entry(mb: MindBank, op: Operation, model_id: str | None) -> dict[str, Any] | None:
    """The newest history row of the model if this run wrote it (at or after the operation was claimed)."""
    if model_id is None:
        return None
    rows = mb.store.list_history(op.bank_id, model_id)
    if not rows or rows[0].changed_at < op.updated_at:
        return None
    return {"id": rows[0].id, **rows[0].content, "changed_at": to_iso(rows[0].changed_at)}
