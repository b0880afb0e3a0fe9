"""What a refresh reads of its bank: the snapshot window, the facts (recall or the whole scope), their source
chunks, the facts carried over from an earlier delta, and the vectors a whole-scope synthesizer compares.

Spec "What a Refresh Reads" (the snapshot cutoff, the delta window since the watermark, ``include_chunks``);
reference facts §4.3 (the watermark read), §4.11 (the recall tool call recorded in the trace). Every read is bounded
by the refresh's cutoff: a memory stamped after the refresh started is never read by it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from mindbank.domain.document import DocumentError, StructuredDocument
from mindbank.domain.records import MemoryUnit, MentalModel, ScoredMemory
from mindbank.domain.scope import MemoryFilter, admits
from mindbank.domain.text import speaker_prefix
from mindbank.domain.timeutil import to_iso
from mindbank.engine.recall import RecallRequest, recall
from mindbank.engine.refresh.plan import TRANSIENT, RefreshPlan, RefreshSettings, fact_entry, load_document, newer
from mindbank.engine.refresh.source_chunks import select_chunks
from mindbank.engine.synthesis.attribution import without_speakers
from mindbank.engine.synthesis.exchange import TURN_WINDOW_S, previous_turns
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import Store

# A synthesizer that reads its whole scope (``Capabilities.reads_scope``: the extractive briefing) gets every
# in-scope memory of the window, best match first, up to this many facts and tokens: a bank's whole history for one
# subject stays readable on the embedded default (conv-43's 680 turns: about 17k tokens, docs/benchmarks.md
# "Mental-model quality"), and a scope beyond it is read by relevance to the source query.
SCOPE_MAX_FACTS = 3000
SCOPE_MAX_TOKENS = 120_000


@dataclass(slots=True)
class Snapshot:
    """What one refresh found in its scope at its cutoff, before any synthesis.

    ``scope``: the model's scope; ``cutoff``: the bank's newest write stamp when the refresh started (None: an
    empty bank). ``baseline``: the document a delta edits (None in full mode). ``current``: the stored document
    with its fixed content prepared (None when the model has none or it is unreadable). ``present``: the memories
    the current document cites that still exist; ``missing``: ids it cites that are gone or left the scope.
    ``edited``: cited memories edited since the model last looked, and facts an earlier delta could not place —
    never gated as irrelevant, and a delta's editor sees them whatever recall ranks first. ``window``: the filter
    this refresh reads (delta: since the watermark); ``newest``: its newest memory (None: nothing new)."""

    scope: MemoryFilter
    cutoff: datetime | None
    baseline: StructuredDocument | None
    current: StructuredDocument | None
    present: list[MemoryUnit]
    missing: set[str]
    edited: list[ScoredMemory]
    window: MemoryFilter
    newest: datetime | None


def current_document(model: MentalModel) -> StructuredDocument | None:
    """The model's stored document, or None when it has no content or the document cannot be read."""
    try:
        return load_document(model) if model.content.strip() else None
    except DocumentError:
        return None


