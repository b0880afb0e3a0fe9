"""Memories: retain (sync and queued), recall, list/get/edit/delete, tags, and queuing consolidation."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from mindbank.domain.document import count_tokens
from mindbank.domain.limits import (
    check_metadata,
    check_offset,
    check_retain_items,
    check_tags,
    check_text,
    check_token_budget,
)
from mindbank.domain.records import FactType, MemoryUnit, Operation, RetainItem, ScoredMemory
from mindbank.domain.repeats import content_hash, restate_eligible
from mindbank.domain.scope import MemoryFilter, admits_tags
from mindbank.domain.tags import TagsMatch, freeze_groups, normalize_tags, validate_tag_groups
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.engine.chunk_context import result_chunks
from mindbank.engine.consolidate.plan import ObservationScopes
from mindbank.engine.recall import RecallRequest, Retriever, recall
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.engine.retain.parts import RetainCursor, retain_parts
from mindbank.errors import (
    ConflictError,
    EmbeddingModelMismatchError,
    InvalidInputError,
    PayloadTooLargeError,
)
from mindbank.service.core import ServiceCore, changed_in_bank
from mindbank.service.events import emit_retain
from mindbank.service.tracing import current_operation_id
from mindbank.store.base import DocumentChanged
from mindbank.store.fence import current_fence
from mindbank.worker.runner import Requeue

RETAIN_SLICE_SECONDS = 5.0  # a queued retain steps aside after this long when it has parts left (fair scheduling)
RESTATE_ATTEMPTS = 3  # reads of unchanged documents before a queued retain writes the rest without restatements


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


# recall's ``budget``: the share of MINDBANK_RECALL_CANDIDATES each retriever contributes
BUDGET_CANDIDATES: dict[str, float] = {"low": 0.5, "mid": 1.0, "high": 2.0}


def _recall_filter(
    types: Sequence[FactType] | None,
    tags: Sequence[str],
    tags_match: TagsMatch,
    tag_groups: list[dict[str, Any]] | None,
) -> MemoryFilter:
    """A recall request's scope as a :class:`MemoryFilter`; raises :class:`InvalidInputError` for a bad tag group."""
    try:
        groups = None if not tag_groups else freeze_groups(validate_tag_groups(tag_groups))
    except ValueError as exc:
        raise InvalidInputError("tag_groups", str(exc)) from exc
    return MemoryFilter(
        fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match, tag_groups=groups
    )


SCORE_FLOORS = {"semantic": "min_semantic", "keyword": "min_keyword", "final": "min_final"}


def _score_floors(min_scores: Mapping[str, float | None] | None) -> dict[str, float]:
    """The engine's floors from a ``min_scores`` mapping. Raises :class:`InvalidInputError` naming a floor on a
    score mindbank does not compute (``reranker``: it has no cross-encoder) or an unknown one."""
    floors: dict[str, float] = {}
    for name, value in (min_scores or {}).items():
        if value is None:
            continue
        if name == "reranker":
            raise InvalidInputError(
                "min_scores.reranker", "mindbank computes no reranker score (no cross-encoder); use final"
            )
        if name not in SCORE_FLOORS:
            raise InvalidInputError(f"min_scores.{name}", f"unknown score; one of {', '.join(SCORE_FLOORS)}")
        floors[SCORE_FLOORS[name]] = float(value)
    return floors


