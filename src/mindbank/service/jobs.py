"""Jobs: the operation handlers (retain, consolidation, refresh), the cron tick, and the automatic-refresh policy.

The worker calls :meth:`Jobs.handlers`; the scheduler calls :meth:`Jobs.scheduler_tick`. A refresh handler resolves
settings (trigger > bank > environment), parks an automatic refresh inside its minimum interval or its failure
backoff, refuses it when the policy says so (breakers, empty scope, budgets: ``service/governance.py``), runs the
engine's plan and persist with what it spent, and shapes the operation result. Exhausted transient retries of a
refresh become a recorded failure (:meth:`Jobs.record_exhausted`, the worker's hook). Spec: "Automatic Refresh",
"Rate-limiting automatic refreshes".

Jobs owns an operation from claim to result: it runs the engine itself and submits follow-up work (a continued
consolidation, automatic refreshes) through the shared core; the handlers of the other operation types come from
the resource services that own them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, cast

from mindbank.domain.projection import project
from mindbank.domain.records import MentalModel, Operation
from mindbank.domain.timeutil import parse_timestamp, to_iso
from mindbank.engine.consolidate.plan import Consolidator, ObservationScopes
from mindbank.engine.consolidate.rounds import consolidate_round
from mindbank.engine.refresh.mode import choose_mode
from mindbank.engine.refresh.plan import TRANSIENT, RefreshPlan, RefreshSettings, newer
from mindbank.engine.refresh.review import in_review
from mindbank.engine.refresh.runner import RefreshRunner
from mindbank.engine.refresh.staleness import mark_stale
from mindbank.engine.refresh.triggers import cron_due, park_until
from mindbank.engine.synthesis.port import Synthesizer
from mindbank.errors import EmbeddingModelMismatchError
from mindbank.service.core import ServiceCore
from mindbank.service.events import Handler, observed
from mindbank.service.governance import Governance, metering
from mindbank.service.reembed import active_reembed
from mindbank.service.tracing import llm_call_context
from mindbank.store.fence import current_fence
from mindbank.worker.runner import Deferred, PermanentFailure

MAX_CONSOLIDATION_ROUNDS = 10
REEMBED_WAIT = timedelta(seconds=30)  # how long an operation waits for a bank's re-embedding to commit


def settle_refresh(outcome: dict[str, Any]) -> dict[str, Any]:
    """The operation result of a persisted refresh (``{"result", "error"?}``): returned, or raised as the
    :class:`PermanentFailure` of a failed refresh."""
    if "error" in outcome:
        raise PermanentFailure(outcome["error"], outcome["result"])
    return dict(outcome["result"])


class Jobs:
    """What the worker and the scheduler run: the handlers of ``batch_retain``, ``consolidation`` and
    ``refresh_mental_model`` operations, the cron tick, and the automatic-refresh policy (submit only stale models
    the governance policy allows, park inside the minimum interval and the failure backoff).

    ``core``: the store, settings and submission; ``refresher`` plans and persists refreshes made by
    ``synthesizer``; ``consolidator`` writes observations; ``retain``: the ``batch_retain`` writer;
    ``handlers``: the other operation types' handlers (documents, webhooks, transfer), by type."""

    def __init__(
        self,
        core: ServiceCore,
        *,
        governance: Governance,
        refresher: RefreshRunner,
        synthesizer: Synthesizer,
        consolidator: Consolidator,
        retain: Handler,
        handlers: Mapping[str, Handler],
    ) -> None:
        self.core = core
        self.governance = governance
        self.refresher = refresher
        self.synthesizer = synthesizer
        self.consolidator = consolidator
        self.retain = retain
        self.other_handlers = dict(handlers)

    def handlers(self) -> dict[str, Handler]:
        """Operation type -> handler, each running with its LLM calls attributed to the operation (tracing) and
        emitting the events of finished operations (``service/events.py``)."""
        raw = {
            "batch_retain": self.run_retain,
            "refresh_mental_model": self.run_refresh,
            "consolidation": self.run_consolidation,
            **self.other_handlers,
        }
        core = self.core
        return {
            kind: self.in_llm_context(
                observed(core.events, core.store, lambda: core.settings.worker_max_retries, kind, handler)
            )
            for kind, handler in raw.items()
        }

    def run_retain(self, op: Operation) -> dict[str, Any]:
        self.check_embedding_model(op.bank_id, previous_ok=True)
        return self.retain(op)

    def check_embedding_model(self, bank_id: str, *, previous_ok: bool = False) -> None:
        """Refuse an operation on a bank whose vectors another embedding model made (``previous_ok``: unless this
        server can still make that model's vectors, as retains may while a re-embedding runs). While the bank's
        re-embedding is queued or running the operation waits for it (``Deferred``, no retry counted); otherwise it
        fails at once (no retries): retrying cannot help until the server is configured for the bank's model."""
        try:
            if previous_ok:
                self.core.bank_embedder(bank_id)
            else:
                self.core._check_embedding_model(bank_id)
        except EmbeddingModelMismatchError as exc:
            if active_reembed(self.core.store, bank_id) is not None:
                raise Deferred(self.core.clock() + REEMBED_WAIT, "waiting for the bank's re-embedding") from None
            raise PermanentFailure(str(exc)) from None

    def run_consolidation(self, op: Operation) -> dict[str, Any]:
        self.check_embedding_model(op.bank_id)
        # the payload's scopes were checked when it was queued; the setting's when the settings were read
        scopes = cast(ObservationScopes, op.payload.get("observation_scopes") or self.core.settings.observation_scopes)
        totals = {"created": 0, "updated": 0, "consolidated": 0}
        for _ in range(MAX_CONSOLIDATION_ROUNDS):
            done = consolidate_round(self.core.store, op.bank_id, consolidator=self.consolidator, scopes=scopes)
            totals = {k: totals[k] + getattr(done, k) for k in totals}
            if not done.more:
                break
        else:
            # a long backlog: hand the rest to a fresh operation instead of holding the worker; it keeps the moment
            # this work was queued, so a refresh waiting for this consolidation waits for the rest too
            queued_at = parse_timestamp(op.payload.get("queued_at")) or op.created_at
            self.core.queue_consolidation(op.bank_id, scopes, queued_at=queued_at)
            return {**totals, "continued": True}
        totals["refreshes_submitted"] = len(self.refresh_after_consolidation(op.bank_id))
        return totals

    def refresh_after_consolidation(self, bank_id: str) -> list[str]:
        """Submit automatic refreshes of the bank's ``refresh_after_consolidation`` models that are stale."""
        models = self.core.store.list_models_with_trigger("refresh_after_consolidation", bank_id=bank_id)
        mark_stale(self.core.store, bank_id, models)
        return [op for m in models if m.is_stale and (op := self.submit_automatic_refresh(m)) is not None]

    def submit_automatic_refresh(self, model: MentalModel) -> str | None:
        """An automatic refresh (coalesced; parked by the worker inside the rate limit or the failure backoff); None
        when the policy refuses it (a breaker open, an empty scope unchanged, a budget spent: the last recorded)."""
        now = self.core.clock()
        verdict = self.governance.verdict(model, now)
        if verdict.action == "skip":  # held (a revert, a draft waiting for review): nothing new since
            return None
        if verdict.action == "refuse":
            self.governance.record_refusal(model, verdict, now)
            return None
        return self.core.queue_refresh(model.bank_id, model.id, automatic=True)

    def scheduler_tick(self, now: datetime | None = None) -> list[str]:
        """Refresh every ``refresh_cron`` model whose schedule fired since its last refresh AND that is stale; a
        fresh model is skipped without any synthesis. Safe to run in several processes at once (submissions
        coalesce). Returns the operation ids submitted."""
        now = now or self.core.clock()
        due = [m for m in self.core.store.list_models_with_trigger("refresh_cron") if cron_due(m, now)]
        submitted: list[str] = []
        for bank_id in sorted({m.bank_id for m in due}):
            models = [m for m in due if m.bank_id == bank_id]
            mark_stale(self.core.store, bank_id, models)
            submitted += [op for m in models if m.is_stale and (op := self.submit_automatic_refresh(m)) is not None]
        return submitted

    def refresh_settings(self, bank_id: str) -> RefreshSettings:
        """The refresh settings of ``bank_id`` (:meth:`ServiceCore.refresh_settings`)."""
        return self.core.refresh_settings(bank_id)

    def run_refresh(self, op: Operation) -> dict[str, Any]:
        if op.progress and "refresh" in op.progress:  # persisted by a worker that died before settling it
            return settle_refresh(op.progress["refresh"])
        model_id = op.payload["mental_model_id"]
        model = self.core.store.get_mental_model(op.bank_id, model_id)
        if model is None:
            raise PermanentFailure(f"mental model '{model_id}' no longer exists")
        self.check_embedding_model(op.bank_id)
        governance = self.governance
        if op.payload.get("automatic"):
            now = self.core.clock()
            interval = self.core.resolved_setting(
                op.bank_id, "mental_model_min_refresh_interval_seconds", model.trigger
            )
            due = park_until(model, interval, now)
            if due is not None:
                raise Deferred(due, "inside the model's minimum refresh interval")
            verdict = governance.verdict(model, now)
            if verdict.action == "skip":
                return {"mental_model_id": model_id, "name": model.name, "outcome": "content_preserved_no_new_facts",
                        "held": verdict.reason}  # fmt: skip
            if verdict.action == "park" and verdict.until is not None:
                raise Deferred(verdict.until, "backing off after a failed refresh")
            if verdict.action == "refuse":
                governance.record_refusal(model, verdict, now)
                details = {"mental_model_id": model_id, "name": model.name, "outcome": verdict.reason, "refused": True}
                raise PermanentFailure(
                    f"{verdict.reason}: automatic refresh refused", {**details, **(verdict.detail or {})}
                )
        settings = self.refresh_settings(op.bank_id)
        with metering() as meter:
            try:
                # the mode rule (a revert holding included) is engine/refresh/mode.py's
                plan = self.refresher.plan(
                    model, settings, mode=op.payload.get("mode"), automatic=bool(op.payload.get("automatic"))
                )
            except TRANSIENT:
                # the worker retries; the calls this attempt made are spent all the same
                spend = governance.spend_record(model, meter, None, self.core.clock())
                if spend.llm_calls:
                    self.core.store.add_refresh_spend(spend)
                raise
        spend = governance.spend_record(model, meter, plan, self.core.clock())
        result = {
            "mental_model_id": model_id,
            "name": model.name,
            **project(plan, ("outcome", "effective_mode", "mode_fallback_reason")),
            "content_len": len(plan.content),
            "facts_retrieved": len(plan.retrieved),
            "facts_used": len(plan.used_ids),
            "delta_ops_applied": len(plan.applied),
            "delta_ops_skipped": len(plan.skipped),
            "carried_over": len(plan.carried_over),
            "last_memory_seen_at": to_iso(newer(plan.watermark, model.last_memory_seen_at)),
            "llm_model": meter.model,
            "spend": governance.spend_view(spend),
        }
        if in_review(model) and plan.outcome == "content_written":
            result["draft"] = True  # waiting for review: mental_model.draft_ready
        outcome: dict[str, Any] = {"result": result}
        if plan.failed:
            outcome["error"] = plan.error_message or plan.failure_reason or "refresh failed"
            result["failure_reason"] = plan.failure_reason
        if (fence := current_fence()) is not None:
            fence.stage({"refresh": outcome})  # committed by persist's transaction: a rerun settles, never redoes
        self.refresher.persist(plan, settings, spend=spend)
        return settle_refresh(outcome)

    def record_exhausted(self, op: Operation, exc: BaseException) -> dict[str, Any] | None:
        """The worker's hook when an operation's transient retries are spent. For a refresh it is a recorded failure:
        ``last_refresh_failed_at`` stamped, a failure history row, outcome ``refresh_failed_error`` with
        reason ``provider_unavailable`` and the backoff and breaker counting it; content, watermark and
        ``last_refreshed_at`` unchanged. Returns the operation result (None for other operation types)."""
        if op.operation_type != "refresh_mental_model":
            return None
        model = self.core.store.get_mental_model(op.bank_id, op.payload["mental_model_id"])
        if model is None:
            return None
        # the mode the refresh ran in (engine/refresh/mode.py); the payload's mode was checked when it was written
        choice = choose_mode(model, op.payload.get("mode"), automatic=bool(op.payload.get("automatic")))
        plan = RefreshPlan(model=model, requested_mode=choice.requested, effective_mode=choice.effective,
                           mode_fallback_reason=choice.fallback_reason, engine=self.synthesizer.name)  # fmt: skip
        plan.fail("refresh_failed_error", "provider_unavailable", f"transient failures outlasted the retries: {exc}")
        self.refresher.persist(plan, self.refresh_settings(op.bank_id))
        return {
            **project(model, ("mental_model_id", "name"), {"mental_model_id": "id"}),
            **project(plan, ("outcome", "failure_reason")),
            "retries": op.retry_count,
        }

    def in_llm_context(self, handler: Callable[[Operation], dict[str, Any]]) -> Callable[[Operation], dict[str, Any]]:
        """``handler`` with its LLM calls attributed to the operation it runs (LLM request tracing)."""

        def run(op: Operation) -> dict[str, Any]:
            with llm_call_context(op.bank_id, op.id):
                return handler(op)

        return run
