"""Curation of a mental model by people: its document by block, hand edits of blocks, pins of blocks and sections.
Every write answers with the document by block (``service/curation.py``: ``document_view``). Rules:
docs/curation.md."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from mindbank.api.access import principal_of
from mindbank.api.deps import Bank, same_named
from mindbank.api.openapi import errors
from mindbank.api.schemas import AddBlockRequest, DraftDecisionRequest, EditBlockRequest, PinSectionRequest
from mindbank.service.facade import MindBank
from mindbank.wire.shapes import mental_model_response

router = APIRouter(prefix="/v1/default/banks/{bank_id}/mental-models/{mental_model_id}", tags=["mental-models"])


def editor_of(request: Request, mb: MindBank) -> str:
    """Who makes an edit: the caller's API key name, or ``"admin"``."""
    return mb.editor_name(principal_of(request))


@router.get("/blocks", responses=errors(404))
def mental_model_blocks(bank_id: str, mental_model_id: str, mb: Bank) -> dict[str, Any]:
    """The model's document by section and block: ids, texts, citations, and each block's curation marks
    (``origin``, ``author``, ``edited_at``, ``pinned``)."""
    return mb.mental_model_blocks(bank_id, mental_model_id)


@router.post("/blocks", responses=errors(404))
def add_block(bank_id: str, mental_model_id: str, body: AddBlockRequest, request: Request, mb: Bank) -> dict[str, Any]:
    """Add a person-written block (kept by every later refresh); ``block_id`` names it."""
    return mb.add_mental_model_block(
        bank_id,
        mental_model_id,
        editor=editor_of(request, mb),
        **same_named(body, "text", "section_id", "after_block_id", "heading"),
    )


@router.patch("/blocks/{block_id}", responses=errors(404))
def edit_block(
    bank_id: str, mental_model_id: str, block_id: str, body: EditBlockRequest, request: Request, mb: Bank
) -> dict[str, Any]:
    """Replace a block's text by hand (it becomes ``origin: person``) and/or pin or unpin it."""
    return mb.update_mental_model_block(
        bank_id, mental_model_id, block_id, text=body.text, pinned=body.pinned, editor=editor_of(request, mb)
    )


@router.delete("/blocks/{block_id}", responses=errors(404))
def delete_block(bank_id: str, mental_model_id: str, block_id: str, request: Request, mb: Bank) -> dict[str, Any]:
    """Remove a block by hand (a section left empty goes too, unless pinned)."""
    return mb.delete_mental_model_block(bank_id, mental_model_id, block_id, editor=editor_of(request, mb))


@router.patch("/sections/{section_id}", responses=errors(404))
def pin_section(
    bank_id: str, mental_model_id: str, section_id: str, body: PinSectionRequest, request: Request, mb: Bank
) -> dict[str, Any]:
    """Pin or unpin a whole section (refreshes keep its heading, blocks and place)."""
    return mb.pin_mental_model_section(
        bank_id, mental_model_id, section_id, pinned=body.pinned, editor=editor_of(request, mb)
    )


@router.get("/draft", responses=errors(404))
def mental_model_draft(bank_id: str, mental_model_id: str, mb: Bank) -> dict[str, Any]:
    """The draft waiting for review (``trigger.review``), with its diff against the published content."""
    return mb.mental_model_draft(bank_id, mental_model_id)


@router.post("/draft/approve", responses=errors(404, 409))
def approve_draft(
    bank_id: str,
    mental_model_id: str,
    request: Request,
    mb: Bank,
    body: Annotated[DraftDecisionRequest | None, Body()] = None,
) -> dict[str, Any]:
    """Publish the waiting draft exactly (``draft_id``: only that one; 409 when a newer draft replaced it)."""
    model = mb.approve_mental_model_draft(
        bank_id, mental_model_id, draft_id=body.draft_id if body else None, editor=editor_of(request, mb)
    )
    return mental_model_response(mb.get_mental_model(bank_id, model.id), "full")


@router.post("/draft/reject", responses=errors(404, 409))
def reject_draft(
    bank_id: str,
    mental_model_id: str,
    request: Request,
    mb: Bank,
    body: Annotated[DraftDecisionRequest | None, Body()] = None,
) -> dict[str, Any]:
    """Drop the waiting draft with an optional ``reason``; the published model stays as it was."""
    model = mb.reject_mental_model_draft(
        bank_id,
        mental_model_id,
        reason=body.reason if body else None,
        draft_id=body.draft_id if body else None,
        editor=editor_of(request, mb),
    )
    return mental_model_response(mb.get_mental_model(bank_id, model.id), "full")