class MemoriesService(ServiceCore):
    """Memory methods of the service."""

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
        self._check_bank_id(bank_id)
        check_retain_items(items, self.limits)
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
        # the bank's model (its earlier one while a re-embedding runs), checked again under the write's lock
        embedder = self.bank_embedder(bank_id)
        model = self.model_of(embedder)
        try:
            restate = self._restatable(bank_id, items)
            documents = prepare_documents(items, embedder, now=utcnow(), extract=self._extract_facts,
                                          restate=restate)  # fmt: skip
            ids = self.store.write_documents(bank_id, documents, model=model)
        except DocumentChanged:  # another retain rewrote a document this one found unchanged: prepare it in full
            documents = prepare_documents(items, embedder, now=utcnow(), extract=self._extract_facts)
            ids = self.store.write_documents(bank_id, documents, model=model)
        # only new facts need consolidating: a re-retained, unchanged (or re-tagged) document queues nothing
        if self.settings.enable_auto_consolidation and any(not d.restate for d in documents):
            self.consolidate(bank_id)
        doc_ids = self._stored_documents(bank_id, [d.document_id for d in documents])
        memory_ids = list(dict.fromkeys(i for doc in ids for i in doc))
        emit_retain(self.events, bank_id, doc_ids, len(memory_ids), current_operation_id(), items_count=len(items))
        return RetainResult(bank_id, len(items), None, memory_ids)

    def _stored_documents(self, bank_id: str, document_ids: Sequence[str]) -> list[str]:
        """``document_ids`` (order kept, once each) less those a retain did not write: an item without a
        ``document_id`` whose facts all repeated stored ones leaves no document."""
        unique = list(dict.fromkeys(document_ids))
        stored = self.store.document_hashes(bank_id, unique)
        return [d for d in unique if d in stored]

    def _restatable(self, bank_id: str, items: Sequence[RetainItem], first: int = 0) -> set[int]:
        """Indexes (from ``first`` on) of the items that re-retain a stored document with the same content: they
        are not prepared again, and their write changes nothing or updates fields in place
        (:mod:`mindbank.domain.repeats`). One read of the documents' hashes."""
        eligible = [i for i in restate_eligible(items) if i >= first]
        if not eligible:
            return set()
        hashes = self.store.document_hashes(bank_id, [items[i].document_id or "" for i in eligible])
        return {i for i in eligible if hashes.get(items[i].document_id or "") == content_hash(items[i].content)}

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
            self.wake()
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
        written: list[str] = []  # the documents this run wrote (a resumed run starts after the checkpoint)
        fresh = False  # whether this run wrote new facts (not only unchanged or re-tagged documents)
        embedder = self.bank_embedder(op.bank_id)
        for attempt in range(RESTATE_ATTEMPTS + 1):
            # restatements are read afresh from the cursor on (never the item a resumed cursor is inside)
            first = cursor.item + (1 if cursor.started else 0)
            restate = self._restatable(op.bank_id, items, first) if attempt < RESTATE_ATTEMPTS else set()
            parts = retain_parts(
                items, embedder, operation_id=op.id, cursor=cursor, now=op.created_at,
                extract=self._extract_facts, restate=restate,
            )  # fmt: skip
            try:
                for part in parts:
                    if fence is not None:
                        fence.check()
                        fence.stage(part.after.to_json())
                    try:
                        self.store.write_documents(op.bank_id, part.documents, model=self.model_of(embedder))
                    except EmbeddingModelMismatchError:  # a re-embedding committed: go on with the bank's new model
                        raise Requeue("the bank's embedding model changed: the next run embeds with it") from None
                    written += [d.document_id for d in part.documents if d.document_id not in written]
                    fresh = fresh or any(not d.restate for d in part.documents)
                    cursor = part.after
                    if cursor.item < len(items) and time.monotonic() - began > RETAIN_SLICE_SECONDS and fence:
                        raise Requeue(f"retain at item {cursor.item} of {len(items)}: stepping aside for waiting work")
                break
            except DocumentChanged:  # another retain rewrote a document read as unchanged: on from the cursor
                continue
        # a resumed run may have written its new facts before the crash: consolidating then costs one idle round
        if self.settings.enable_auto_consolidation and (fresh or cursor.memories):
            # its facts were asked for when the retain was queued: a refresh asked for since waits for them
            self.consolidate(op.bank_id, queued_at=op.created_at)
        written = self._stored_documents(op.bank_id, written)
        emit_retain(self.events, op.bank_id, written, cursor.memories, op.id, items_count=len(items))
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
        tag_groups: list[dict[str, Any]] | None = None,
        budget: Literal["low", "mid", "high"] = "mid",
        min_scores: Mapping[str, float | None] | None = None,
        temporal_window: tuple[datetime, datetime] | None = None,
        prefer_observations: bool = False,
    ) -> list[ScoredMemory]:
        """Hybrid recall over the bank (``engine/recall.py``), best first.

        ``tag_groups``: the reference's boolean tag filter, AND-ed with ``tags``. ``budget``: how many candidates
        each retriever contributes (low: half of ``MINDBANK_RECALL_CANDIDATES``, mid: all, high: twice).
        ``min_scores``: floors on the scores mindbank computes, ``semantic`` (cosine), ``keyword`` (BM25) and
        ``final``. ``temporal_window``: ``(start, end)``, memories dated inside rank higher (not a filter).
        ``prefer_observations``: an observation replaces the raw facts it was built from.

        Raises :class:`NotFoundError` if the bank does not exist, :class:`InvalidInputError` for a query, tags or
        budget past the limits, a bad tag group, a floor on a score mindbank does not compute (``reranker``) or
        a window that ends before it starts.
        """
        self._require_bank(bank_id)
        check_text(query, "query", self.limits.max_query_chars, blank_ok=False)
        check_tags(tags, self.limits)
        check_token_budget(max_tokens, "max_tokens", self.limits)
        floors = _score_floors(min_scores)
        if temporal_window is not None and temporal_window[0] > temporal_window[1]:
            raise InvalidInputError("temporal_window", "start must not be after end")
        flt = _recall_filter(types, tags, tags_match, tag_groups)
        request = RecallRequest(
            query=query, filter=flt, max_tokens=max_tokens, limit=limit, retriever=retriever,
            min_semantic=floors.get("min_semantic"), min_keyword=floors.get("min_keyword"),
            min_final=floors.get("min_final"), window=temporal_window, prefer_observations=prefer_observations,
        )  # fmt: skip
        embedder = self.bank_embedder(bank_id)  # the bank's model, its earlier one while a re-embedding runs
        candidates = max(1, round(self.settings.recall_candidates * BUDGET_CANDIDATES[budget]))
        return recall(self.store, embedder, bank_id, request, candidates=candidates)

    def recall_sources(
        self,
        bank_id: str,
        hits: Sequence[ScoredMemory],
        *,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        tag_groups: list[dict[str, Any]] | None = None,
        chunks_max_tokens: int | None = None,
        chunk_neighbours: bool = False,
        source_facts_max_tokens: int | None = None,
        source_facts_per_observation: int = -1,
    ) -> tuple[dict[str, dict[str, Any]] | None, dict[str, MemoryUnit] | None, bool]:
        """What recall's ``include`` asks beside the results: ``(chunks, source facts, truncated)``.

        ``chunks`` (with ``chunks_max_tokens``): the chunk each result was extracted from, keyed by chunk id, in
        result order, ``{id, text, chunk_index, truncated}``, texts cut to the budget. With ``chunk_neighbours``,
        once every result's own chunk is in, the chunks just before and after each one follow in result order
        (:func:`mindbank.engine.chunk_context.neighbour_chunks`: the document's adjacent chunks, else the turns said
        just before and after in the same context that pass the tag filter), each with ``neighbour_of`` (the
        result chunk it sits beside) and ``side`` (``"before"`` / ``"after"``), within the same budget: a
        neighbour is context, never a result. ``source facts`` (with
        ``source_facts_max_tokens``, -1 unlimited): the facts each observation result was built from, keyed by id,
        at most ``source_facts_per_observation`` tokens per observation (-1 unlimited); ``truncated`` says the
        budget cut the map short. Both None when not asked.

        ``tags`` / ``tags_match`` / ``tag_groups`` are the recall request's tag filter: a source fact is read by
        id, so it is returned only when its own tags pass that filter (an observation in scope may cite a fact
        the request may not see). Its fact type is not filtered: ``types`` picks the results, and a source fact
        is by definition of another type than the observation citing it. Raises :class:`InvalidInputError` for
        a bad tag group."""
        flt = _recall_filter(None, tags, tags_match, tag_groups)
        chunks = None
        if chunks_max_tokens is not None:
            chunks = result_chunks(
                self.store, bank_id, hits, flt, max_tokens=chunks_max_tokens, neighbours=chunk_neighbours
            )
        if source_facts_max_tokens is None:
            return chunks, None, False
        facts, truncated = self._source_facts(bank_id, hits, flt, source_facts_max_tokens, source_facts_per_observation)
        return chunks, facts, truncated

    def _source_facts(
        self, bank_id: str, hits: Sequence[ScoredMemory], flt: MemoryFilter, budget: int, per_observation: int
    ) -> tuple[dict[str, MemoryUnit], bool]:
        wanted = [i for h in hits if h.memory.fact_type == "observation" for i in h.memory.source_memory_ids or ()]
        read = self.store.get_memories(bank_id, list(dict.fromkeys(wanted)))
        found = {m.id: m for m in read if admits_tags(flt, m.tags)}
        out: dict[str, MemoryUnit] = {}
        used, truncated = 0, False
        for hit in hits:
            spent = 0
            for fact_id in hit.memory.source_memory_ids or () if hit.memory.fact_type == "observation" else ():
                fact = found.get(fact_id)
                if fact is None or fact_id in out:
                    continue
                cost = count_tokens(fact.text)
                if (budget >= 0 and used + cost > budget) or (per_observation >= 0 and spent + cost > per_observation):
                    truncated = truncated or (budget >= 0 and used + cost > budget)
                    continue
                out[fact_id] = fact
                used += cost
                spent += cost
        return out, truncated

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
        written_after: datetime | None = None,
        written_before: datetime | None = None,
    ) -> tuple[list[MemoryUnit], int]:
        """A page of memories (newest write first; drawn from ``document_id`` when given; last written after
        ``written_after``, exclusive, and up to ``written_before``, inclusive, when given) and the total. Raises
        :class:`NotFoundError` for a bank, :class:`InvalidInputError` for tags, a query or an offset past the
        limits."""
        self._require_bank(bank_id)
        check_tags(tags, self.limits)
        check_offset(offset, limits=self.limits)
        if query is not None:
            check_text(query, "q", self.limits.max_query_chars)
        flt = MemoryFilter(
            fact_types=tuple(types) if types else None, tags=normalize_tags(tags), tags_match=tags_match,
            updated_after=written_after, updated_before=written_before,
        )  # fmt: skip
        return self.store.list_memories(bank_id, flt, query=query, limit=limit, offset=offset, document_id=document_id)

    def get_memory(self, bank_id: str, memory_id: str) -> MemoryUnit:
        """One memory. Raises :class:`NotFoundError`."""
        return self._one_memory(bank_id, memory_id)

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
        if text is not None:
            check_text(text, "text", self.limits.max_content_chars, blank_ok=False)
        if context is not None:
            check_text(context, "context", self.limits.max_text_chars)
        if tags is not None:
            check_tags(tags, self.limits)
        if metadata is not None:
            check_metadata(metadata, self.limits)
        embedding, model = None, None
        if text is not None:  # embedded with the bank's model, checked again under the write's lock
            embedder = self.bank_embedder(bank_id)
            embedding, model = embedder.embed([text.strip()])[0], self.model_of(embedder)
        self.store.update_memory(
            bank_id, memory_id, text=None if text is None else text.strip(), embedding=embedding, context=context,
            tags=None if tags is None else normalize_tags(tags), metadata=metadata, model=model,
        )  # fmt: skip
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)
        return self.get_memory(bank_id, memory_id)

    def delete_memory(self, bank_id: str, memory_id: str) -> None:
        """Delete one memory from every index. A deletion is a write: models citing it become stale, and (with
        auto-consolidation) a consolidation is queued, which detaches it from the observations it supported.
        Raises :class:`NotFoundError`."""
        changed_in_bank(self.store.delete_memory(bank_id, memory_id), "Memory", memory_id, bank_id)
        if self.settings.enable_auto_consolidation:
            self.consolidate(bank_id)

    def list_tags(
        self, bank_id: str, *, source: Literal["memories", "mental_models"] = "memories", pattern: str | None = None,
        limit: int = 100, offset: int = 0,
    ) -> tuple[list[tuple[str, int]], int]:  # fmt: skip
        """Tags in use with counts, most used first; ``pattern`` supports ``*`` wildcards."""
        self._check_bank_id(bank_id)
        check_offset(offset, limits=self.limits)
        if pattern is not None:
            check_text(pattern, "q", self.limits.max_text_chars)
        return self.store.list_tags(bank_id, source=source, pattern=pattern, limit=limit, offset=offset)

    def consolidate(
        self,
        bank_id: str,
        *,
        observation_scopes: ObservationScopes | None = None,
        queued_at: datetime | None = None,
    ) -> tuple[str, bool]:
        """Queue a consolidation of the bank's pending facts (at most one pending per bank: a second request
        returns the queued one); ``queued_at``: :meth:`ServiceCore.queue_consolidation`. Returns
        ``(operation_id, deduplicated)``."""
        return self.queue_consolidation(bank_id, observation_scopes, queued_at=queued_at)
