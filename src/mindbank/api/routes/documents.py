"""Documents: ``GET /documents`` (paging, tags, search, time window), ``GET/PATCH/DELETE /documents/{id}``,
``/documents/{id}/chunks``, ``/documents/{id}/history``, ``POST /documents/{id}/reprocess``, and
``GET /v1/default/chunks/{chunk_id}``. Shapes: the reference's ``ListDocumentsResponse``, ``DocumentResponse``,
``ListChunksResponse``, ``DocumentHistoryResponse``, ``DeleteDocumentResponse``, ``ReprocessDocumentResponse``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.api.schemas import RequestBody
from mindbank.domain.fields import Offset, QueryTime
from mindbank.domain.tags import TagsMatch
from mindbank.wire.resources import chunk_response, document_event, document_list_item, document_response

router = APIRouter(prefix="/v1/default", tags=["documents"])
DOCS = "/banks/{bank_id}/documents"


@router.get(DOCS)
def list_documents(
    bank_id: str,
    mb: Bank,
    q: str | None = None,
    tags: Annotated[list[str] | None, Query()] = None,
    tags_match: TagsMatch = "any_strict",
    time_field: Literal["created_at", "updated_at"] | None = None,
    start_date: QueryTime | None = None,
    end_date: QueryTime | None = None,
    limit: Annotated[int, Query(ge=0, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """A page of the bank's documents (no text), newest first; ``q`` matches the id or the text."""
    items, total = mb.list_documents(
        bank_id, query=q, tags=tags or (), tags_match=tags_match, time_field=time_field, start=start_date,
        end=end_date, limit=limit, offset=offset,
    )  # fmt: skip
    return {
        "items": [document_list_item(d) for d in items],
        "total": total,
        "limit": limit,
        "offset": offset,
        "total_is_estimate": False,
    }


@router.get(DOCS + "/{document_id}")
def get_document(bank_id: str, document_id: str, mb: Bank) -> dict[str, Any]:
    """One document with its text and its memory counts by fact type."""
    return document_response(mb.get_document(bank_id, document_id))


class UpdateDocumentRequest(RequestBody):
    """``PATCH /documents/{id}``: ``tags`` replaces the tags of the document and its memories."""

    tags: list[str] | None = None
    observation_scopes: Any = None


@router.patch(DOCS + "/{document_id}")
def update_document(bank_id: str, document_id: str, body: UpdateDocumentRequest, mb: Bank) -> dict[str, Any]:
    """Retag a document and every memory drawn from it (a memory write)."""
    mb.update_document(bank_id, document_id, tags=body.tags, observation_scopes=body.observation_scopes)
    return {"success": True}


@router.delete(DOCS + "/{document_id}")
def delete_document(bank_id: str, document_id: str, mb: Bank) -> dict[str, Any]:
    """Delete a document and the memories drawn from it (models citing them go stale)."""
    removed = mb.delete_document(bank_id, document_id)
    return {
        "success": True,
        "message": f"Document '{document_id}' and {removed} associated memory units deleted successfully",
        "document_id": document_id,
        "memory_units_deleted": removed,
    }


@router.get(DOCS + "/{document_id}/chunks")
def list_document_chunks(
    bank_id: str,
    document_id: str,
    mb: Bank,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """A page of the document's chunks, in document order."""
    items, total = mb.list_document_chunks(bank_id, document_id, limit=limit, offset=offset)
    return {"items": [chunk_response(c) for c in items], "total": total, "limit": limit, "offset": offset}


@router.get(DOCS + "/{document_id}/history")
def document_history(
    bank_id: str,
    document_id: str,
    mb: Bank,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """The document's changes, newest first."""
    items, total = mb.document_history(bank_id, document_id, limit=limit, offset=offset)
    return {
        "document_id": document_id,
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": [document_event(e) for e in items],
    }


@router.post(DOCS + "/{document_id}/reprocess")
def reprocess_document(bank_id: str, document_id: str, mb: Bank) -> dict[str, Any]:
    """Queue a re-extraction of the document's stored text with the current retain engine."""
    return {"success": True, "operation_id": mb.reprocess_document(bank_id, document_id), "items_count": 1}


@router.get("/chunks/{chunk_id}", responses=errors(404))
def get_chunk(chunk_id: str, mb: Bank) -> dict[str, Any]:
    """One chunk by id."""
    return chunk_response(mb.get_chunk(chunk_id))
