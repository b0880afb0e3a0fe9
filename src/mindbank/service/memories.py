"""Memories: retain (sync and queued), recall, list/get/edit/delete, tags, and queuing consolidation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mindbank.domain.records import FactType, MemoryUnit, RetainItem, ScoredMemory
from mindbank.domain.tags import TagsMatch, normalize_tags
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.engine.consolidate.plan import ObservationScopes
from mindbank.engine.recall import RecallRequest, Retriever, recall
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore
from mindbank.service.events import ServiceEvent
from mindbank.service.tracing import current_operation_id
from mindbank.store.base import MemoryFilter


@dataclass(frozen=True, slots=True)
class RetainResult:
    """Outcome of a retain: item count, and either the new memory ids (sync) or the queued operation id (async)."""

    bank_id: str
    items_count: int
    operation_id: str | None
    memory_ids: list[str]


def item_to_json(item: RetainItem) -> dict[str, Any]:
    return {
        "content": item.content,
        "timestamp": to_iso(item.timestamp),
        "context": item.context,
        "metadata": item.metadata,
        "document_id": item.document_id,
        "tags": list(item.tags),
        "update_mode": item.update_mode,
    }


def item_from_json(data: dict[str, Any]) -> RetainItem:
    return RetainItem(
        content=data["content"],
        timestamp=parse_timestamp(data.get("timestamp")),
        context=data.get("context"),
        metadata=data.get("metadata") or {},
        document_id=data.get("document_id"),
        tags=tuple(data.get("tags") or ()),
        update_mode=data.get("update_mode") or "replace",
    )


def retain_event(
    bank_id: str, document_ids: Sequence[str], memory_ids: Sequence[Sequence[str]], operation_id: str | None
) -> ServiceEvent:
    """``retain.completed`` for one retain: its documents and how many memories they yielded (``document_id``:
    the first document, as the reference's single-document retains carry it)."""
    return ServiceEvent(
        "retain.completed",
        bank_id,
        {
            "document_id": document_ids[0] if document_ids else None,
            "document_ids": list(document_ids),
            "items_count": len(document_ids),
            "memory_unit_count": sum(len(i) for i in memory_ids),
        },
        operation_id=operation_id,
    )


class MemoriesService(ServiceCore):
    """Memory methods of :class:`~mindbank.service.facade.MindBank`."""

    _extract_facts: Callable[..., Any] | None

    def retain(self, bank_id: str, items: Sequence[RetainItem], *, async_: bool = False) -> RetainResult:
        """Store ``items`` in the bank (created if missing).

        Synchronous retains extract, embed and commit all items in one transaction before returning; ``async_``
        queues a ``batch_retain`` operation and returns its id at once. Raises :class:`InvalidInputError` for an
        empty list or blank content (nothing is written).
        """
        if not items:
            raise InvalidInputError("items", "must not be empty")
        for i, item in enumerate(items):
            if not item.content.strip():
                raise InvalidInputError(f"items[{i}].content", "must not be blank")
        if async_:
            op_id = self._submit(bank_id, "batch_retain", {"items": [item_to_json(i) for i in items]})
            return RetainResult(bank_id, len(items), op_id, [])
        documents = prepare_documents(items, self.embedder, now=utcnow(), extract=self._extract_facts)
        ids = self.store.write_documents(bank_id, documents)
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        self.events.emit(retain_event(bank_id, [d.document_id for d in documents], ids, current_operation_id()))
        return RetainResult(bank_id, len(items), None, [i for doc in ids for i in doc])

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        types: Sequence[FactType] | None = None,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        max_tokens: int = 4096,
        limit: int | None = None,
        retriever: Retriever = "hybrid",
    ) -> list[ScoredMemory]:
        """Hybrid recall over the bank. Raises :class:`NotFoundError` if the bank does not exist."""
        self._require_bank(bank_id)
        flt = MemoryFilter(fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match)
        return recall(
            self.store,
            self.embedder,
            bank_id,
            RecallRequest(query=query, filter=flt, max_tokens=max_tokens, limit=limit, retriever=retriever),
            candidates=self.settings.recall_candidates,
        )

    def list_memories(
        self,
        bank_id: str,
        *,
        types: Sequence[FactType] | None = None,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        query: str | None = None,
        limit: int = 100,
        offset: int = 0,
        document_id: str | None = None,
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories (newest write first; drawn from ``document_id`` when given) and the total. Raises
        :class:`NotFoundError` for a bank."""
        self._require_bank(bank_id)
        flt = MemoryFilter(fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match)
        return self.store.list_memories(bank_id, flt, query=query, limit=limit, offset=offset, document_id=document_id)

    def get_memory(self, bank_id: str, memory_id: str) -> MemoryUnit:
        """One memory. Raises :class:`NotFoundError`."""
        found = self.store.get_memories(bank_id, [memory_id])
        if not found:
            raise NotFoundError(f"Memory '{memory_id}' not found in bank '{bank_id}'")
        return found[0]

    def update_memory(
        self,
        bank_id: str,
        memory_id: str,
        *,
        text: str | None = None,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> MemoryUnit:
        """Edit a fact's text (re-embedded), context, tags or metadata. An edit is a memory write: models whose scope
        the fact is in (before or after a tag change) go stale, and the fact is consolidated again. Observations are
        derived and cannot be edited. Raises :class:`NotFoundError`, :class:`InvalidInputError`."""
        memory = self.get_memory(bank_id, memory_id)
        if memory.fact_type == "observation":
            raise InvalidInputError("memory_id", "observations are derived from facts and cannot be edited")
        if text is not None and not text.strip():
            raise InvalidInputError("text", "must not be blank")
        embedding = None if text is None else self.embedder.embed([text.strip()])[0]
        self.store.update_memory(
            bank_id, memory_id, text=None if text is None else text.strip(), embedding=embedding, context=context,
            tags=None if tags is None else normalize_tags(tags), metadata=metadata,
        )  # fmt: skip
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        return self.get_memory(bank_id, memory_id)

    def delete_memory(self, bank_id: str, memory_id: str) -> None:
        """Delete one memory from every index. A deletion is a write: models citing it become stale, and (with
        auto-consolidation) a consolidation is queued, which detaches it from the observations it supported.
        Raises :class:`NotFoundError`."""
        if not self.store.delete_memory(bank_id, memory_id):
            raise NotFoundError(f"Memory '{memory_id}' not found in bank '{bank_id}'")
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)

    def list_tags(
        self, bank_id: str, *, source: Literal["memories", "mental_models"] = "memories", pattern: str | None = None,
        limit: int = 100, offset: int = 0,
    ) -> tuple[list[tuple[str, int]], int]:  # fmt: skip
        """Tags in use with counts, most used first; ``pattern`` supports ``*`` wildcards."""
        return self.store.list_tags(bank_id, source=source, pattern=pattern, limit=limit, offset=offset)

    def consolidate(self, bank_id: str, *, observation_scopes: ObservationScopes | None = None) -> tuple[str, bool]:
        """Queue a consolidation of the bank's pending facts (at most one pending per bank: a second request
        returns the queued one). Returns ``(operation_id, deduplicated)``."""
        payload: dict[str, Any] = {"observation_scopes": observation_scopes or self.settings.observation_scopes}
        op, deduplicated = self.store.submit_coalesced(self._new_operation(bank_id, "consolidation", payload))
        self.worker.wake()
        return op.id, deduplicated
