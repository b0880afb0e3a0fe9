"""Retain and recall: ``POST /memories`` and ``POST /memories/recall``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from mindbank.api.deps import Bank
from mindbank.api.schemas import RecallRequest, RequestBody, RetainRequest, RetainResponse
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.wire.items import retain_item
from mindbank.wire.shapes import memory_item, recall_result

router = APIRouter(prefix="/v1/default/banks/{bank_id}", tags=["memories"])


@router.post("/memories", response_model=RetainResponse, response_model_by_alias=True)
def retain(bank_id: str, body: RetainRequest, mb: Bank) -> dict[str, Any]:
    """Retain items (bank auto-created). ``async: true`` queues the work and returns an operation id."""
    items = [
        retain_item(
            i.content,
            timestamp=i.timestamp,
            context=i.context,
            metadata=i.metadata,
            document_id=i.document_id,
            tags=i.tags,
            extra_tags=body.document_tags,
            update_mode=i.update_mode,
        )
        for i in body.items
    ]
    result = mb.retain(bank_id, items, async_=body.async_)
    return {
        "success": True,
        "bank_id": bank_id,
        "items_count": result.items_count,
        "async": body.async_,
        "operation_id": result.operation_id,
        "operation_ids": None,
        "usage": None if body.async_ else {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    }


@router.post("/memories/recall")
def recall(bank_id: str, body: RecallRequest, mb: Bank) -> dict[str, Any]:
    """Hybrid recall (dense + BM25, reciprocal-rank fusion) within ``max_tokens`` of fact text."""
    hits = mb.recall(
        bank_id,
        body.query,
        types=body.types,
        tags=body.tags or (),
        tags_match=body.tags_match,
        max_tokens=body.max_tokens,
    )
    return {
        "results": [recall_result(h) for h in hits],
        "trace": None,
        "entities": None,
        "chunks": None,
        "source_facts": None,
        "source_facts_truncated": False,
    }


@router.get("/memories/list")
def list_memories(
    bank_id: str,
    mb: Bank,
    type: FactType | None = None,
    q: str | None = None,
    tags: Annotated[list[str] | None, Query()] = None,
    tags_match: TagsMatch = "any",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
    document_id: str | None = None,
) -> dict[str, Any]:
    """A page of memories, newest write first; filters by fact type, tags, a text substring and document."""
    items, total = mb.list_memories(
        bank_id, types=[type] if type else None, tags=tags or (), tags_match=tags_match, query=q, limit=limit,
        offset=offset, document_id=document_id,
    )  # fmt: skip
    return {"items": [memory_item(m) for m in items], "total": total, "limit": limit, "offset": offset}


@router.get("/memories/{memory_id}")
def get_memory(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """One memory."""
    return memory_item(mb.get_memory(bank_id, memory_id))


class UpdateMemoryRequest(RequestBody):
    """``PATCH /memories/{memory_id}``: the fields given change; the rest stay."""

    text: str | None = None
    context: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, str] | None = None


@router.patch("/memories/{memory_id}")
def update_memory(bank_id: str, memory_id: str, body: UpdateMemoryRequest, mb: Bank) -> dict[str, Any]:
    """Edit a fact (text re-embedded, tags, context, metadata): a memory write that can make models stale."""
    return memory_item(
        mb.update_memory(
            bank_id, memory_id, text=body.text, context=body.context, tags=body.tags, metadata=body.metadata
        )
    )


@router.delete("/memories/{memory_id}")
def delete_memory(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """Delete one memory from every index (a write: models citing it become stale)."""
    mb.delete_memory(bank_id, memory_id)
    return {"success": True, "message": f"Memory '{memory_id}' deleted", "deleted_count": 1}
