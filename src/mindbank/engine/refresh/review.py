"""Review before publish (beyond the reference; docs/curation.md): a model whose trigger says ``review: true`` gets
every completed refresh that would change its document as a *draft* on its governance record instead of published.

* :func:`stage_draft` — the model after such a refresh: content, structured document, response, watermark and
  ``last_refreshed_at`` as they were; the draft (with its diff against the published content) replaces any
  unreviewed one (coalescing); automatic triggers hold until an in-scope write newer than the draft's watermark.
* :func:`publish_draft` — the model after a person approves: exactly the draft's document (fixed content a person
  set meanwhile kept), its response and watermark, ``last_refreshed_at`` the approval time.
* :func:`drop_draft` — the model after a rejection: as it was, the draft gone, the hold kept at its watermark.
"""

from __future__ import annotations

import difflib
import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any

from mindbank.domain.document import StructuredDocument, render_markdown
from mindbank.domain.document.curation import has_fixed, restore_fixed
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import parse_timestamp, to_iso
from mindbank.engine.refresh.plan import RefreshPlan, load_document, newer


def in_review(model: MentalModel) -> bool:
    """Whether the model's refreshes go to review (``trigger.review``)."""
    return bool(model.trigger.get("review"))


def content_diff(published: str, draft: str) -> str:
    """A unified diff (``published`` → ``draft``) of the markdown, by line."""
    lines = difflib.unified_diff(published.splitlines(), draft.splitlines(), "published", "draft", lineterm="", n=2)
    return "\n".join(lines)


def stage_draft(model: MentalModel, plan: RefreshPlan, response: dict[str, Any], now: datetime) -> MentalModel:
    """``model`` with ``plan``'s result as its draft (module docstring). ``response`` is the ``reflect_response`` a
    published refresh would have stored."""
    state = model.refresh_state
    watermark = to_iso(newer(plan.watermark, model.last_memory_seen_at))
    draft = {
        "draft_id": uuid.uuid4().hex,
        "created_at": to_iso(now),
        "content": plan.content,
        "structured_document": plan.document.to_dict() if plan.document else None,
        "reflect_response": response,
        "watermark": watermark,
        "source_query": model.source_query,
        "effective_mode": plan.effective_mode,
        "outcome": plan.outcome,
        "diff": content_diff(model.content, plan.content),
        "replaced_draft_id": (state.draft or {}).get("draft_id"),
    }
    staged = replace(state.after_success(carried_over=plan.carried_over), draft=draft,
                     hold={"reason": "draft", "through": watermark})  # fmt: skip
    return replace(model, refresh_state=staged, last_refresh_failed_at=None)


def keep_review(model: MentalModel, updated: MentalModel) -> MentalModel:
    """``updated`` (a refresh that changed nothing) still holding ``model``'s waiting draft and its hold."""
    state = model.refresh_state
    if state.draft is None:
        return updated
    return replace(updated, refresh_state=replace(updated.refresh_state, draft=state.draft, hold=state.hold))


def publish_draft(model: MentalModel, now: datetime, approver: str) -> MentalModel:
    """``model`` publishing its draft (module docstring). The caller checked there is one."""
    draft = model.refresh_state.draft
    assert draft is not None
    stored = draft.get("structured_document")
    document = StructuredDocument.from_dict(stored) if stored else StructuredDocument([])
    if model.content.strip() or model.structured_document is not None:
        current = load_document(model)
        if has_fixed(current):  # a person's edits and pins made while the draft waited stand
            document = restore_fixed(current, document)
    content = render_markdown(document) if document.sections else draft.get("content", "")
    response = {**(draft.get("reflect_response") or {}), "text": content,
                "approved": {"draft_id": draft.get("draft_id"), "by": approver, "at": to_iso(now)}}  # fmt: skip
    full = draft.get("effective_mode") == "full"
    return replace(
        model,
        content=content,
        structured_document=document.to_dict() if document.sections else None,
        reflect_response=response,
        last_refreshed_at=now,
        last_memory_seen_at=newer(parse_timestamp(draft.get("watermark")), model.last_memory_seen_at),
        last_refreshed_source_query=draft.get("source_query") or model.source_query,
        last_full_refreshed_at=now if full else model.last_full_refreshed_at,
        cleared_at=None,
        refresh_state=replace(model.refresh_state, draft=None, hold=None),
    )


def drop_draft(model: MentalModel) -> MentalModel:
    """``model`` without its draft; automatic triggers keep waiting for a write newer than the draft's watermark."""
    draft = model.refresh_state.draft or {}
    hold = {"reason": "rejected", "through": draft.get("watermark")} if draft.get("watermark") else None
    return replace(model, refresh_state=replace(model.refresh_state, draft=None, hold=hold))


def draft_view(model: MentalModel) -> dict[str, Any] | None:
    """``GET …/draft``: the waiting draft with its diff, or None."""
    draft = model.refresh_state.draft
    if draft is None:
        return None
    keys = ("draft_id", "created_at", "content", "diff", "watermark", "effective_mode", "outcome", "replaced_draft_id")
    return {"mental_model_id": model.id, "published_content": model.content, **{k: draft.get(k) for k in keys}}
