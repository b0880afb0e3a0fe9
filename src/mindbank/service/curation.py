"""Curation of a mental model by people (beyond the reference): hand edits of blocks by id and pins of blocks and
sections. Each edit is one write with a history version, like a refresh; the edited content is fixed content that
every later refresh keeps (``engine/refresh/curation.py``). Rules: docs/curation.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mindbank.domain.access import Principal
from mindbank.domain.document import DocumentError, StructuredDocument, count_tokens, render_markdown
from mindbank.domain.document.curation import (
    add_block,
    edit_block,
    fixed_block_ids,
    is_fixed,
    remove_block,
    set_pin,
)
from mindbank.domain.history import edit_entry, version_entry
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.refresh.plan import load_document
from mindbank.engine.refresh.review import draft_view, drop_draft, publish_draft
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore, found_in_bank

ADMIN_EDITOR = "admin"


def document_view(model: MentalModel) -> dict[str, Any]:
    """``GET …/blocks``: the model's structured document with block ids and curation marks, and its fixed block
    ids: ``{mental_model_id, version, sections: [{id, heading, level, pinned?, blocks: [{id, text, memory_ids,
    origin?, author?, edited_at?, pinned?}]}], fixed_block_ids, max_tokens, document_tokens}``."""
    document = _document(model)
    return {
        "mental_model_id": model.id,
        **document.to_dict(),
        "fixed_block_ids": fixed_block_ids(document),
        "max_tokens": model.max_tokens,
        "document_tokens": count_tokens(render_markdown(document)),
    }


def _document(model: MentalModel) -> StructuredDocument:
    if not model.content.strip() and model.structured_document is None:
        return StructuredDocument([])
    try:
        return load_document(model)
    except DocumentError as exc:
        raise InvalidInputError("mental_model_id", f"the model's document is unreadable: {exc}") from exc


class CurationService(ServiceCore):
    """Hand edits and pins of mental models (routes under ``…/mental-models/{id}/blocks``
    and ``…/sections/{id}/pin``)."""

    def editor_name(self, principal: Principal | None) -> str:
        """Who makes an edit: the API key's name (its id when unnamed), or ``"admin"`` (the admin key, or no key)."""
        if principal is None or principal.admin:
            return ADMIN_EDITOR
        key = next((k for k in self.store.list_api_keys() if k.id == principal.key_id), None)
        return (key.name if key is not None and key.name else None) or str(principal.key_id)

    def _curated_model(self, bank_id: str, model_id: str) -> MentalModel:
        return found_in_bank(self.store.get_mental_model(bank_id, model_id), "Mental model", model_id, bank_id)

    def mental_model_blocks(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """The model's document by block (see :func:`document_view`). Raises :class:`NotFoundError`."""
        return document_view(self._curated_model(bank_id, model_id))

    def get_mental_model_blocks(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Alias of :meth:`mental_model_blocks` (the client's name)."""
        return self.mental_model_blocks(bank_id, model_id)

    def _curate(
        self,
        bank_id: str,
        model_id: str,
        change: Callable[[StructuredDocument], StructuredDocument],
        edit: dict[str, Any],
        *,
        budget_of: Callable[[StructuredDocument], int] | None = None,
    ) -> dict[str, Any]:
        """Apply ``change`` to the model's document and store it with a history version recording ``edit``.
        ``budget_of`` measures what must fit ``max_tokens`` (default: the whole document). Raises
        :class:`NotFoundError`, :class:`InvalidInputError` (the change's ``DocumentError``, named by its field, or
        the budget)."""
        model = self._curated_model(bank_id, model_id)
        try:
            document = change(_document(model))
        except DocumentError as exc:
            field, _, message = str(exc).partition(": ")
            raise InvalidInputError(field if message else "block_id", message or str(exc)) from exc
        tokens = (budget_of or _whole_tokens)(document)
        if tokens > model.max_tokens:
            raise InvalidInputError(
                "text" if budget_of is None else "pinned",
                f"the {'document' if budget_of is None else 'fixed content'} would be {tokens} tokens, over the "
                f"model's max_tokens {model.max_tokens}",
            )
        content = render_markdown(document)
        response = dict(model.reflect_response or {})
        if response:
            response["text"] = content
        updated = replace(
            model,
            content=content,
            structured_document=document.to_dict() if document.sections else None,
            reflect_response=response or None,
        )
        history = edit_entry(model, edit) if self.settings.enable_mental_model_history else None
        self.store.save_refresh(updated, history=history, history_cap=self.settings.mental_model_history_max_entries)
        return document_view(updated)

    def edit_mental_model_block(
        self, bank_id: str, model_id: str, block_id: str, *, text: str, editor: str = ADMIN_EDITOR
    ) -> dict[str, Any]:
        """Replace a block's text by hand: it keeps its id, place and pin, and becomes ``origin: person`` with
        ``author`` and ``edited_at``. Raises :class:`NotFoundError` and :class:`InvalidInputError` (unknown
        ``block_id``, empty or multi-block ``text``, a document over ``max_tokens``)."""
        at = to_iso(utcnow())
        assert at is not None
        edit = {"action": "replace", "block_id": block_id, "author": editor}
        return self._curate(bank_id, model_id, lambda d: edit_block(d, block_id, text, author=editor, at=at), edit)

    def update_mental_model_block(
        self,
        bank_id: str,
        model_id: str,
        block_id: str,
        *,
        text: str | None = None,
        pinned: bool | None = None,
        editor: str = ADMIN_EDITOR,
    ) -> dict[str, Any]:
        """``PATCH …/blocks/{block_id}``: a new ``text`` (:meth:`edit_mental_model_block`) and/or ``pinned``
        (:meth:`pin_mental_model_block`), each its own history version. Raises :class:`InvalidInputError` when both
        are None, and what those methods raise."""
        if text is None and pinned is None:
            raise InvalidInputError("body", "give text and/or pinned")
        view: dict[str, Any] = {}
        if text is not None:
            view = self.edit_mental_model_block(bank_id, model_id, block_id, text=text, editor=editor)
        if pinned is not None:
            view = self.pin_mental_model_block(bank_id, model_id, block_id, pinned=pinned, editor=editor)
        return view

    def add_mental_model_block(
        self,
        bank_id: str,
        model_id: str,
        *,
        text: str,
        section_id: str | None = None,
        after_block_id: str | None = None,
        heading: str | None = None,
        editor: str = ADMIN_EDITOR,
    ) -> dict[str, Any]:
        """Add a person-written block to a section (after ``after_block_id``, else at its end), or to a new section
        titled ``heading``. Returns the document view with ``block_id`` (the new block's). Raises
        :class:`NotFoundError` and :class:`InvalidInputError` naming the field."""
        at = to_iso(utcnow())
        assert at is not None
        added: list[str] = []

        def change(document: StructuredDocument) -> StructuredDocument:
            new, block_id = add_block(document, text, author=editor, at=at, section_id=section_id,
                                      after_block_id=after_block_id, heading=heading)  # fmt: skip
            added.append(block_id)
            return new

        edit = {"action": "add", "section_id": section_id, "author": editor}
        view = self._curate(bank_id, model_id, change, edit)
        return {**view, "block_id": added[0]}

    def delete_mental_model_block(
        self, bank_id: str, model_id: str, block_id: str, *, editor: str = ADMIN_EDITOR
    ) -> dict[str, Any]:
        """Remove a block by hand (a section left empty goes too, unless pinned). Raises :class:`NotFoundError`
        and :class:`InvalidInputError` (unknown ``block_id``)."""
        edit = {"action": "remove", "block_id": block_id, "author": editor}
        return self._curate(bank_id, model_id, lambda d: remove_block(d, block_id), edit)

    def pin_mental_model_block(
        self, bank_id: str, model_id: str, block_id: str, *, pinned: bool = True, editor: str = ADMIN_EDITOR
    ) -> dict[str, Any]:
        """Pin (or unpin) a block: refreshes never change, move or remove it. Refused when the fixed content would
        not fit ``max_tokens``. Raises :class:`NotFoundError` and :class:`InvalidInputError`."""
        edit = {"action": "pin" if pinned else "unpin", "block_id": block_id, "author": editor}
        return self._curate(
            bank_id, model_id, lambda d: set_pin(d, pinned=pinned, block_id=block_id), edit, budget_of=_fixed_tokens
        )

    def pin_mental_model_section(
        self, bank_id: str, model_id: str, section_id: str, *, pinned: bool = True, editor: str = ADMIN_EDITOR
    ) -> dict[str, Any]:
        """Pin (or unpin) a whole section: refreshes keep its heading, blocks and place. Refused when the fixed
        content would not fit ``max_tokens``. Raises :class:`NotFoundError` and :class:`InvalidInputError`."""
        edit = {"action": "pin" if pinned else "unpin", "section_id": section_id, "author": editor}
        return self._curate(
            bank_id,
            model_id,
            lambda d: set_pin(d, pinned=pinned, section_id=section_id),
            edit,
            budget_of=_fixed_tokens,
        )

    # ------------------------------------------------------------------ review before publish
    def _draft_model(self, bank_id: str, model_id: str, draft_id: str | None) -> MentalModel:
        model = self._curated_model(bank_id, model_id)
        draft = model.refresh_state.draft
        if draft is None:
            raise NotFoundError(f"Mental model '{model_id}' has no draft waiting for review")
        if draft_id is not None and draft_id != draft.get("draft_id"):
            raise ConflictError(f"draft '{draft_id}' was replaced by a newer draft '{draft.get('draft_id')}'")
        return model

    def mental_model_draft(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """The draft waiting for review, with its diff against the published content (``review.draft_view``).
        Raises :class:`NotFoundError` (no model, or no draft)."""
        view = draft_view(self._draft_model(bank_id, model_id, None))
        assert view is not None
        return view

    def get_mental_model_draft(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Alias of :meth:`mental_model_draft` (the client's name)."""
        return self.mental_model_draft(bank_id, model_id)

    def approve_mental_model_draft(
        self, bank_id: str, model_id: str, *, draft_id: str | None = None, editor: str = ADMIN_EDITOR
    ) -> MentalModel:
        """Publish the waiting draft: exactly its document (a person's edits and pins made meanwhile kept), its
        response and watermark; ``last_refreshed_at`` becomes now; the replaced version goes to history.
        ``draft_id``: publish only that draft. Raises :class:`NotFoundError` and :class:`ConflictError` (a newer
        draft replaced ``draft_id``)."""
        model = self._draft_model(bank_id, model_id, draft_id)
        published = publish_draft(model, utcnow(), editor)
        history = version_entry(model) if self.settings.enable_mental_model_history else None
        self.store.save_refresh(published, history=history, history_cap=self.settings.mental_model_history_max_entries)
        return published

    def reject_mental_model_draft(
        self,
        bank_id: str,
        model_id: str,
        *,
        reason: str | None = None,
        draft_id: str | None = None,
        editor: str = ADMIN_EDITOR,
    ) -> MentalModel:
        """Drop the waiting draft (the published model stays as it was); the rejection and its ``reason`` are a
        history record. Automatic triggers wait for a write newer than the draft's watermark. Raises
        :class:`NotFoundError` and :class:`ConflictError`."""
        model = self._draft_model(bank_id, model_id, draft_id)
        draft = model.refresh_state.draft or {}
        history = None
        if self.settings.enable_mental_model_history:
            history = {"kind": "draft_rejected", "draft_id": draft.get("draft_id"), "reason": reason,
                       "author": editor, "diff": draft.get("diff")}  # fmt: skip
        rejected = drop_draft(model)
        self.store.save_refresh(rejected, history=history, history_cap=self.settings.mental_model_history_max_entries)
        return rejected


def _whole_tokens(document: StructuredDocument) -> int:
    return count_tokens(render_markdown(document))


def _fixed_tokens(document: StructuredDocument) -> int:
    """The tokens of the fixed content alone (its sections' headings with only their fixed blocks)."""
    sections = [
        replace(s, blocks=[b for b in s.blocks if is_fixed(s, b)])
        for s in document.sections
        if s.pinned or any(is_fixed(s, b) for b in s.blocks)
    ]
    return count_tokens(render_markdown(StructuredDocument(sections)))
