"""Persisting a refresh plan: the success write (content, structured document, watermark, clocks, history row) or
the failure write (stamp and failure row only: content, document, watermark and ``last_refreshed_at`` untouched).
Either way the model's governance record (``domain/governance.py``: consecutive failures, carried-over facts,
re-anchor and empty-scope marks) and the refresh's spend go in the same store transaction
(``Store.save_refresh``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from mindbank.domain.document import count_tokens
from mindbank.domain.governance import scope_signature
from mindbank.domain.history import failure_entry, version_entry
from mindbank.domain.records import MentalModel
from mindbank.engine.refresh.curation import keep_concurrent_edits
from mindbank.engine.refresh.plan import WRITING_OUTCOMES, RefreshPlan, RefreshSettings, newer
from mindbank.engine.refresh.review import in_review, keep_review, stage_draft
from mindbank.store.base import SpendRecord, Store

# failures that spent nothing and cannot succeed until the scope changes: they do not move the backoff or breaker
UNCOUNTED_FAILURES = ("empty_scope",)


def persist_plan(
    store: Store, plan: RefreshPlan, settings: RefreshSettings, *, now: datetime, spend: SpendRecord | None = None
) -> MentalModel:
    """Write a plan: success (content, document, watermark, clocks, history) or failure (stamp + failure row
    only), with the governance record and ``spend``. Raises ``LookupError`` if the model was deleted meanwhile."""
    model = plan.model
    keep_trace = bool(model.trigger.get("keep_trace"))
    response: dict[str, Any]
    if plan.failed:
        response = {
            **(model.reflect_response or {}),
            "refresh_skipped": plan.failure_reason,
            "outcome": plan.outcome,
        }
        response.pop("pending_retraction", None)  # only the latest failure's
        if plan.retraction is not None and plan.failure_reason == "empty_scope":
            response["pending_retraction"] = plan.retraction  # what the refused refresh would have removed
        if keep_trace:
            response["trace"] = plan.trace()
        state = model.refresh_state.after_failure(
            plan.failure_reason, counts=plan.failure_reason not in UNCOUNTED_FAILURES, reanchor=plan.reanchor
        )
        if plan.failure_reason == "empty_scope":
            state = replace(state, empty_scope=scope_signature(model.tags, model.trigger))
        failed = replace(model, reflect_response=response, last_refresh_failed_at=now, refresh_state=state)
        history = None
        if settings.history_enabled:
            history = failure_entry(
                outcome=plan.outcome, failure_reason=plan.failure_reason, error_message=plan.error_message
            )
        store.save_refresh(failed, history=history, history_cap=settings.history_cap, spend=spend)
        return failed
    if plan.outcome in WRITING_OUTCOMES:
        keep_concurrent_edits(store, plan)  # an edit or pin made while this refresh ran is not lost
    response = {
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
    if plan.mode_fallback_reason:
        response["mode_fallback_reason"] = plan.mode_fallback_reason
    if plan.trimmed:
        response["candidate_tokens"] = plan.candidate_tokens
        response["trimmed_block_ids"] = plan.trimmed
    if plan.carried_over:
        response["carried_over"] = plan.carried_over
    if plan.refresh_skipped:
        response["refresh_skipped"] = plan.refresh_skipped
    if plan.effective_mode == "delta" or plan.emitted:
        response["delta_applied"] = bool(plan.applied)
        response["delta_operations_applied"] = plan.applied
        response["delta_operations_skipped"] = plan.skipped
    if plan.curation:
        response["curation"] = plan.curation
    if plan.structured_output is not None:
        response["structured_output"] = plan.structured_output
    if keep_trace:
        response["trace"] = plan.trace()
    writes = plan.outcome in WRITING_OUTCOMES
    if in_review(model) and plan.outcome == "content_written":
        # review before publish: the result waits as a draft; the published model stays as it was
        staged = stage_draft(model, plan, response, now)
        store.save_refresh(staged, history=None, history_cap=settings.history_cap, spend=spend)
        return staged
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
        refresh_state=model.refresh_state.after_success(carried_over=plan.carried_over),
    )
    if in_review(model):
        updated = keep_review(model, updated)
    history = version_entry(model) if settings.history_enabled and plan.outcome == "content_written" else None
    store.save_refresh(updated, history=history, history_cap=settings.history_cap, spend=spend)
    return updated
