"""Client methods over curation (docs/curation.md): a model's document by block, hand edits of blocks, pins of blocks
and sections, and review before publish (the draft, approve, reject)."""

from __future__ import annotations

from mindbank.client._wire import Request, child_path, clean, endpoint
from mindbank.client.curation_models import MentalModelBlocks, MentalModelDraft
from mindbank.client.models import MentalModel


def _path(bank_id: str, mental_model_id: str, rest: str) -> str:
    return f"{child_path(bank_id, 'mental-models', mental_model_id)}/{rest}"


class CurationMethods:
    """Every curation method."""

    @endpoint
    def get_mental_model_blocks(self, bank_id: str, mental_model_id: str) -> Request[MentalModelBlocks]:
        """The model's document by section and block, with block ids and curation marks."""
        return Request("GET", _path(bank_id, mental_model_id, "blocks"), MentalModelBlocks.model_validate)

    @endpoint
    def add_mental_model_block(
        self,
        bank_id: str,
        mental_model_id: str,
        text: str,
        *,
        section_id: str | None = None,
        after_block_id: str | None = None,
        heading: str | None = None,
    ) -> Request[MentalModelBlocks]:
        """Add a person-written block to ``section_id`` (after ``after_block_id``, else at its end) or to a new
        section titled ``heading``; the answer's ``block_id`` names it."""
        body = clean({"text": text, "section_id": section_id, "after_block_id": after_block_id, "heading": heading})
        return Request("POST", _path(bank_id, mental_model_id, "blocks"), MentalModelBlocks.model_validate, json=body)

    @endpoint
    def edit_mental_model_block(
        self, bank_id: str, mental_model_id: str, block_id: str, *, text: str | None = None, pinned: bool | None = None
    ) -> Request[MentalModelBlocks]:
        """Replace a block's text by hand (it becomes person-written) and/or pin or unpin it."""
        body = clean({"text": text, "pinned": pinned})
        path = _path(bank_id, mental_model_id, f"blocks/{block_id}")
        return Request("PATCH", path, MentalModelBlocks.model_validate, json=body)

    @endpoint
    def delete_mental_model_block(
        self, bank_id: str, mental_model_id: str, block_id: str
    ) -> Request[MentalModelBlocks]:
        """Remove a block by hand."""
        path = _path(bank_id, mental_model_id, f"blocks/{block_id}")
        return Request("DELETE", path, MentalModelBlocks.model_validate)

    @endpoint
    def pin_mental_model_section(
        self, bank_id: str, mental_model_id: str, section_id: str, *, pinned: bool = True
    ) -> Request[MentalModelBlocks]:
        """Pin (or, ``pinned=False``, unpin) a whole section."""
        path = _path(bank_id, mental_model_id, f"sections/{section_id}")
        return Request("PATCH", path, MentalModelBlocks.model_validate, json={"pinned": pinned})

    @endpoint
    def get_mental_model_draft(self, bank_id: str, mental_model_id: str) -> Request[MentalModelDraft]:
        """The draft waiting for review, with its diff (404 when none waits)."""
        return Request("GET", _path(bank_id, mental_model_id, "draft"), MentalModelDraft.model_validate)

    @endpoint
    def approve_mental_model_draft(
        self, bank_id: str, mental_model_id: str, *, draft_id: str | None = None
    ) -> Request[MentalModel]:
        """Publish the waiting draft exactly (``draft_id``: only that one; 409 when a newer one replaced it)."""
        path = _path(bank_id, mental_model_id, "draft/approve")
        return Request("POST", path, MentalModel.model_validate, json=clean({"draft_id": draft_id}))

    @endpoint
    def reject_mental_model_draft(
        self, bank_id: str, mental_model_id: str, *, reason: str | None = None, draft_id: str | None = None
    ) -> Request[MentalModel]:
        """Drop the waiting draft (with an optional ``reason``); the published model stays as it was."""
        path = _path(bank_id, mental_model_id, "draft/reject")
        body = clean({"reason": reason, "draft_id": draft_id})
        return Request("POST", path, MentalModel.model_validate, json=body)
