"""Memories: retain (sync and queued), recall, list/get/edit/delete, tags, and queuing consolidation."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from mindbank.domain.records import FactType, MemoryUnit, Operation, RetainItem, ScoredMemory
from mindbank.domain.tags import TagsMatch, normalize_tags
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.engine.consolidate.plan import ObservationScopes
from mindbank.engine.recall import RecallRequest, Retriever, recall
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.engine.retain.parts import RetainCursor, retain_parts
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError, PayloadTooLargeError
from mindbank.service.core import ServiceCore
from mindbank.store.base import MemoryFilter
from mindbank.store.fence import current_fence
from mindbank.worker.runner import Requeue

RETAIN_SLICE_SECONDS = 5.0  # a queued retain steps aside after this long when it has parts left (fair scheduling)


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


class MemoriesService(ServiceCore):
    """Memory methods of :class:`~mindbank.service.facade.MindBank`."""

    _extract_facts: Callable[..., Any] | None

    def retain(
        self,
        bank_id: str,
        items: Sequence[RetainItem],
        *,
        async_: bool = False,
        operation_id: str | None = None,
    ) -> RetainResult:
        """Store ``items`` in the bank (created if missing).

        Synchronous retains extract, embed and commit all items in one transaction before returning, up to
        ``retain_sync_max_chars`` characters of content. ``async_`` queues a ``batch_retain`` operation and returns
        its id at once; the worker writes it in bounded parts (:meth:`run_retain_operation`). ``operation_id``
        (async only, as in the reference: a client-chosen UUID) makes a resubmission return the original operation
        without queuing new work. Raises :class:`InvalidInputError` for an empty list, blank content or an
        ``operation_id`` that is not a UUID, :class:`PayloadTooLargeError` for a sync retain over the limit, and
        :class:`ConflictError` for an ``operation_id`` that names a different operation (nothing is written).
        """
        if not items:
            raise InvalidInputError("items", "must not be empty")
        for i, item in enumerate(items):
            if not item.content.strip():
                raise InvalidInputError(f"items[{i}].content", "must not be blank")
        if async_:
            payload = {"items": [item_to_json(i) for i in items]}
            if operation_id is None:
                return RetainResult(bank_id, len(items), self._submit(bank_id, "batch_retain", payload), [])
            return RetainResult(bank_id, len(items), self._submit_once(bank_id, operation_id, payload), [])
        size = sum(len(item.content) for item in items)
        if size > self.settings.retain_sync_max_chars:
            raise PayloadTooLargeError(
                "items",
                f"a synchronous retain takes at most {self.settings.retain_sync_max_chars} characters of content "
                f'(MINDBANK_RETAIN_SYNC_MAX_CHARS); this one has {size}. Send it with "async": true: it is queued, '
                "written in parts that survive a restart, and GET /operations/{operation_id} reports when it is done",
            )
        documents = prepare_documents(items, self.embedder, now=utcnow(), extract=self._extract_facts)
        ids = self.store.write_documents(bank_id, documents)
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        return RetainResult(bank_id, len(items), None, [i for doc in ids for i in doc])

    def _submit_once(self, bank_id: str, operation_id: str, payload: dict[str, Any]) -> str:
        """Queue a retain under the client's ``operation_id``, or return it when the same retain is queued already."""
        try:
            canonical = str(uuid.UUID(operation_id))
        except ValueError:
            raise InvalidInputError("operation_id", "must be a UUID") from None
        op = replace(self._new_operation(bank_id, "batch_retain", payload), id=canonical)
        try:
            stored, created = self.store.submit_operation_once(op)
        except KeyError:
            raise ConflictError(f"operation_id '{canonical}' belongs to another operation") from None
        if created:
            self.worker.wake()
        elif stored.operation_type != "batch_retain" or stored.payload != op.payload:
            raise ConflictError(f"operation_id '{canonical}' belongs to another operation")
        return stored.id

    def run_retain_operation(self, op: Operation) -> dict[str, Any]:
        """The ``batch_retain`` handler: write the operation's items in parts of bounded size, each in one
        transaction that also checkpoints the cursor after it (:mod:`mindbank.engine.retain.parts`), resuming at the
        stored cursor. Inside a worker's claim fence, a part commits only while the claim holds; after
        ``RETAIN_SLICE_SECONDS`` with parts still to write it raises ``Requeue`` so other work gets a turn. Returns
        ``{"items_count", "unit_ids_count"}``."""
        items = [item_from_json(d) for d in op.payload["items"]]
        fence = current_fence()
        cursor = RetainCursor.from_json(op.progress)
        began = time.monotonic()
        parts = retain_parts(
            items, self.embedder, operation_id=op.id, cursor=cursor, now=op.created_at, extract=self._extract_facts
        )
        for part in parts:
            if fence is not None:
                fence.check()
                fence.stage(part.after.to_json())
            self.store.write_documents(op.bank_id, part.documents)
            cursor = part.after
            if cursor.item < len(items) and time.monotonic() - began > RETAIN_SLICE_SECONDS and fence is not None:
                raise Requeue(f"retain at item {cursor.item} of {len(items)}: stepping aside for waiting work")
        if self.settings.enable_auto_consolidation:
            self.consolidate(op.bank_id)
        return {"items_count": len(items), "unit_ids_count": cursor.memories}

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
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories (newest write first) and the total. Raises :class:`NotFoundError` for a bank."""
        self._require_bank(bank_id)
        flt = MemoryFilter(fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match)
        return self.store.list_memories(bank_id, flt, query=query, limit=limit, offset=offset)

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
