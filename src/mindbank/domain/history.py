"""Mental-model history entries: the row written when a document is replaced (a refresh that wrote, a revert) and
the row written when a refresh failed. Spec: "History"; the reference stores ``previous_content`` per change.

Entries are plain dicts (stored as JSON): a version row keeps the content being replaced, the ``based_on`` and
trace it came with, and the watermark it stood for, so :meth:`~mindbank.service.MindBank.revert_mental_model` can
restore staleness and the delta window along with the text.
"""

from __future__ import annotations

from typing import Any

from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import to_iso

HISTORY_RESPONSE_KEYS = ("based_on", "trace")


def version_entry(model: MentalModel) -> dict[str, Any]:
    """The history row for ``model``'s current document, written just before it is replaced:
    ``{previous_content, previous_reflect_response: {based_on?, trace?} | None, previous_last_memory_seen_at}``."""
    slim = {k: v for k, v in (model.reflect_response or {}).items() if k in HISTORY_RESPONSE_KEYS}
    entry = {
        "previous_content": model.content,
        "previous_reflect_response": slim or None,
        # the data position that content stood for, so a revert can restore staleness and delta windows
        "previous_last_memory_seen_at": to_iso(model.last_memory_seen_at),
    }
    if _curated(model.structured_document):
        # person-written blocks and pins live in the structure only: a revert restores them from here
        entry["previous_structured_document"] = model.structured_document
    return entry


def edit_entry(model: MentalModel, edit: dict[str, Any]) -> dict[str, Any]:
    """The history row of a hand edit or pin (docs/curation.md): the version it replaced, as :func:`version_entry`
    records it, plus ``{kind: "edit", edit: {action, block_id | section_id, author}}``."""
    return {**version_entry(model), "kind": "edit", "edit": edit}


def _curated(document: dict[str, Any] | None) -> bool:
    """Whether a stored document carries curation marks (read from its JSON form: no parse on every refresh)."""
    sections = (document or {}).get("sections")
    if not isinstance(sections, list):
        return False
    return any(
        isinstance(s, dict) and (s.get("pinned") or any(isinstance(b, dict) and (b.get("origin") or b.get("pinned"))
                                                        for b in s.get("blocks") or ()))
        for s in sections
    )  # fmt: skip


def is_version(entry: dict[str, Any]) -> bool:
    """Whether a stored history row holds a version of the content (not a failed refresh's record)."""
    return entry.get("kind") != "refresh_failed" and "previous_content" in entry


def failure_entry(*, outcome: str, failure_reason: str | None, error_message: str | None) -> dict[str, Any]:
    """The history row of a failed refresh (content unchanged): ``{kind: "refresh_failed", outcome, failure_reason,
    error_message}``."""
    return {
        "kind": "refresh_failed",
        "outcome": outcome,
        "failure_reason": failure_reason,
        "error_message": error_message,
    }


def history_numbering(model: MentalModel, entry: dict[str, Any]) -> tuple[bool, str, str, int]:
    """The numbering parameters of a new history row (``insert_history``): ``(is a version, bank id, model id, the
    model's first number)``. A version row takes one past the model's newest number; a model's first version row
    takes 0 when it replaced the empty state a model starts from, else 1. The number is stored with the row so that
    trimming the oldest rows (``mental_model_history_max_entries``) never renumbers those kept."""
    return (is_version(entry), model.bank_id, model.id, 0 if not entry.get("previous_content") else 1)
