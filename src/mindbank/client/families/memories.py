"""Client methods over a bank's memories: ``retain``, ``recall``, ``reflect``, ``list_tags``, ``memory_cited_by``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from mindbank.client._wire import Budget, Request, bank_path, child_path, clean, endpoint, iso_time, listed
from mindbank.client.models import CitedBy, RecallResponse, ReflectResponse, RetainResponse, TagList


class MemoryMethods:
    """``retain``, ``recall``, ``reflect``, ``list_tags`` and ``memory_cited_by``."""

    @endpoint
    def retain(
        self,
        bank_id: str,
        content: str | None = None,
        *,
        items: Sequence[Mapping[str, Any]] | None = None,
        tags: Sequence[str] | None = None,
        context: str | None = None,
        timestamp: str | datetime | None = None,
        metadata: Mapping[str, str] | None = None,
        document_id: str | None = None,
        async_: bool = False,
        operation_id: str | None = None,
    ) -> Request[RetainResponse]:
        """Store ``content`` (or a batch of ``items``: dicts with the HTTP item fields). ``async_`` queues the work
        and returns its ``operation_id``; with ``async_``, a UUID of your own as ``operation_id`` makes a retry after
        a lost response return the original operation instead of queuing the work twice. Raises ``ValueError``
        unless exactly one of content/items is given."""
        if (content is None) == (items is None):
            raise ValueError("pass either content or items")
        if items is None:
            items = [
                clean(
                    {
                        "content": content,
                        "tags": listed(tags, keep_empty=True),
                        "context": context,
                        "timestamp": iso_time(timestamp),
                        "metadata": dict(metadata) if metadata is not None else None,
                        "document_id": document_id,
                    }
                )
            ]
        body: dict[str, Any] = {
            "items": [{k: iso_time(v) if k == "timestamp" else v for k, v in i.items()} for i in items],
            "async": async_,
        }
        if operation_id is not None:
            body["operation_id"] = operation_id
        return Request("POST", f"{bank_path(bank_id)}/memories", RetainResponse.model_validate, json=body)

    @endpoint
    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        max_tokens: int | None = None,
        budget: Budget | None = None,
        tag_groups: Sequence[Mapping[str, Any]] | None = None,
        min_scores: Mapping[str, float] | None = None,
        temporal_window: tuple[str | datetime, str | datetime] | None = None,
        prefer_observations: bool | None = None,
        include_chunks: bool = False,
        max_chunk_tokens: int | None = None,
        chunk_neighbours: bool = False,
    ) -> Request[RecallResponse]:
        """Search memories (semantic + keyword); ``results`` best first. ``min_scores``: floors on ``semantic``,
        ``keyword`` and ``final``; ``temporal_window``: ``(start, end)``, memories dated inside rank higher.

        ``include_chunks``: the response's ``chunks`` maps chunk id to the chunk each result came from, within
        ``max_chunk_tokens`` (server default 8192); ``chunk_neighbours`` (implies ``include_chunks``) adds the chunks
        said just before and after each, marked ``neighbour_of`` / ``side``, within the same budget."""
        window = None
        if temporal_window is not None:
            window = {"start": iso_time(temporal_window[0]), "end": iso_time(temporal_window[1])}
        body = clean(
            {
                "query": query,
                "types": listed(types),
                "tags": listed(tags),
                "tags_match": tags_match,
                "max_tokens": max_tokens,
                "budget": budget,
                "tag_groups": None if tag_groups is None else [dict(g) for g in tag_groups],
                "min_scores": None if min_scores is None else dict(min_scores),
                "temporal_window": window,
                "prefer_observations": prefer_observations,
                "include": _recall_include(include_chunks or chunk_neighbours, max_chunk_tokens, chunk_neighbours),
            }
        )
        return Request("POST", f"{bank_path(bank_id)}/memories/recall", RecallResponse.model_validate, json=body)

    @endpoint
    def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Budget | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        tags_match: str | None = None,
        include_facts: bool = False,
        response_schema: Mapping[str, Any] | None = None,
        fact_types: Sequence[str] | None = None,
        exclude_mental_models: bool | None = None,
    ) -> Request[ReflectResponse]:
        """Answer ``query`` from the bank (``POST /reflect``); ``include_facts`` adds ``based_on``."""
        body = clean(
            {
                "query": query,
                "budget": budget,
                "max_tokens": max_tokens,
                "tags": listed(tags),
                "tags_match": tags_match,
                "include": {"facts": {}} if include_facts else None,
                "response_schema": dict(response_schema) if response_schema is not None else None,
                "fact_types": listed(fact_types),
                "exclude_mental_models": exclude_mental_models,
            }
        )
        return Request("POST", f"{bank_path(bank_id)}/reflect", ReflectResponse.model_validate, json=body)

    @endpoint
    def list_tags(
        self,
        bank_id: str,
        *,
        q: str | None = None,
        source: Literal["memories", "mental_models"] = "memories",
        limit: int = 100,
        offset: int = 0,
    ) -> Request[TagList]:
        """Tags in use with counts, most used first; ``q`` filters with ``*`` wildcards."""
        params = clean({"q": q, "source": source, "limit": limit, "offset": offset})
        return Request("GET", f"{bank_path(bank_id)}/tags", TagList.model_validate, params=params)

    @endpoint
    def memory_cited_by(self, bank_id: str, memory_id: str) -> Request[CitedBy]:
        """The mental models (knowledge pages among them) whose current document cites ``memory_id`` — those that
        deleting or retagging it makes stale (``GET /memories/{id}/cited-by``)."""
        return Request("GET", f"{child_path(bank_id, 'memories', memory_id)}/cited-by", CitedBy.model_validate)


def _recall_include(chunks: bool, max_tokens: int | None, neighbours: bool) -> dict[str, Any] | None:
    """The recall request's ``include`` for chunks, or None (the server's defaults: entities on, chunks off)."""
    if not chunks:
        return None
    options: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
    if neighbours:
        options["neighbours"] = True
    return {"chunks": options}
