"""Document tools: list, read and delete retained documents (the reference's ``list_documents``, ``get_document``,
``delete_document`` tools)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindbank.domain.tags import TagsMatch
from mindbank.mcp.tools.common import BankId, Offset, TagList, ToolFamily
from mindbank.wire.resources import document_list_item, document_response


class DocumentTools(ToolFamily):
    """Document tools: list, read and delete retained documents."""

    TOOLS = ("list_documents", "get_document", "delete_document")
    READS = frozenset({"list_documents", "get_document"})

    def list_documents(
        self,
        q: Annotated[str | None, Field(description="Case-insensitive text found in the id or the text.")] = None,
        tags: TagList = None,
        tags_match: Annotated[TagsMatch, Field(description="How tags filter documents.")] = "any_strict",
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Offset = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the documents retained in the bank (without their text), most recently written first.

        Returns {items: [{id, tags, memory_unit_count, text_length, created_at, updated_at, ...}], total, limit,
        offset}.
        """
        items, total = self.mb.list_documents(
            bank_id, query=q, tags=tags or (), tags_match=tags_match, limit=limit, offset=offset
        )
        return {"items": [document_list_item(d) for d in items], "total": total, "limit": limit, "offset": offset}

    def get_document(self, document_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Read one retained document with its full text and how many memories it yielded.

        Returns {id, original_text, tags, memory_unit_count, nodes_by_fact_type, document_metadata, ...}.
        """
        return document_response(self.mb.get_document(bank_id, document_id))

    def delete_document(self, document_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Delete a document and every memory drawn from it (mental models citing them become stale).

        Returns {success, document_id, memory_units_deleted}.
        """
        removed = self.mb.delete_document(bank_id, document_id)
        return {"success": True, "document_id": document_id, "memory_units_deleted": removed}
