"""The mental-model refresh pipeline: plan a refresh (full or delta), then persist it — or, for a dry run, don't.

Spec sections "What a Refresh Reads", "Refresh Mode", "Staleness Gating", "Structured Output", "Troubleshoot a
Refresh"; reference facts §4.3, §4.6, §4.7, §4.10, §4.11. The rules it keeps:

* Snapshot: a refresh reads only memories stamped at or before a database-time cutoff taken at its start (the
  bank's newest write stamp; stamps are strictly increasing and committed in order per bank).
* Watermark: ``last_memory_seen_at`` becomes the newest in-scope memory seen (never now(), never backwards);
  untouched when nothing is in scope. ``last_refreshed_at`` advances on every completed refresh, never on failure.
* Mode (``mode.py``, the one rule): delta mode reads only memories written after the watermark and edits the
  structured document with operations; sections no operation names stay byte-identical; ``based_on``
  accumulates. It falls back to full with ``no_baseline_content``, ``source_query_changed`` or
  ``delta_reanchored``.
* Gone citations (beyond the reference; ``engine/refresh/retraction.py``): blocks citing a memory that was deleted or
  left the scope are removed by the next refresh, delta or full.
* Nothing is lost: a failed refresh changes neither content, document, watermark nor ``last_refreshed_at``; it
  stamps ``last_refresh_failed_at``, writes a failure history row, and the trace when ``keep_trace`` is on.
* Trust (beyond the reference; ``guards.py``): a refusal or an uncited candidate never replaces a populated
  document (``refresh_failed_empty_candidate``); a retraction leaving no cited block with nothing new in scope is
  refused without any synthesis (``refresh_failed_empty_scope``, the retraction kept on record); facts whose delta
  operations failed are carried over to the next delta; a delta whose edits failed before re-anchors as full
  (``delta_reanchored``); ``max_tokens`` is a hard cap (the least related blocks are trimmed).
* Capabilities: the synthesizer declares what it reads (``Capabilities``); the pipeline fetches and hands over
  exactly that (``reading.py`` reads, ``inputs.py`` hands over).
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
from mindbank.domain.records import MentalModel, ScoredMemory
from mindbank.domain.scope import MemoryFilter, admits, model_scope
from mindbank.domain.timeutil import utcnow
from mindbank.engine.refresh import curation
from mindbank.engine.refresh.dropped import dropped_citations
from mindbank.engine.refresh.guards import blocks_left, carried_facts, is_refusal, trim_to_budget
from mindbank.engine.refresh.inputs import synthesis_inputs
from mindbank.engine.refresh.mode import choose_mode
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
    scope_report,
    synthesis_scope,
)
from mindbank.engine.refresh.reading import ScopeReader, Snapshot, current_document
from mindbank.engine.refresh.relevance import RelevanceGate
from mindbank.engine.refresh.retraction import retraction_operations, retraction_report
from mindbank.engine.synthesis.port import ScopeRead, Synthesis, SynthesisError, SynthesisInputs, Synthesizer
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import SpendRecord, Store

LEFT_OUT_MAX = 64  # facts left out (new, or dropped from the document), with reasons, the trace lists at most


class RefreshRunner:
    """Plans and persists refreshes for one store / embedder / synthesizer."""

    def __init__(
        self, store: Store, embedder: Embedder, synthesizer: Synthesizer, *, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.clock = clock
        self.gate = RelevanceGate(store, embedder)
        self.reader = ScopeReader(store, embedder)
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
        plan with ``failure_reason`` set. ``mode``: the mode the operation asked for (None: the rule in
        ``mode.py`` decides); ``automatic``: a trigger, not a person, asked. ``dry_run``: like the reference's dry
        run, skip the structured-output extraction (a warning says what a real refresh would do) and keep tool
        outputs in the trace."""
        choice = choose_mode(model, mode, automatic=automatic)
        plan = RefreshPlan(
            model=model,
            requested_mode=choice.requested,
            effective_mode=choice.effective,
            mode_fallback_reason=choice.fallback_reason,
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
        """The pipeline's steps in order; each records what it decided on ``plan``, and the first failure or skip
        ends the refresh."""
        model = plan.model
        scope = model_scope(model.tags, model.trigger)
        plan.scope = scope_report(model, scope)
        try:
            baseline = load_document(model) if plan.effective_mode == "delta" else None
        except DocumentError as exc:
            plan.fail("refresh_failed_delta_not_applied", "structured_doc_unreadable", str(exc))
            return
        snapshot = self._read_scope(plan, scope, baseline)
        if not self._supports_document(plan, snapshot) or self._nothing_to_do(plan, snapshot, settings, automatic):
            return
        hits, read = self._read_facts(plan, snapshot, settings)
        if plan.failed:
            return
        if snapshot.baseline is not None:
            self._plan_delta(plan, snapshot.baseline, hits, snapshot.missing, read)
        else:
            self._plan_full(plan, hits, read)
        if plan.failed or plan.outcome not in WRITING_OUTCOMES:
            return
        if plan.retrieved and not plan.used_ids:
            plan.warnings.append(f"Retrieval returned {len(plan.retrieved)} fact(s) but the synthesizer used none.")
        self._extract_structured(plan)

    def _read_scope(self, plan: RefreshPlan, scope: MemoryFilter, baseline: StructuredDocument | None) -> Snapshot:
        """Take the snapshot (``reading.Snapshot``): the cutoff, the citations gone from the scope (found in every
        mode: repaired by operations in delta and by the rebuild in full, and reported as ``plan.retraction``), the
        fixed content every candidate keeps (``curation.prepare``), the edited and carried-over facts, and the
        window with its newest memory."""
        model = plan.model
        cutoff = self.store.bank_last_memory_write_at(model.bank_id)
        current = baseline if baseline is not None else current_document(model)
        cited = set(current.memory_ids()) if current is not None else set()
        present = self.store.get_memories(model.bank_id, sorted(cited)) if cited else []
        missing = cited - {m.id for m in present if admits(scope, m.tags, m.fact_type)}
        if current is not None:  # fixed (person-written, pinned) content: the baseline every candidate keeps
            current = curation.prepare(plan, current, missing)
            baseline = current if baseline is not None else None
        if missing and current is not None:
            quoted = {e["id"]: e["text"] for e in flat_based_on((model.reflect_response or {}).get("based_on"))}
            plan.retraction, warning = retraction_report(current, missing, present, quoted)
            if warning:
                plan.warnings.append(warning)
        seen = model.last_memory_seen_at or model.last_refreshed_at
        edited = [
            ScoredMemory(m, 0.0)
            for m in present
            if m.id not in missing and seen < m.updated_at and (cutoff is None or m.updated_at <= cutoff)
        ]
        edited += self.reader.carried_over(model, scope, cutoff, {h.memory.id for h in edited})
        window, newest = self.reader.window(plan, scope, cutoff)
        return Snapshot(scope, cutoff, baseline, current, present, missing, edited, window, newest)

    def _supports_document(self, plan: RefreshPlan, snapshot: Snapshot) -> bool:
        """False (the plan failed with ``refresh_failed_empty_scope``) when every block rests on a memory that is
        gone and nothing new is in scope: no empty publication. A delta whose scope still holds memories re-anchors
        as full instead (``delta_reanchored``) and ``snapshot`` is re-read for the full window."""
        current, missing = snapshot.current, snapshot.missing
        if current is None or not missing or snapshot.newest is not None or snapshot.edited:
            return True
        if blocks_left(current, missing):
            return True
        bank_id = plan.model.bank_id
        if plan.effective_mode == "delta" and self.reader.reads_anything(bank_id, snapshot.scope, snapshot.cutoff):
            plan.effective_mode, plan.mode_fallback_reason = "full", "delta_reanchored"
            snapshot.baseline = None
            snapshot.window, snapshot.newest = self.reader.window(plan, snapshot.scope, snapshot.cutoff)
            return True
        assert plan.retraction is not None
        plan.retraction["deferred_reason"] = "empty_scope"
        plan.warnings.append(
            "Nothing in the model's scope supports the document any more and the scope holds nothing new: "
            "the document is kept (clear the model to accept an empty one)."
        )
        plan.fail("refresh_failed_empty_scope", "empty_scope", "no memory in scope supports any block")
        return False

    def _nothing_to_do(self, plan: RefreshPlan, snapshot: Snapshot, settings: RefreshSettings, automatic: bool) -> bool:
        """True (the document is kept, a completed refresh) when nothing is new, edited or gone in scope
        (``no_sources_in_scope`` / ``no_new_facts``), or when an automatic refresh's new memories are all
        irrelevant to the source query (``not_relevant``: spec "Staleness Gating")."""
        model = plan.model
        changed = bool(snapshot.missing or snapshot.edited)
        if snapshot.newest is None and not changed:
            if model.last_memory_seen_at is None and snapshot.cutoff is not None:
                plan.warnings.append(
                    "The scope matches no memories: check the model's tags and its trigger's tags_match, "
                    "tag_groups and fact_types."
                )
            plan.refresh_skipped = "no_sources_in_scope" if plan.effective_mode != "delta" else "no_new_facts"
            self._preserve(plan)
            return True
        if (
            automatic
            and snapshot.newest is not None
            and not changed
            and self.gate.irrelevant(model, snapshot.window, settings.relevance_threshold)
        ):
            plan.refresh_skipped = "not_relevant"
            plan.warnings.append("No new in-scope memory is relevant to the source query; the document was kept.")
            self._preserve(plan)
            return True
        return False

    def _read_facts(
        self, plan: RefreshPlan, snapshot: Snapshot, settings: RefreshSettings
    ) -> tuple[list[ScoredMemory], ScopeRead | None]:
        """The facts the synthesizer writes from (recall within the trigger's budget, or the whole scope for a
        synthesizer that ``reads_scope``; in delta plus the edited and carried-over facts), their source chunks
        (``reads_chunks``) and, for a whole-scope synthesizer, the vectors and scores it compares (a delta ranks
        the whole scope once more, so new and cited facts are judged on the full refresh's scale)."""
        model, capabilities = plan.model, self.synthesizer.capabilities
        delta = plan.effective_mode == "delta"
        budget = int(model.trigger.get("recall_max_tokens") or settings.recall_max_tokens)
        budget = settings.capped(budget, settings.facts_cap)
        plan.synthesis_scope = synthesis_scope(model, snapshot.window, budget, settings)
        whole = capabilities.reads_scope
        hits: list[ScoredMemory] = []
        if snapshot.newest is not None:
            hits = self.reader.recall(plan, snapshot.window, budget, settings, whole=whole)
        if plan.failed:
            return [], None
        if delta:
            recalled = {h.memory.id for h in hits}
            hits = [*hits, *(h for h in snapshot.edited if h.memory.id not in recalled)]
        plan.retrieved = hits
        if hits and capabilities.reads_chunks:
            self.reader.read_chunks(plan, hits, settings)
        if not whole:
            return hits, None
        cited_now = [m for m in snapshot.present if m.id not in snapshot.missing] if delta else []
        scores = self.reader.scope_scores(model, replace(snapshot.window, updated_after=None)) if delta else hits
        current = None if delta else snapshot.current
        return hits, self.reader.scope_read(model, hits, cited_now, scores, current)

    def _extract_structured(self, plan: RefreshPlan) -> None:
        """The trigger's ``response_schema`` filled from the final content (spec "Structured Output"); a failure
        fails the refresh (``refresh_failed_structured_output``). A dry run does not extract: it says what a real
        refresh would do, and that it would fail when the synthesizer cannot (``extracts_structured`` off)."""
        schema = plan.model.trigger.get("response_schema")
        if not schema:
            return
        if plan.dry_run:
            if self.synthesizer.capabilities.extracts_structured:
                plan.warnings.append("The dry run does not extract structured_output; a real refresh does.")
            else:
                plan.structured_output_would_fail = True
                plan.warnings.append(
                    f"A real refresh would fail (refresh_failed_structured_output) and keep the current document: "
                    f"the {self.synthesizer.name} engine cannot fill the response_schema; configure an LLM provider."
                )
            return
        try:
            plan.structured_output = self.synthesizer.extract_structured(content=plan.content, schema=schema)
        except SynthesisError as exc:
            plan.fail("refresh_failed_structured_output", "structured_output_failed", str(exc))

    # ------------------------------------------------------------------ writing the candidate
    def _synthesized(self, plan: RefreshPlan, synthesis: Synthesis) -> None:
        """What the synthesis read, spent and used, onto the plan; what else it retrieved joins ``retrieved``."""
        plan.synthesis_input_tokens = synthesis.input_tokens
        plan.usage = synthesis.usage
        plan.llm_calls = synthesis.llm_calls
        plan.used_ids = list(synthesis.used_ids)
        plan.tool_calls.extend(synthesis.tool_calls)
        known = {h.memory.id for h in plan.retrieved}
        plan.retrieved = [*plan.retrieved, *(h for h in synthesis.retrieved if h.memory.id not in known)]
        # what a refresh leaves out of what is new since the watermark, and why (the synthesizer's reasons, in its
        # order: what came closest to the document first, so the entries a capped list keeps are those)
        seen = plan.model.last_memory_seen_at
        by_id = {h.memory.id: h.memory for h in plan.retrieved}
        plan.left_out = (
            [
                {"id": i, "text": by_id[i].text, "reason": reason}
                for i, reason in synthesis.left_out.items()
                if i in by_id and by_id[i].updated_at > seen
            ][:LEFT_OUT_MAX]
            if seen is not None
            else []
        )
        if plan.effective_mode == "delta":
            plan.left_out = self._with_earlier_reasons(plan)

    def _record_dropped(self, plan: RefreshPlan, dropped: dict[str, str]) -> None:
        """The memories a delta took out of the document (``dropped.py``: evicted, trimmed or removed while still
        in scope) lead ``plan.left_out``, each ``{id, text, reason}``; at most :data:`LEFT_OUT_MAX` entries."""
        if not dropped:
            return
        texts = {m.id: m.text for m in self.store.get_memories(plan.model.bank_id, list(dropped))}
        entries = [{"id": i, "text": texts[i], "reason": r} for i, r in dropped.items() if i in texts]
        rest = [e for e in plan.left_out if e["id"] not in dropped]
        plan.left_out = [*entries, *rest][:LEFT_OUT_MAX]

    def _with_earlier_reasons(self, plan: RefreshPlan) -> list[dict[str, Any]]:
        """``plan.left_out`` followed by what the model's previous trace left out and this delta did not read again:
        a delta reads only what is new since the watermark, so a fact an earlier refresh left out is still out, for
        the reason it gave then (the entry keeps that trace's ``recorded_at``) — unless the memory is gone. At most
        :data:`LEFT_OUT_MAX` entries, this refresh's first."""
        trace = (plan.model.reflect_response or {}).get("trace") or {}
        judged = {e["id"] for e in plan.left_out} | {h.memory.id for h in plan.retrieved}
        earlier = [e for e in trace.get("left_out") or [] if isinstance(e, dict) and e.get("id") not in judged]
        room = LEFT_OUT_MAX - len(plan.left_out)
        if not earlier or room <= 0:
            return plan.left_out
        present = {m.id for m in self.store.get_memories(plan.model.bank_id, [str(e["id"]) for e in earlier])}
        when = trace.get("recorded_at")
        kept = [{**e, "recorded_at": e.get("recorded_at") or when} for e in earlier if e["id"] in present]
        return [*plan.left_out, *kept[:room]]

    def _inputs(
        self, plan: RefreshPlan, hits: list[ScoredMemory], *, full: bool, read: ScopeRead | None
    ) -> SynthesisInputs:
        """The one input of a ``compose`` / ``edit`` call: the facts and what the synthesizer declares it reads."""
        return synthesis_inputs(self.store, plan, self.synthesizer.capabilities, hits, full=full, read=read)

    def _plan_full(self, plan: RefreshPlan, hits: list[ScoredMemory], read: ScopeRead | None = None) -> None:
        """Full mode: the synthesizer writes a whole candidate; refusals, uncited and empty candidates never replace
        a populated document (``guards.py``); the candidate keeps the fixed content and the ``max_tokens`` cap."""
        model = plan.model
        try:
            # a synthesizer that retrieves on its own (the LLM agent) reads through the same scope and snapshot
            synthesis = self.synthesizer.compose(self._inputs(plan, hits, full=True, read=read))
        except SynthesisError as exc:
            plan.fail("refresh_failed_error", exc.reason, str(exc))
            return
        self._synthesized(plan, synthesis)
        plan.candidate_content = synthesis.markdown
        populated = bool(model.content.strip())
        if not synthesis.markdown.strip() and synthesis.nothing_relevant and plan.retraction is not None:
            # nothing new to say, but cited memories are gone: drop their blocks from the current document
            current = current_document(model)
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
        """``max_tokens`` as a hard cap (beyond the reference, which only warns): blocks least related to the source
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
        """A full refresh with nothing new to say but citations gone: the current document minus their blocks."""
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
        """Delta mode: operations folding ``hits`` into ``document`` (gone citations retracted first); sections no
        operation names stay byte-identical; operations touching fixed content are refused (``curation.guard``);
        facts whose operations were rejected are carried over to the next delta."""
        model = plan.model
        retracted = retraction_operations(document, missing)
        base = apply_operations(document, retracted).document if retracted else document
        try:
            synthesis = self.synthesizer.edit(base, self._inputs(plan, hits, full=False, read=read))
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
            plan.reanchor = "delta_ops_all_skipped"  # the next refresh re-anchors as full, once
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
        self._record_dropped(plan, dropped_citations(base, result.document, plan.document, synthesis.left_out,
                                                     plan.trimmed))  # fmt: skip
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
