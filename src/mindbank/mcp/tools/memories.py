"""Memory tools: retain, recall, reflect, and the observation tools beside them (an observation's history, the
bank's observation scopes, clearing the observations of a memory, and the reference's ``clear_memories``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindbank.domain import fields
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.mcp.tools.common import BankId, Offset, TagList, ToolFamily, ToolInputError, jsonable
from mindbank.wire.items import retain_item
from mindbank.wire.shapes import recall_result


class MemoryTools(ToolFamily):
    """Memory tools: retain, recall, reflect, observation history and scopes, and the clears."""

    TOOLS = (
        "retain", "recall", "reflect", "get_observation_history", "list_observation_scopes",
        "clear_memory_observations", "clear_memories",
    )  # fmt: skip
    READS = frozenset({"recall", "reflect", "get_observation_history", "list_observation_scopes"})

    def retain(
        self,
        content: Annotated[fields.ContentText, Field(description="Text to remember (a message, a note, a document).")],
        context: Annotated[fields.Text | None, Field(description="Where the content comes from, e.g. 'chat'.")] = None,
        timestamp: Annotated[str | None, Field(description="When it was said, ISO-8601 (default: now).")] = None,
        tags: TagList = None,
        metadata: Annotated[fields.Metadata | None, Field(description="String key/value metadata.")] = None,
        document_id: Annotated[
            fields.DocumentId | None, Field(description="Re-using an id replaces that document.")
        ] = None,
        async_processing: Annotated[bool, Field(description="Queue the work and return an operation id.")] = False,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Store a memory in the bank (created if missing).

        Returns {success, status: "stored", bank_id, items_count, memory_ids} or, with async_processing,
        {success, status: "accepted", bank_id, items_count, operation_id}.
        """
        item = retain_item(
            content, timestamp=timestamp, context=context, metadata=metadata, document_id=document_id, tags=tags
        )
        result = self.mb.retain(bank_id, [item], async_=async_processing)
        base = {"success": True, "bank_id": bank_id, "items_count": result.items_count}
        if async_processing:
            return {**base, "status": "accepted", "operation_id": result.operation_id}
        return {**base, "status": "stored", "memory_ids": result.memory_ids}

    def recall(
        self,
        query: Annotated[fields.QueryText, Field(description="What to look for, in natural language.")],
        max_tokens: Annotated[fields.TokenBudget, Field(description="Budget of returned fact text in tokens.")] = 4096,
        types: Annotated[list[FactType] | None, Field(description="Fact types to search (default all).")] = None,
        tags: TagList = None,
        tags_match: Annotated[TagsMatch, Field(description="How tags filter memories.")] = "any",
        limit: Annotated[int | None, Field(ge=1, le=1000, description="At most this many results.")] = None,
        include_chunks: Annotated[
            bool, Field(description="Also return the source chunk (conversation turn or paragraph) of each result.")
        ] = False,
        chunk_neighbours: Annotated[
            bool, Field(description="Also return the chunks said just before and after each result's chunk.")
        ] = False,
        chunks_max_tokens: Annotated[fields.TokenBudget, Field(description="Budget of chunk text in tokens.")] = 8192,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Search the bank's memories (semantic + keyword), best first.

        Returns {results: [{id, text, type, entities, context, tags, occurred_start, mentioned_at, document_id, scores,
        ...}]}: entities are the names each text mentions. With include_chunks or chunk_neighbours also {chunks:
        {chunk_id: {id, text, chunk_index, truncated}}}, each result's chunk first, then (chunk_neighbours) the chunks
        around them with neighbour_of (the result chunk) and side ("before" / "after"); neighbours are context only.
        """
        if not query.strip():
            raise ToolInputError("query must not be blank")
        hits = self.mb.recall(
            bank_id, query, types=types, tags=tags or (), tags_match=tags_match, max_tokens=max_tokens, limit=limit
        )
        out: dict[str, Any] = {"results": [recall_result(h, entities=True) for h in hits]}
        if include_chunks or chunk_neighbours:
            out["chunks"], _, _ = self.mb.recall_sources(
                bank_id, hits, tags=tags or (), tags_match=tags_match, chunks_max_tokens=chunks_max_tokens,
                chunk_neighbours=chunk_neighbours,
            )  # fmt: skip
        return out

    def reflect(
        self,
        query: Annotated[fields.QueryText, Field(description="The question to answer from the bank's memory.")],
        budget: Annotated[Literal["low", "mid", "high"], Field(description="How hard to search.")] = "low",
        max_tokens: Annotated[fields.TokenBudget, Field(description="Target answer length in tokens.")] = 4096,
        tags: TagList = None,
        tags_match: Annotated[TagsMatch, Field(description="How tags filter memories.")] = "any",
        include_facts: Annotated[bool, Field(description="Also return the memories the answer rests on.")] = False,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Answer a question from the bank's mental models and memories (mental models first, then observations,
        then raw facts).

        Returns {text, based_on (with include_facts), structured_output, usage, ...} as the HTTP reflect endpoint does.
        """
        reflect = getattr(self.mb, "reflect", None)
        if reflect is None:  # registered only when the engine has reflect; kept defensive for direct callers
            raise ToolInputError("reflect is not available on this server")
        result = reflect(
            bank_id, query, budget=budget, max_tokens=max_tokens, tags=tags or (), tags_match=tags_match,
            include_facts=include_facts,
        )  # fmt: skip
        return jsonable(result)

    def get_observation_history(self, memory_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """The changes consolidation made to an observation, newest first (none for a fact).

        Returns {memory_id, items: [{changed_at, previous_text, text, previous_source_memory_ids, source_memory_ids,
        source_facts_added: [{id, text}], source_facts_removed: [{id, text}]}]}.
        """
        return {"memory_id": memory_id, "items": self.mb.get_observation_history(bank_id, memory_id)}

    def list_observation_scopes(
        self, limit: Annotated[int, Field(ge=0, le=1000)] = 100, offset: Offset = 0, *, bank_id: BankId
    ) -> dict[str, Any]:
        """The distinct tag sets the bank's observations live under, most populous first ([] is untagged).

        Returns {scopes: [{tags, count}], total, limit, offset}.
        """
        return self.mb.list_observation_scopes(bank_id, limit=limit, offset=offset)

    def clear_memory_observations(self, memory_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Delete the observations built from a memory and send it back to consolidation (the memory stays;
        mental models citing a deleted observation become stale).

        Returns {deleted_count}.
        """
        return {"deleted_count": self.mb.clear_memory_observations(bank_id, memory_id)}

    def clear_memories(
        self,
        type: Annotated[FactType | None, Field(description="Only this fact type (default: every memory).")] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Delete the bank's memories (of one fact type, or all of them with their documents); the bank, its
        configuration and its mental models stay, and models citing what went become stale.

        Returns {success, deleted_count}.
        """
        return {"success": True, "deleted_count": self.mb.clear_bank_memories(bank_id, type)}
