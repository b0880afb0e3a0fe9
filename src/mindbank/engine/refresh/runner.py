"""The mental-model refresh pipeline: plan a refresh (full or delta), then persist it — or, for a dry run, don't.

Spec sections "What a Refresh Reads", "Refresh Mode", "Staleness Gating", "Structured Output", "Troubleshoot a
Refresh"; reference facts §4.3, §4.6, §4.7, §4.10, §4.11. The rules it keeps:

* Snapshot: a refresh reads only memories stamped at or before a database-time cutoff taken at its start (the
  bank's newest write stamp; stamps are strictly increasing and committed in order per bank).
* Watermark: ``last_memory_seen_at`` becomes the newest in-scope memory seen (never now(), never backwards);
  untouched when nothing is in scope. ``last_refreshed_at`` advances on every completed refresh, never on failure.
* Delta mode reads only memories written after the watermark and edits the structured document with operations;
  sections no operation names stay byte-identical; ``based_on`` accumulates. It falls back to full with
  ``no_baseline_content`` or ``source_query_changed``.
* Gone citations (beyond the reference; ``engine/refresh/retraction.py``): blocks citing a memory that was deleted or
  left the scope are removed by the next refresh, delta or full.
* Nothing is lost: a failed refresh changes neither content, document, watermark nor ``last_refreshed_at``; it
  stamps ``last_refresh_failed_at``, writes a failure history row, and the trace when ``keep_trace`` is on.
* Trust (issue 14; ``guards.py``): a refusal or an uncited candidate never replaces a populated document
  (``refresh_failed_empty_candidate``); a retraction leaving no cited block with nothing new in scope is refused
  without any synthesis (``refresh_failed_empty_scope``, the retraction kept on record); facts whose delta
  operations failed are carried over to the next delta; a delta whose edits failed before re-anchors as full
  (``delta_reanchored``); ``max_tokens`` is a hard cap (the least related blocks are trimmed).
* A dry run is this same pipeline with the writes skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from mindbank.domain.document import (
    DocumentError,
    StructuredDocument,
    apply_operations,
    count_tokens,
    parse_markdown,
    render_markdown,
)
from mindbank.domain.records import MemoryUnit, MentalModel, ScoredMemory
from mindbank.domain.resources import applicable_directives, guidance_prompt
from mindbank.domain.scope import MemoryFilter, admits, model_scope
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.recall import RecallRequest, recall
from mindbank.engine.refresh import curation
from mindbank.engine.refresh.guards import blocks_left, carried_facts, is_refusal, trim_to_budget
from mindbank.engine.refresh.persist import persist_plan
from mindbank.engine.refresh.plan import (
    TRANSIENT,
    WRITING_OUTCOMES,
    Mode,
    RefreshPlan,
    RefreshSettings,
    based_on_by_type,
    fact_entry,
    flat_based_on,
    load_document,
    newer,
    scope_report,
    synthesis_scope,
)
from mindbank.engine.refresh.relevance import RelevanceGate
from mindbank.engine.refresh.retraction import retraction_operations, retraction_report
from mindbank.engine.refresh.source_chunks import select_chunks
from mindbank.engine.synthesis.port import ScopeRead, SynthesisError, Synthesizer
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import SpendRecord, Store

# A synthesizer that reads its whole scope (``reads_scope``: the extractive briefing) gets every in-scope memory of
# the window, best match first, up to this many facts and tokens: a bank's whole history for one subject stays
# readable on the embedded default (conv-43's 680 turns: about 17k tokens, docs/benchmarks.md "Mental-model
# quality"), and a scope beyond it is read by relevance to the source query.
SCOPE_MAX_FACTS = 3000
SCOPE_MAX_TOKENS = 120_000


class RefreshRunner:
    """Plans and persists refreshes for one store / embedder / synthesizer."""

    def __init__(
        self, store: Store, embedder: Embedder, synthesizer: Synthesizer, *, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.clock = clock
        self.gate = RelevanceGate(store, embedder)
        self.store = store
        self.embedder = embedder
        self.synthesizer = synthesizer

    # ------------------------------------------------------------------ planning
    def plan(
        self,
        model: MentalModel,
        settings: RefreshSettings,
        *,
        mode: Mode | None = None,
        automatic: bool = False,
        dry_run: bool = False,
    ) -> RefreshPlan:
        """Run the whole pipeline without writing anything. Never raises for refresh failures: they come back as a
        plan with ``failure_reason`` set. ``dry_run``: like the reference's dry run, skip the structured-output
        extraction (a warning says what a real refresh would do) and keep tool outputs in the trace."""
        requested: Mode = mode or model.trigger.get("mode") or "full"
        plan = RefreshPlan(
            model=model,
            requested_mode=requested,
            effective_mode=requested,
            engine=self.synthesizer.name,
            dry_run=dry_run,
        )
        try:
            self._plan(plan, settings, automatic=automatic)
        except TRANSIENT:
            raise  # retried by the worker; nothing is recorded against the model
        except Exception as exc:  # anything unexpected must still leave the model as it was
            plan.fail("refresh_failed_error", "unexpected_error", f"{type(exc).__name__}: {exc}")
        plan.duration_ms = int((time.perf_counter() - plan.started) * 1000)
        return plan

    def _plan(self, plan: RefreshPlan, settings: RefreshSettings, *, automatic: bool) -> None:
        model = plan.model
        scope = model_scope(model.tags, model.trigger)
        plan.scope = scope_report(model, scope)
        document: StructuredDocument | None = None
        if plan.requested_mode == "delta":
            if not model.content.strip():
                plan.effective_mode, plan.mode_fallback_reason = "full", "no_baseline_content"
            elif model.last_refreshed_source_query not in (None, model.source_query):
                plan.effective_mode, plan.mode_fallback_reason = "full", "source_query_changed"
            elif model.refresh_state.reanchor:
                # delta edits failed before (issue 14): this refresh rebuilds in full, once; if it fails the
                # ordinary failure rules (backoff, breaker) apply and the next one tries full again
                plan.effective_mode, plan.mode_fallback_reason = "full", "delta_reanchored"
            else:
                try:
                    document = load_document(model)
                except DocumentError as exc:
                    plan.fail("refresh_failed_delta_not_applied", "structured_doc_unreadable", str(exc))
                    return

        cutoff = self.store.bank_last_memory_write_at(model.bank_id)
        # citations gone from the scope (the memory was deleted, or re-tagged / re-typed out of it): found for every
        # mode, repaired by operations in delta and by the rebuild in full
        current = document if document is not None else self._current_document(model)
        cited = set(current.memory_ids()) if current is not None else set()
        present = self.store.get_memories(model.bank_id, sorted(cited)) if cited else []
        missing = cited - {m.id for m in present if admits(scope, m.tags, m.fact_type)}
        if current is not None:  # fixed (person-written, pinned) content: the baseline every candidate keeps
            current = curation.prepare(plan, current, missing)
            document = current if document is not None else None
        if missing and current is not None:
            quoted = {e["id"]: e["text"] for e in flat_based_on((model.reflect_response or {}).get("based_on"))}
            plan.retraction, warning = retraction_report(current, missing, present, quoted)
            if warning:
                plan.warnings.append(warning)
        # cited memories edited since the model last looked, and facts an earlier delta could not place (carried
        # over): never gated as irrelevant, and in delta the editor sees them whatever recall ranks first
        seen = model.last_memory_seen_at or model.last_refreshed_at
        edited = [
            ScoredMemory(m, 0.0)
            for m in present
            if m.id not in missing and seen < m.updated_at and (cutoff is None or m.updated_at <= cutoff)
        ]
        edited += self._carried_over(model, scope, cutoff, {h.memory.id for h in edited})
        window, newest = self._window(plan, scope, cutoff)
        if current is not None and missing and newest is None and not edited and not blocks_left(current, missing):
            # every block rests on a memory that is gone and nothing new is in scope: no empty publication
            if plan.effective_mode == "delta" and self._scope_reads_anything(model.bank_id, scope, cutoff):
                plan.effective_mode, plan.mode_fallback_reason = "full", "delta_reanchored"
                document = None
                window, newest = self._window(plan, scope, cutoff)
            else:
                assert plan.retraction is not None
                plan.retraction["deferred_reason"] = "empty_scope"
                plan.warnings.append(
                    "Nothing in the model's scope supports the document any more and the scope holds nothing new: "
                    "the document is kept (clear the model to accept an empty one)."
                )
                plan.fail("refresh_failed_empty_scope", "empty_scope", "no memory in scope supports any block")
                return
        delta = plan.effective_mode == "delta"

        if newest is None and not missing and not edited:
            if model.last_memory_seen_at is None and cutoff is not None:
                plan.warnings.append(
                    "The scope matches no memories: check the model's tags and its trigger's tags_match, "
                    "tag_groups and fact_types."
                )
            plan.refresh_skipped = "no_sources_in_scope" if not delta else "no_new_facts"
            self._preserve(plan)
            return
        if (
            automatic
            and newest is not None
            and not missing
            and not edited
            and self.gate.irrelevant(model, window, settings.relevance_threshold)
        ):
            plan.refresh_skipped = "not_relevant"
            plan.warnings.append("No new in-scope memory is relevant to the source query; the document was kept.")
            self._preserve(plan)
            return

        budget = int(model.trigger.get("recall_max_tokens") or settings.recall_max_tokens)
        budget = settings.capped(budget, settings.facts_cap)
        plan.synthesis_scope = synthesis_scope(model, window, budget, settings)
        whole = bool(getattr(self.synthesizer, "reads_scope", False))
        hits = self._recall(plan, model, window, budget, settings, whole=whole) if newest is not None else []
        if plan.failed:
            return
        if delta:
            recalled = {h.memory.id for h in hits}
            hits = [*hits, *(h for h in edited if h.memory.id not in recalled)]
        plan.retrieved = hits
        if hits and getattr(self.synthesizer, "reads_chunks", False):
            self._read_chunks(plan, hits, settings)
        if whole:
            plan_read = self._scope_read(model, hits, [m for m in present if m.id not in missing] if delta else [])
        else:
            plan_read = None
        if delta:
            assert document is not None
            self._plan_delta(plan, document, hits, missing, plan_read)
        else:
            self._plan_full(plan, hits, plan_read)
        if plan.failed or plan.outcome not in WRITING_OUTCOMES:
            return
        if plan.retrieved and not plan.used_ids:
            plan.warnings.append(f"Retrieval returned {len(plan.retrieved)} fact(s) but the synthesizer used none.")
        schema = model.trigger.get("response_schema")
        if schema and plan.dry_run:
            if getattr(self.synthesizer, "extracts_structured", True):
                plan.warnings.append("The dry run does not extract structured_output; a real refresh does.")
            else:
                plan.structured_output_would_fail = True
                plan.warnings.append(
                    f"A real refresh would fail (refresh_failed_structured_output) and keep the current document: "
                    f"the {self.synthesizer.name} engine cannot fill the response_schema; configure an LLM provider."
                )
        elif schema:
            try:
                plan.structured_output = self.synthesizer.extract_structured(content=plan.content, schema=schema)
            except SynthesisError as exc:
                plan.fail("refresh_failed_structured_output", "structured_output_failed", str(exc))

    def _window(
        self, plan: RefreshPlan, scope: MemoryFilter, cutoff: datetime | None
    ) -> tuple[MemoryFilter, datetime | None]:
        """The snapshot window this refresh reads (delta: since the watermark) and its newest memory; records both
        on the plan."""
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

    def _scope_reads_anything(self, bank_id: str, scope: MemoryFilter, cutoff: datetime | None) -> bool:
        """Whether the scope holds any memory at all in this snapshot (not only since the watermark)."""
        whole = replace(scope, updated_before=cutoff, updated_after=None)
        return cutoff is not None and self.store.scope_watermark(bank_id, whole) is not None

    def _carried_over(
        self, model: MentalModel, scope: MemoryFilter, cutoff: datetime | None, known: set[str]
    ) -> list[ScoredMemory]:
        """The facts an earlier delta could not place, still in scope (issue 14: read again, never dropped)."""
        ids = [i for i in model.refresh_state.carried_over if i not in known]
        if not ids:
            return []
        return [
            ScoredMemory(m, 0.0)
            for m in self.store.get_memories(model.bank_id, ids)
            if admits(scope, m.tags, m.fact_type) and (cutoff is None or m.updated_at <= cutoff)
        ]

    def _current_document(self, model: MentalModel) -> StructuredDocument | None:
        try:
            return load_document(model) if model.content.strip() else None
        except DocumentError:
            return None

    def _scope_read(self, model: MentalModel, hits: list[ScoredMemory], cited: list[MemoryUnit]) -> ScopeRead:
        """What a whole-scope synthesizer gets beside the facts: stored vectors (facts and cited memories, one
        read), the source query's vector, the embedder, and (delta) the cited memories still in scope."""
        texts = {h.memory.id: h.memory.text for h in hits} | {m.id: m.text for m in cited}
        vectors = dict(self.store.memory_vectors(model.bank_id, list(texts))) if texts else {}
        unstored = [i for i in texts if i not in vectors]  # none in practice: keep every fact in one vector space
        if unstored:
            vectors.update(zip(unstored, self.embedder.embed([texts[i] for i in unstored]), strict=True))
        query_vector = self.embedder.embed([model.source_query])[0]
        return ScopeRead(vectors=vectors, query_vector=query_vector, embed=self.embedder.embed, cited=cited)

    def _recall(
        self,
        plan: RefreshPlan,
        model: MentalModel,
        window: MemoryFilter,
        budget: int,
        settings: RefreshSettings,
        *,
        whole: bool = False,
    ) -> list[ScoredMemory]:
        """The facts the synthesizer reads: the top recall hits within ``budget`` tokens, or (``whole``) every
        in-scope memory of the window, best match first, bounded by ``SCOPE_MAX_FACTS`` / ``SCOPE_MAX_TOKENS``
        (one ranking with pools that large, so nothing is widened and re-ranked)."""
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
                "input": {"query": model.source_query, "max_tokens": budget},
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

    def _read_chunks(self, plan: RefreshPlan, hits: list[ScoredMemory], settings: RefreshSettings) -> None:
        """The source chunks of the retrieved facts, when ``include_chunks`` (trigger > bank > environment)."""
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

    def _extra(self, plan: RefreshPlan, *, full: bool, read: ScopeRead | None = None) -> dict[str, Any]:
        """Keyword arguments only some synthesizers take: the retrieval scope, the source chunks, the scope read
        (``reads_scope``), and the bank's mission and directives (``reads_directives``: the LLM engine; the
        extractive one cannot follow them)."""
        extra: dict[str, Any] = {}
        if read is not None:
            extra["read"] = read
        if full and getattr(self.synthesizer, "retrieves", False):
            extra["scope"] = plan.synthesis_scope
        if getattr(self.synthesizer, "reads_chunks", False):
            extra["chunks"] = plan.chunks
        if getattr(self.synthesizer, "reads_directives", False):
            extra["guidance"] = self._guidance(plan.model) + curation.fixed_guidance(plan, full=full)
        return extra

    def _guidance(self, model: MentalModel) -> str:
        """The bank's mission and the active directives that apply to the model's tags, for an LLM prompt."""
        bank = self.store.get_bank(model.bank_id)
        directives = applicable_directives(self.store.list_directives(model.bank_id, active_only=True), model.tags)
        return guidance_prompt(directives, None if bank is None else bank.mission)

    def _synthesized(self, plan: RefreshPlan, synthesis: Any) -> None:
        plan.synthesis_input_tokens = synthesis.input_tokens
        plan.usage = synthesis.usage
        plan.llm_calls = synthesis.llm_calls
        plan.used_ids = list(synthesis.used_ids)
        plan.tool_calls.extend(synthesis.tool_calls)
        known = {h.memory.id for h in plan.retrieved}
        plan.retrieved = [*plan.retrieved, *(h for h in synthesis.retrieved if h.memory.id not in known)]

    def _plan_full(self, plan: RefreshPlan, hits: list[ScoredMemory], read: ScopeRead | None = None) -> None:
        model = plan.model
        try:
            # a synthesizer that retrieves on its own (the LLM agent) reads through the same scope and snapshot
            synthesis = self.synthesizer.compose(
                name=model.name,
                source_query=model.source_query,
                facts=hits,
                max_tokens=model.max_tokens,
                **self._extra(plan, full=True, read=read),
            )
        except SynthesisError as exc:
            plan.fail("refresh_failed_error", exc.reason, str(exc))
            return
        self._synthesized(plan, synthesis)
        plan.candidate_content = synthesis.markdown
        populated = bool(model.content.strip())
        if not synthesis.markdown.strip() and synthesis.nothing_relevant and plan.retraction is not None:
            # nothing new to say, but cited memories are gone: drop their blocks from the current document
            current = self._current_document(model)
            if current is not None:
                self._apply_retraction_only(plan, current)
                return
        if populated and synthesis.answer_found is False:
            plan.fail("refresh_failed_empty_candidate", "empty_candidate", "the synthesizer found no answer "
                      "(answer_found false); a refusal never replaces a populated document")  # fmt: skip
            return
        if not synthesis.markdown.strip():
            if not synthesis.used_ids and synthesis.nothing_relevant:
                plan.refresh_skipped = "no_relevant_facts"
                self._preserve(plan)
                return
            plan.fail("refresh_failed_empty_candidate", "empty_candidate", "the synthesizer returned an empty document")
            return
        document = parse_markdown(synthesis.markdown)
        by_id = {h.memory.id: h for h in plan.retrieved}  # the pipeline's facts and what the synthesizer found
        if populated and is_refusal(document, by_id, synthesis.answer_found):
            plan.fail("refresh_failed_empty_candidate", "empty_candidate", "no block of the candidate cites a memory "
                      "this refresh read; an uncited answer never replaces a populated document")  # fmt: skip
            return
        document = self._cap(plan, document)
        plan.document = document
        plan.content = render_markdown(document)
        if plan.retraction is not None:
            plan.retraction["applied"] = not (set(document.memory_ids()) & set(plan.retraction["fact_ids"]))
        cited = [i for i in document.memory_ids() if i in by_id] or [i for i in plan.used_ids if i in by_id]
        plan.based_on = based_on_by_type([fact_entry(by_id[i]) for i in cited])
        plan.outcome = "content_written" if plan.content != model.content else "content_unchanged"

    def _cap(self, plan: RefreshPlan, document: StructuredDocument) -> StructuredDocument:
        """``max_tokens`` as a hard cap (issue 14; the reference only warns): blocks least related to the source
        query are trimmed; the plan records the candidate's size and the blocks removed, and warns."""
        model = plan.model
        document = curation.restore(plan, document)  # fixed content back, byte-identical, and never trimmed
        plan.candidate_tokens = count_tokens(render_markdown(document))
        if plan.candidate_tokens <= model.max_tokens:
            return document
        capped, plan.trimmed = trim_to_budget(
            document,
            model.max_tokens,
            lambda texts: self.gate.relevance(model.source_query, texts),
            keep=curation.fixed_ids(plan),
        )
        plan.warnings.append(
            f"The candidate was {plan.candidate_tokens} tokens, over max_tokens {model.max_tokens}: "
            f"{len(plan.trimmed)} block(s) least related to the source query were trimmed "
            f"({count_tokens(render_markdown(capped))} tokens kept)."
        )
        return capped

    def _apply_retraction_only(self, plan: RefreshPlan, current: StructuredDocument) -> None:
        assert plan.retraction is not None
        missing = set(plan.retraction["fact_ids"])
        if not blocks_left(current, missing):
            plan.fail("refresh_failed_empty_candidate", "empty_candidate", "the retraction would leave no block and "
                      "the synthesizer found nothing to write; the document was kept")  # fmt: skip
            return
        result = apply_operations(current, retraction_operations(current, missing))
        plan.emitted, plan.applied, plan.skipped = result.applied, result.applied, result.skipped
        plan.retraction["applied"] = True
        plan.document = self._cap(plan, result.document)
        plan.content = render_markdown(plan.document)
        previous = flat_based_on((plan.model.reflect_response or {}).get("based_on"))
        kept = [e for e in previous if e["id"] not in missing]
        plan.based_on = based_on_by_type(kept)
        plan.outcome = "content_written" if plan.content != plan.model.content else "content_unchanged"

    def _plan_delta(
        self,
        plan: RefreshPlan,
        document: StructuredDocument,
        hits: list[ScoredMemory],
        missing: set[str],
        read: ScopeRead | None = None,
    ) -> None:
        model = plan.model
        retracted = retraction_operations(document, missing)
        base = apply_operations(document, retracted).document if retracted else document
        try:
            synthesis = self.synthesizer.edit(
                source_query=model.source_query,
                document=base,
                facts=hits,
                max_tokens=model.max_tokens,
                **self._extra(plan, full=False, read=read),
            )
        except SynthesisError as exc:
            plan.fail("refresh_failed_delta_not_applied", "delta_ops_failed", str(exc))
            return
        self._synthesized(plan, synthesis)
        emitted = [*retracted, *synthesis.operations]
        plan.emitted = [op.to_dict() for op in emitted]
        operations = curation.guard(plan, document, emitted)  # none may change, move or remove fixed content
        if not operations and not self._fixed_changed(plan):
            plan.refresh_skipped = "no_new_facts"
            self._preserve(plan)
            return
        result = apply_operations(document, operations)
        plan.applied, plan.skipped = result.applied, result.skipped
        refused = (plan.curation or {}).get("refused") or []
        if plan.skipped:
            plan.warnings.append(
                f"{len(plan.skipped)} delta operation(s) were skipped: "
                + "; ".join(s["reason"] for s in plan.skipped[:3])
            )
        if not result.applied and (result.skipped or not (refused or self._fixed_changed(plan))):
            plan.reanchor = "delta_ops_all_skipped"  # the next refresh re-anchors as full (issue 14)
            plan.fail("refresh_failed_delta_not_applied", "delta_ops_all_skipped", "every delta operation was rejected")
            return
        if not blocks_left(result.document):
            plan.fail("refresh_failed_empty_candidate", "empty_candidate", "the edits would leave no block; a "
                      "populated document is never replaced with an empty one")  # fmt: skip
            return
        plan.carried_over = carried_facts(result.skipped, result.document, {h.memory.id for h in hits})
        if plan.carried_over:
            plan.warnings.append(
                f"{len(plan.carried_over)} new fact(s) could not be placed (their operations were rejected); they "
                "are carried over to the next refresh and the model stays stale until then."
            )
        if plan.retraction is not None:
            plan.retraction["applied"] = True
        plan.document = self._cap(plan, result.document)
        plan.content = render_markdown(plan.document)
        by_id = {h.memory.id: h for h in hits}
        previous = [e for e in flat_based_on(model.reflect_response and model.reflect_response.get("based_on"))
                    if e["id"] not in missing]  # fmt: skip
        plan.based_on = based_on_by_type([*previous, *(fact_entry(by_id[i]) for i in plan.used_ids if i in by_id)])
        plan.outcome = "content_written" if plan.content != model.content else "content_unchanged"

    def _fixed_changed(self, plan: RefreshPlan) -> bool:
        """Whether preparing the fixed content changed the document (a quote of a gone memory was removed)."""
        return plan.fixed is not None and bool((plan.curation or {}).get("retracted_quotes"))

    def _preserve(self, plan: RefreshPlan) -> None:
        """A completed refresh that keeps the document (nothing new or nothing relevant)."""
        plan.outcome = "content_preserved_no_new_facts"
        plan.content = plan.model.content
        plan.based_on = (plan.model.reflect_response or {}).get("based_on") or based_on_by_type([])
        plan.structured_output = (plan.model.reflect_response or {}).get("structured_output")

    def persist(self, plan: RefreshPlan, settings: RefreshSettings, *, spend: SpendRecord | None = None) -> MentalModel:
        """Write a plan (``persist.py``): success or failure, stamped with this runner's clock, with what the
        refresh spent (``spend``) in the same transaction."""
        return persist_plan(self.store, plan, settings, now=self.clock(), spend=spend)
