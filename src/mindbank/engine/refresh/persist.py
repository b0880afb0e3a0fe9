"""Persisting a refresh plan: the success write (content, structured document, watermark, clocks, history row) or
the failure write (stamp and failure row only: content, document, watermark and ``last_refreshed_at`` untouched).
One store transaction either way (``Store.save_refresh``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from mindbank.domain.document import count_tokens
from mindbank.domain.history import failure_entry, version_entry
from mindbank.domain.records import MentalModel
from mindbank.engine.refresh.plan import WRITING_OUTCOMES, RefreshPlan, RefreshSettings, newer
from mindbank.store.base import Store


def persist_plan(store: Store, plan: RefreshPlan, settings: RefreshSettings, *, now: datetime) -> MentalModel:
    """Write a plan: success (content, document, watermark, clocks, history) or failure (stamp + failure row
    only). Raises ``LookupError`` if the model was deleted meanwhile."""
    model = plan.model
    keep_trace = bool(model.trigger.get("keep_trace"))
    if plan.failed:
        response = {
            **(model.reflect_response or {}),
            "refresh_skipped": plan.failure_reason,
            "outcome": plan.outcome,
        }
        if keep_trace:
            response["trace"] = plan.trace()
        failed = replace(model, reflect_response=response, last_refresh_failed_at=now)
        history = None
        if settings.history_enabled:
            history = failure_entry(
                outcome=plan.outcome, failure_reason=plan.failure_reason, error_message=plan.error_message
            )
        store.save_refresh(failed, history=history, history_cap=settings.history_cap)
        return failed
    response: dict[str, Any] = {
        "text": plan.content,
        "based_on": plan.based_on,
        "mental_models": [],
        "outcome": plan.outcome,
        "engine": plan.engine,
        "effective_mode": plan.effective_mode,
        "facts_retrieved": len(plan.retrieved),
        "usage": plan.usage,
        "synthesis_input_tokens": plan.synthesis_input_tokens,
        "document_tokens": count_tokens(plan.content),
        "document_budget": model.max_tokens,
    }
    if plan.refresh_skipped:
        response["refresh_skipped"] = plan.refresh_skipped
    if plan.effective_mode == "delta" or plan.emitted:
        response["delta_applied"] = bool(plan.applied)
        response["delta_operations_applied"] = plan.applied
        response["delta_operations_skipped"] = plan.skipped
    if plan.structured_output is not None:
        response["structured_output"] = plan.structured_output
    if keep_trace:
        response["trace"] = plan.trace()
    writes = plan.outcome in WRITING_OUTCOMES
    updated = replace(
        model,
        content=plan.content if writes else model.content,
        structured_document=plan.document.to_dict() if writes and plan.document else model.structured_document,
        reflect_response=response,
        last_refreshed_at=now,
        last_memory_seen_at=newer(plan.watermark, model.last_memory_seen_at),
        last_refreshed_source_query=model.source_query if writes else model.last_refreshed_source_query,
        last_refresh_failed_at=None,
        last_full_refreshed_at=now if writes and plan.effective_mode == "full" else model.last_full_refreshed_at,
        cleared_at=None if writes else model.cleared_at,
    )
    history = version_entry(model) if settings.history_enabled and plan.outcome == "content_written" else None
    store.save_refresh(updated, history=history, history_cap=settings.history_cap)
    return updated
