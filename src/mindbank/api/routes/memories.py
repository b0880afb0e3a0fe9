"""Retain and recall: ``POST /memories`` and ``POST /memories/recall``."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from mindbank.api.access import READ
from mindbank.api.deps import Bank, deleted_response, same_named
from mindbank.api.fast_json import FastJSONResponse
from mindbank.api.openapi import errors
from mindbank.api.schemas import RecallRequest, Refused, RequestBody, RetainRequest, RetainResponse
from mindbank.domain.fields import ContentText, FilterTag, Metadata, Offset, QueryParamText, TagList, Text
from mindbank.domain.records import FactType, MemoryUnit, ScoredMemory
from mindbank.domain.tags import TagsMatch
from mindbank.wire.items import retain_item
from mindbank.wire.shapes import memory_item, recall_entities, recall_result

TagQuery = Annotated[list[FilterTag] | None, Query(max_length=10)]

router = APIRouter(prefix="/v1/default/banks/{bank_id}", tags=["memories"])


@router.post("/memories", response_model=RetainResponse, response_model_by_alias=True, responses=errors(409))
def retain(bank_id: str, body: RetainRequest, mb: Bank) -> dict[str, Any]:
    """Retain items (bank auto-created). ``async: true`` queues the work and returns an operation id; with the
    client's ``operation_id`` (a UUID) a resubmission returns the original operation (409 if the id names a
    different one). A synchronous retain over ``MINDBANK_RETAIN_SYNC_MAX_CHARS`` characters gets 413."""
    items = [
        retain_item(
            i.content,
            extra_tags=body.document_tags,
            **same_named(i, "timestamp", "context", "metadata", "document_id", "tags", "update_mode"),
        )
        for i in body.items
    ]
    result = mb.retain(bank_id, items, async_=body.async_, operation_id=body.operation_id if body.async_ else None)
    return {
        "success": True,
        "bank_id": bank_id,
        "items_count": result.items_count,
        "async": body.async_,
        "operation_id": result.operation_id,
        "operation_ids": None,
        "usage": None if body.async_ else {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    }


@router.post("/memories/recall", openapi_extra=READ, responses=errors(404))
def recall(bank_id: str, body: RecallRequest, mb: Bank) -> FastJSONResponse:
    """Hybrid recall (dense + BM25, convex fusion) within ``max_tokens`` of fact text; every field of the
    reference's request (``min_scores`` on the semantic, keyword and final scores; ``temporal_window`` a boost).

    The body is already plain JSON values, so it is written directly (by orjson): FastAPI's generic encoder, walking
    a hundred results field by field, cost more than the ranking itself."""
    started = time.perf_counter()
    window = body.temporal_window
    hits = mb.recall(
        bank_id,
        body.query,
        types=body.types,
        tags=body.tags or (),
        tags_match=body.tags_match,
        max_tokens=body.max_tokens,
        tag_groups=body.tag_groups,
        budget=body.budget,
        min_scores=body.min_scores.model_dump() if body.min_scores else None,
        temporal_window=(window.start, window.end) if window else None,
        prefer_observations=bool(body.prefer_observations),
    )
    include = body.include
    facts_options = include.source_facts
    chunks, facts, truncated = mb.recall_sources(
        bank_id,
        hits,
        tags=body.tags or (),
        tags_match=body.tags_match,
        tag_groups=body.tag_groups,
        chunks_max_tokens=include.chunks.max_tokens if include.chunks else None,
        chunk_neighbours=bool(include.chunks and include.chunks.neighbours),
        source_facts_max_tokens=facts_options.max_tokens if facts_options else None,
        source_facts_per_observation=facts_options.max_tokens_per_observation if facts_options else -1,
    )
    trace = None
    if body.trace:
        trace = {"query": body.query, "num_results": len(hits), "time_seconds": time.perf_counter() - started}
    results = [recall_result(h, entities=include.entities is not None) for h in hits]
    return FastJSONResponse(
        {
            "results": results,
            "trace": trace,
            "entities": None if include.entities is None else recall_entities(bank_id, results),
            "chunks": chunks,
            "source_facts": None if facts is None else {i: _source_fact(m) for i, m in facts.items()},
            "source_facts_truncated": truncated if facts is not None else False,
        }
    )


def utc(at: datetime | None) -> datetime | None:
    """A query-string time in UTC (a naive one is read as UTC)."""
    if at is None or at.tzinfo is not None:
        return at
    return at.replace(tzinfo=UTC)


def _source_fact(memory: MemoryUnit) -> dict[str, Any]:
    """A source fact in the recall result shape; it was not ranked, so it has no scores."""
    return {**recall_result(ScoredMemory(memory, 0.0)), "scores": None}


@router.get("/memories/list", responses=errors(404))
def list_memories(
    bank_id: str,
    mb: Bank,
    type: FactType | None = None,
    q: QueryParamText | None = None,
    tags: TagQuery = None,
    tags_match: TagsMatch = "any",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
    document_id: str | None = None,
    written_after: datetime | None = None,
    written_before: datetime | None = None,
) -> dict[str, Any]:
    """A page of memories, newest write first; filters by fact type, tags, a text substring and document, and
    (beyond the reference) by when a memory was last written: after ``written_after`` (exclusive), up to
    ``written_before`` (inclusive); an ISO 8601 time without a zone is UTC."""
    items, total = mb.list_memories(
        bank_id, types=[type] if type else None, tags=tags or (), tags_match=tags_match, query=q, limit=limit,
        offset=offset, document_id=document_id, written_after=utc(written_after), written_before=utc(written_before),
    )  # fmt: skip
    return {"items": [memory_item(m) for m in items], "total": total, "limit": limit, "offset": offset}


@router.get("/memories/{memory_id}", responses=errors(404))
def get_memory(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """One memory."""
    return memory_item(mb.get_memory(bank_id, memory_id))


@router.get("/memories/{memory_id}/cited-by", openapi_extra=READ, responses=errors(404))
def memory_cited_by(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """Beyond the reference: the mental models (and knowledge pages) whose current document cites this memory,
    each ``{id, name, is_knowledge_page, is_stale, staleness_reason: {kind} | null}``; deleting or retagging the
    memory makes them stale. A deleted memory's citers still answer until they are refreshed."""
    return mb.memory_cited_by(bank_id, memory_id)


class UpdateMemoryRequest(RequestBody):
    """``PATCH /memories/{memory_id}``: the fields given change; the rest stay. ``tags`` and ``metadata`` are
    mindbank's; the reference's time, type, entity and curation fields are refused unless null."""

    text: ContentText | None = None
    context: Text | None = None
    tags: TagList | None = None
    metadata: Metadata | None = None
    occurred_start: Refused
    occurred_end: Refused
    mentioned_at: Refused
    fact_type: Refused
    entities: Refused
    resolve_entities: bool = True
    state: Refused
    reason: Refused


@router.patch("/memories/{memory_id}", responses=errors(404))
def update_memory(bank_id: str, memory_id: str, body: UpdateMemoryRequest, mb: Bank) -> dict[str, Any]:
    """Edit a fact (text re-embedded, tags, context, metadata): a memory write that can make models stale."""
    return memory_item(
        mb.update_memory(
            bank_id, memory_id, text=body.text, context=body.context, tags=body.tags, metadata=body.metadata
        )
    )


@router.delete("/memories/{memory_id}", responses=errors(404))
def delete_memory(bank_id: str, memory_id: str, mb: Bank) -> dict[str, Any]:
    """Delete one memory from every index (a write: models citing it become stale)."""
    mb.delete_memory(bank_id, memory_id)
    return deleted_response("Memory", memory_id)