class ScopeReader:
    """The store and embedder reads of a refresh (one per :class:`~mindbank.engine.refresh.runner.RefreshRunner`).
    Methods record what they read on the plan (the window, the recall tool call, the chunks) where the trace and
    the dry run show it."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    def window(
        self, plan: RefreshPlan, scope: MemoryFilter, cutoff: datetime | None
    ) -> tuple[MemoryFilter, datetime | None]:
        """The snapshot window this refresh reads (delta: since the watermark) and its newest memory; records both
        on the plan (``window``, ``watermark``: never behind the model's last one)."""
        model = plan.model
        since = (model.last_memory_seen_at or model.last_refreshed_at) if plan.effective_mode == "delta" else None
        window = replace(scope, updated_before=cutoff, updated_after=since)
        newest = None if cutoff is None else self.store.scope_watermark(model.bank_id, window)
        plan.window = {
            "created_after": since,
            "created_before": cutoff,
            "watermark": newer(newest, model.last_memory_seen_at),
        }
        plan.watermark = plan.window["watermark"]
        return window, newest

    def reads_anything(self, bank_id: str, scope: MemoryFilter, cutoff: datetime | None) -> bool:
        """Whether the scope holds any memory at all in this snapshot (not only since the watermark)."""
        whole = replace(scope, updated_before=cutoff, updated_after=None)
        return cutoff is not None and self.store.scope_watermark(bank_id, whole) is not None

    def carried_over(
        self, model: MentalModel, scope: MemoryFilter, cutoff: datetime | None, known: set[str]
    ) -> list[ScoredMemory]:
        """The facts an earlier delta could not place that are still in scope and not in ``known``: a fact the
        model was given is read again until it is placed, never silently dropped (score 0: unranked)."""
        ids = [i for i in model.refresh_state.carried_over if i not in known]
        if not ids:
            return []
        return [
            ScoredMemory(m, 0.0)
            for m in self.store.get_memories(model.bank_id, ids)
            if admits(scope, m.tags, m.fact_type) and (cutoff is None or m.updated_at <= cutoff)
        ]

    def recall(
        self,
        plan: RefreshPlan,
        window: MemoryFilter,
        budget: int,
        settings: RefreshSettings,
        *,
        whole: bool = False,
    ) -> list[ScoredMemory]:
        """The facts the synthesizer reads: the top recall hits within ``budget`` tokens, or (``whole``) every
        in-scope memory of the window, best match first, bounded by ``SCOPE_MAX_FACTS`` / ``SCOPE_MAX_TOKENS``
        (one ranking with pools that large, so nothing is widened and re-ranked). A failed recall fails the plan
        (``retrieval_failed``) and returns no facts; transient errors propagate (the worker retries)."""
        model = plan.model
        started = time.perf_counter()
        if whole:
            budget = SCOPE_MAX_TOKENS
            request = RecallRequest(query=model.source_query, filter=window, max_tokens=budget, limit=SCOPE_MAX_FACTS)
            pool = SCOPE_MAX_FACTS
        else:
            request = RecallRequest(query=model.source_query, filter=window, max_tokens=budget, fill=True)
            pool = settings.recall_candidates
        try:
            hits = recall(self.store, self.embedder, model.bank_id, request, candidates=pool)
            if whole:
                hits, request = self._ranked_without_speakers(model, request, hits, pool)
        except TRANSIENT:
            raise
        except Exception as exc:
            plan.fail("refresh_failed_error", "retrieval_failed", f"{type(exc).__name__}: {exc}")
            return []
        plan.tool_calls.append(
            {
                "tool": "recall",
                "reason": ("every fact in the model's scope" if whole else "facts in the model's scope")
                + (" written since the watermark" if window.updated_after else ""),
                "input": {"query": request.query, "max_tokens": budget},
                "updated_at": to_iso(window.updated_after),  # the delta window's lower bound (reference shape)
                "result_count": len(hits),
                "duration_ms": int((time.perf_counter() - started) * 1000),
                "iteration": 1,
                "output": {"memories": [fact_entry(h) for h in hits]},  # shown by the dry run only
            }
        )
        if not hits:
            plan.warnings.append("Retrieval returned no facts at all.")
        return hits

    def read_chunks(self, plan: RefreshPlan, hits: list[ScoredMemory], settings: RefreshSettings) -> None:
        """The source chunks of the retrieved facts into ``plan.chunks``, when ``include_chunks`` (trigger > bank >
        environment), within ``recall_chunks_max_tokens``; the recall tool call records them."""
        trigger = plan.model.trigger
        include = trigger.get("include_chunks")
        if not (settings.include_chunks if include is None else include):
            return
        budget = settings.capped(
            int(trigger.get("recall_chunks_max_tokens") or settings.recall_chunks_max_tokens), settings.chunks_cap
        )
        plan.chunks = select_chunks(self.store, plan.model.bank_id, hits, budget)
        if not plan.tool_calls:  # only carried-over facts, no recall ran: nothing to annotate
            return
        recall_call = plan.tool_calls[-1]  # the recall that returned these facts returns their chunks too
        recall_call["input"]["max_chunk_tokens"] = budget
        recall_call["chunk_count"] = len(plan.chunks)
        recall_call["output"]["chunks"] = [{"memory_ids": list(c.memory_ids), "text": c.text} for c in plan.chunks]

    def scope_scores(self, model: MentalModel, window: MemoryFilter) -> list[ScoredMemory]:
        """Every in-scope fact of ``window`` with its hybrid recall score for the source query (the ranking a full
        refresh reads), bounded like the full refresh's read."""
        request = RecallRequest(
            query=model.source_query, filter=window, max_tokens=SCOPE_MAX_TOKENS, limit=SCOPE_MAX_FACTS
        )
        hits = recall(self.store, self.embedder, model.bank_id, request, candidates=SCOPE_MAX_FACTS)
        return self._ranked_without_speakers(model, request, hits, SCOPE_MAX_FACTS)[0]

    def _ranked_without_speakers(
        self, model: MentalModel, request: RecallRequest, hits: list[ScoredMemory], pool: int
    ) -> tuple[list[ScoredMemory], RecallRequest]:
        """The whole scope ranked for the source query without the names of the scope's speakers
        (``attribution.without_speakers``: a speaker's name is on every turn of theirs, so it would lift the whole
        conversation and let a narrow question's relevance floor pass most of it), with the request that ranked
        it; ``(hits, request)`` unchanged when the question names no speaker of ``hits``. Who the question asks
        about is decided by the attribution rule, not by this ranking."""
        speakers = sorted({name for h in hits if (name := speaker_prefix(h.memory.text))})
        query = without_speakers(model.source_query, speakers)
        if query == model.source_query:
            return hits, request
        request = replace(request, query=query)
        return recall(self.store, self.embedder, model.bank_id, request, candidates=pool), request

    def scope_read(
        self,
        model: MentalModel,
        hits: list[ScoredMemory],
        cited: list[MemoryUnit],
        scores: list[ScoredMemory],
        current: StructuredDocument | None = None,
    ) -> ScopeRead:
        """What a whole-scope synthesizer gets beside the facts: stored vectors (facts and cited memories, one
        read), the source query's vector, the embedder, (delta) the cited memories still in scope, each fact's
        hybrid recall score (``scores``: the whole scope ranked for the source query), the turn before each
        conversation turn, and (full mode) the ``current`` document whose layout the new one keeps."""
        texts = {h.memory.id: h.memory.text for h in hits} | {m.id: m.text for m in cited}
        vectors = dict(self.store.memory_vectors(model.bank_id, list(texts))) if texts else {}
        unstored = [i for i in texts if i not in vectors]  # none in practice: keep every fact in one vector space
        if unstored:
            vectors.update(zip(unstored, self.embedder.embed([texts[i] for i in unstored]), strict=True))
        query_vector = self.embedder.embed([model.source_query])[0]
        relevance = {h.memory.id: h.final for h in scores}
        facts = [*(h.memory for h in hits), *cited]
        return ScopeRead(
            vectors=vectors, query_vector=query_vector, embed=self.embedder.embed, cited=cited, relevance=relevance,
            previous=previous_turns(facts, [*facts, *(h.memory for h in scores), *self._turns_around(model, facts)]),
            current=current,
        )  # fmt: skip

    def _turns_around(self, model: MentalModel, facts: list[MemoryUnit]) -> list[MemoryUnit]:
        """The memories of the bank said within ``exchange.TURN_WINDOW_S`` before the earliest of ``facts`` and up to
        the latest, whatever the model's scope (a per-speaker model's facts reply to turns outside it): where the
        turn before each fact is looked for. Nothing when the model reads the whole bank (its scope holds them
        already) or no fact is a conversation turn."""
        if not (model.tags or model.trigger.get("fact_types") or model.trigger.get("tag_groups")):
            return []
        times = [t for m in facts if m.context and speaker_prefix(m.text) and (t := m.moment)]
        if not times:
            return []
        start = min(times) - timedelta(seconds=TURN_WINDOW_S)
        ids = self.store.memories_in_window(model.bank_id, start, max(times), SCOPE_MAX_FACTS, MemoryFilter())
        return self.store.get_memories(model.bank_id, ids)
