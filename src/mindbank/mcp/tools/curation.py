"""Curation tools (docs/curation.md): a mental model's document by block, hand edits of blocks, pins of blocks and
sections, and review before publish (the draft with its diff, approve, reject) — the HTTP API's shapes."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindbank.mcp.caller import current_principal
from mindbank.mcp.tools.common import BankId, ModelId, ToolFamily
from mindbank.wire.shapes import mental_model_response

BlockId = Annotated[str, Field(description="Id of the block (from get_mental_model_blocks).", min_length=1)]
SectionId = Annotated[str, Field(description="Id of the section (from get_mental_model_blocks).", min_length=1)]
BlockText = Annotated[str, Field(description="The block's markdown: one paragraph, list or table.", min_length=1)]
DraftId = Annotated[str | None, Field(description="Decide only this draft (refused if a newer one replaced it).")]


class CurationTools(ToolFamily):
    """Curation tools: blocks, edit, add, delete, pin a section, draft, approve, reject."""

    TOOLS = (
        "get_mental_model_blocks",
        "edit_mental_model_block",
        "add_mental_model_block",
        "delete_mental_model_block",
        "pin_mental_model_section",
        "get_mental_model_draft",
        "approve_mental_model_draft",
        "reject_mental_model_draft",
    )
    READS = frozenset({"get_mental_model_blocks", "get_mental_model_draft"})

    def _editor(self) -> str:
        return self.mb.editor_name(current_principal())

    def get_mental_model_blocks(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Read a mental model's document by section and block, with ids and who wrote each block.

        Returns {sections: [{id, heading, level, pinned?, blocks: [{id, text, memory_ids, origin?, author?,
        edited_at?, pinned?}]}], fixed_block_ids, max_tokens, document_tokens}. Blocks with origin "person" or
        pinned are kept as they are by every refresh.
        """
        return self.mb.mental_model_blocks(bank_id, mental_model_id)

    def edit_mental_model_block(
        self,
        mental_model_id: ModelId,
        block_id: BlockId,
        text: Annotated[BlockText | None, Field(description="New markdown for the block.")] = None,
        pinned: Annotated[bool | None, Field(description="Pin (true) or unpin (false) the block.")] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Correct a block of a mental model by hand (it becomes person-written and refreshes keep it) and/or pin or
        unpin it. Give text, pinned, or both. Returns the document by block."""
        return self.mb.update_mental_model_block(
            bank_id, mental_model_id, block_id, text=text, pinned=pinned, editor=self._editor()
        )

    def add_mental_model_block(
        self,
        mental_model_id: ModelId,
        text: BlockText,
        section_id: Annotated[str | None, Field(description="Section to add to.")] = None,
        after_block_id: Annotated[str | None, Field(description="Add after this block (default: at the end).")] = None,
        heading: Annotated[str | None, Field(description="Heading of a new section (instead of section_id).")] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Add a person-written block to a mental model (kept by every refresh). Returns the document by block and
        block_id, the new block's id."""
        return self.mb.add_mental_model_block(
            bank_id, mental_model_id, text=text, section_id=section_id, after_block_id=after_block_id,
            heading=heading, editor=self._editor(),
        )  # fmt: skip

    def delete_mental_model_block(
        self, mental_model_id: ModelId, block_id: BlockId, *, bank_id: BankId
    ) -> dict[str, Any]:
        """Remove a block from a mental model by hand. Returns the document by block."""
        return self.mb.delete_mental_model_block(bank_id, mental_model_id, block_id, editor=self._editor())

    def pin_mental_model_section(
        self,
        mental_model_id: ModelId,
        section_id: SectionId,
        pinned: Annotated[bool, Field(description="Pin (true) or unpin (false).")] = True,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Pin (or unpin) a whole section: refreshes never change, move or remove it. Returns the document by
        block."""
        return self.mb.pin_mental_model_section(
            bank_id, mental_model_id, section_id, pinned=pinned, editor=self._editor()
        )

    def get_mental_model_draft(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Read the refresh waiting for review (models whose trigger has review: true), with its unified diff against
        the published content. Returns {draft_id, created_at, content, published_content, diff, ...}."""
        return self.mb.mental_model_draft(bank_id, mental_model_id)

    def approve_mental_model_draft(
        self, mental_model_id: ModelId, draft_id: DraftId = None, *, bank_id: BankId
    ) -> dict[str, Any]:
        """Publish the draft waiting for review exactly. Returns the model (detail full)."""
        model = self.mb.approve_mental_model_draft(bank_id, mental_model_id, draft_id=draft_id, editor=self._editor())
        return mental_model_response(self.mb.get_mental_model(bank_id, model.id), "full")

    def reject_mental_model_draft(
        self,
        mental_model_id: ModelId,
        reason: Annotated[str | None, Field(description="Why, kept in the model's history.", max_length=2000)] = None,
        draft_id: DraftId = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Drop the draft waiting for review; the published model stays as it was. Returns the model."""
        model = self.mb.reject_mental_model_draft(
            bank_id, mental_model_id, reason=reason, draft_id=draft_id, editor=self._editor()
        )
        return mental_model_response(self.mb.get_mental_model(bank_id, model.id), "full")
