"""Refresh spend governance: automatic spend is bounded, and every refresh's spend is recorded.

Every automatic trigger (after consolidation, cron, anything later) goes through :meth:`Governance.verdict` twice:
when it would submit (a refused refresh queues nothing) and when the worker runs it (things change while an
operation waits). In order:

0. a hold (curation, docs/curation.md): after a revert, or while a draft waits for review, the refresh is skipped
   (nothing recorded) until an in-scope memory is written after the hold's stamp;
1. the model's circuit breaker: ``refresh_breaker_failures`` consecutive recorded failures stop its automatic
   refreshes until a manual refresh succeeds or the model is cleared;
2. the bank's breaker: ``refresh_bank_breaker_models`` failing models stop every automatic refresh of the bank;
3. a model that failed ``refresh_failed_empty_scope`` waits until its scope changes (a PATCH, or a memory in it);
4. token budgets per model and per bank per UTC day (trigger > bank config > environment; none by default): over
   budget an automatic refresh is refused with reason ``budget_exhausted``, recorded on the model;
5. exponential backoff after a failure (``refresh_failure_backoff_seconds`` doubling to ``..._max_seconds``): the
   refresh parks until then (``engine/refresh/triggers.py``).

Manual refreshes pass none of these gates. Spend is measured by :class:`SpendMeter`, an observer of every
:class:`~mindbank.providers.llm.base.ManagedLLM` that counts each attempt (failed ones included) and its tokens
inside a :func:`metering` block, so a refresh's spend is known even when it ends in a transient error. Cost is
tokens × ``llm_price_{input,output}_per_million`` (null while a price is unset), computed when read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from mindbank.domain.governance import next_utc_midnight, scope_signature, token_cost, utc_day
from mindbank.domain.records import MentalModel
from mindbank.domain.scope import model_scope
from mindbank.domain.timeutil import parse_timestamp, to_iso
from mindbank.engine.refresh.plan import RefreshPlan
from mindbank.engine.refresh.triggers import Backoff, breaker_open, next_automatic_at
from mindbank.providers.llm.base import CallRecord
from mindbank.service.core import ServiceCore
from mindbank.store.base import Spend, SpendRecord, SpendTotals


@dataclass(slots=True)
class Meter:
    """What the LLM calls of one :func:`metering` block spent: attempts (failed ones included) and tokens."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None


_METER: ContextVar[Meter | None] = ContextVar("mindbank_spend_meter", default=None)


@contextmanager
def metering() -> Iterator[Meter]:
    """Count the LLM calls made inside the block (in this thread / task)."""
    meter = Meter()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


class SpendMeter:
    """An LLM observer adding every attempt made inside a :func:`metering` block to its :class:`Meter`."""

    def __call__(self, call: CallRecord) -> None:
        meter = _METER.get()
        if meter is None:
            return
        meter.calls += 1
        meter.model = call.model
        if call.result is not None:
            meter.input_tokens += call.result.usage.input_tokens
            meter.output_tokens += call.result.usage.output_tokens


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy says about an automatic refresh now: run it, park it until ``until``, refuse it
    (``reason``: breaker_open, bank_breaker_open, empty_scope or budget_exhausted; ``detail`` says against what), or
    skip it without a record (``reason``: the hold, ``reverted`` or ``draft``)."""

    action: str  # "run" | "park" | "refuse" | "skip"
    reason: str | None = None
    until: datetime | None = None
    detail: dict[str, Any] | None = None


RUN = Verdict("run")


def totals_view(totals: SpendTotals, prices: tuple[float | None, float | None]) -> dict[str, Any]:
    """A spend figure as the API shows it: counts, tokens and ``cost`` (null while a price is unset)."""
    cost = token_cost(totals.input_tokens, totals.output_tokens, prices)
    # spelled out rather than projected: a model list shapes four of these per model
    return {
        "refreshes": totals.refreshes,
        "llm_calls": totals.llm_calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
        "total_tokens": totals.total_tokens,
        "cost": cost,
    }


def _draft_summary(draft: dict[str, Any]) -> dict[str, Any]:
    """A waiting draft as ``refresh_status`` shows it (the content and diff are at ``GET …/draft``)."""
    return {k: draft.get(k) for k in ("draft_id", "created_at", "watermark", "effective_mode")}


class Governance:
    """The automatic-refresh policy and the spend accounting of one service: reads the store and the settings
    (bank-overridable ones resolved by ``core``); the backoff and the prices are read once, at construction."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        settings = core.settings
        self.backoff = Backoff(
            settings.refresh_failure_backoff_seconds,
            settings.refresh_failure_backoff_max_seconds,
            settings.refresh_breaker_failures,
        )
        self.prices = (settings.llm_price_input_per_million, settings.llm_price_output_per_million)

    # ---------------------------------------------------------------- the policy
    def verdict(self, model: MentalModel, now: datetime) -> Verdict:
        """The automatic-refresh verdict for ``model`` at ``now`` (module docstring, steps 1-5)."""
        store = self.core.store
        state = model.refresh_state
        held = self.held(model)
        if held is not None:
            return Verdict("skip", held)
        if breaker_open(state, self.backoff):
            return Verdict("refuse", "breaker_open", detail={"consecutive_failures": state.failures})
        limit = self.core.settings.refresh_bank_breaker_models
        if limit > 0:
            failing = store.count_failing_models(model.bank_id)
            if failing >= limit:
                return Verdict("refuse", "bank_breaker_open", detail={"failing_models": failing})
        if state.empty_scope is not None and self._scope_unchanged(model):
            return Verdict("refuse", "empty_scope")
        refused = self._over_budget(model, now)
        if refused is not None:
            return refused
        due = next_automatic_at(state, model.last_refresh_failed_at, model.last_refreshed_at, self.backoff)
        if due is not None and now < due:
            return Verdict("park", "backoff", until=due)
        return RUN

    def held(self, model: MentalModel) -> str | None:
        """Why automatic triggers wait for this model (``"reverted"``, ``"draft"``: docs/curation.md), or None: it
        holds until an in-scope memory is written after the hold's stamp."""
        hold = model.refresh_state.hold
        through = parse_timestamp(hold.get("through")) if hold else None
        if hold is None or through is None:
            return None
        newer = replace(model_scope(model.tags, model.trigger, for_staleness=True), updated_after=through)
        return str(hold.get("reason")) if self.core.store.scope_watermark(model.bank_id, newer) is None else None

    def _scope_unchanged(self, model: MentalModel) -> bool:
        """Since its empty-scope failure, neither the scope's definition changed nor does it hold any memory."""
        if model.refresh_state.empty_scope != scope_signature(model.tags, model.trigger):
            return False
        return self.core.store.scope_watermark(model.bank_id, model_scope(model.tags, model.trigger)) is None

    def budgets(
        self, bank_id: str, trigger: dict[str, Any] | None, *, bank_config: dict[str, Any] | None = None
    ) -> tuple[int | None, int | None]:
        """``(model budget, bank budget)`` in tokens per UTC day (trigger > bank config > environment);
        ``bank_config``: the bank's overrides when the caller already read them."""
        if bank_config is None:
            bank = self.core.store.get_bank(bank_id)
            bank_config = {} if bank is None else bank.config
        resolve = self.core.resolved_setting
        model_budget = resolve(bank_id, "refresh_model_daily_token_budget", trigger, bank_config=bank_config)
        bank_budget = resolve(bank_id, "refresh_bank_daily_token_budget", bank_config=bank_config)
        return model_budget, bank_budget

    def _over_budget(self, model: MentalModel, now: datetime) -> Verdict | None:
        model_budget, bank_budget = self.budgets(model.bank_id, model.trigger)
        if model_budget is None and bank_budget is None:
            return None
        day = utc_day(now)
        store = self.core.store
        checks = []
        if model_budget is not None:
            spent = store.refresh_spend_by_model(model.bank_id, [model.id], day).get(model.id, Spend())
            checks.append(("model", spent.today.total_tokens, model_budget))
        if bank_budget is not None:
            checks.append(("bank", store.bank_refresh_spend(model.bank_id, day).today.total_tokens, bank_budget))
        for limit, spent_today, budget in checks:
            if spent_today >= budget:
                detail = {"limit": limit, "spent_tokens": spent_today, "budget_tokens": budget, "day": day,
                          "until": to_iso(next_utc_midnight(now))}  # fmt: skip
                return Verdict("refuse", "budget_exhausted", detail=detail)
        return None

    def record_refusal(self, model: MentalModel, verdict: Verdict, now: datetime) -> None:
        """Keep a ``budget_exhausted`` refusal visible on the model (written once per reason and day, so a trigger
        firing every few seconds does not rewrite the row each time)."""
        if verdict.reason != "budget_exhausted":
            return  # breakers and the empty-scope wait are visible from the model's own state
        refused = model.refresh_state.refused or {}
        detail = verdict.detail or {}
        if refused.get("reason") == verdict.reason and refused.get("day") == detail.get("day"):
            return
        record = {"reason": verdict.reason, "at": to_iso(now), **detail}
        current = self.core.store.get_mental_model(model.bank_id, model.id)
        if current is None:
            return
        updated = replace(current, refresh_state=replace(current.refresh_state, refused=record))
        self.core.store.save_refresh(
            updated, history=None, history_cap=self.core.settings.mental_model_history_max_entries
        )

    # ---------------------------------------------------------------- spend
    def spend_record(self, model: MentalModel, meter: Meter, plan: RefreshPlan | None, now: datetime) -> SpendRecord:
        """What a refresh spent: the meter's count when the LLM is observed, else (an unobserved test double) the
        synthesizer's own report. ``plan`` None: a transient attempt that recorded no refresh."""
        calls, tokens_in, tokens_out = meter.calls, meter.input_tokens, meter.output_tokens
        if calls == 0 and plan is not None:
            calls = len(plan.llm_calls)
            tokens_in, tokens_out = plan.usage.get("input_tokens", 0), plan.usage.get("output_tokens", 0)
        return SpendRecord(
            bank_id=model.bank_id,
            mental_model_id=model.id,
            day=utc_day(now),
            refreshes=0 if plan is None else 1,
            llm_calls=calls,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
        )

    def spend_view(self, spend: SpendRecord) -> dict[str, Any]:
        """One refresh's spend as the operation result shows it."""
        return totals_view(SpendTotals(spend.refreshes, spend.llm_calls, spend.input_tokens, spend.output_tokens),
                           self.prices)  # fmt: skip

    # ---------------------------------------------------------------- what the API shows
    def annotate(self, models: Sequence[MentalModel], now: datetime) -> None:
        """Set ``refresh_status`` on each model of a page: one read for the whole page (the spend and the bank's
        overrides), whatever its size."""
        if not models:
            return
        bank_id = models[0].bank_id
        spend, config = self.core.store.refresh_status_reads(bank_id, [m.id for m in models], utc_day(now))
        for model in models:
            model_budget, _ = self.budgets(bank_id, model.trigger, bank_config=config)
            model.refresh_status = self.status(model, spend.get(model.id, Spend()), model_budget, now)

    def status(self, model: MentalModel, spend: Spend, model_budget: int | None, now: datetime) -> dict[str, Any]:
        """``refresh_status`` of a model: the governance state, what it spent, and its daily budget."""
        state = model.refresh_state
        due = next_automatic_at(state, model.last_refresh_failed_at, model.last_refreshed_at, self.backoff)
        return {
            "consecutive_failures": state.failures,
            "last_failure_reason": state.last_failure_reason,
            "breaker_open": breaker_open(state, self.backoff),
            "next_automatic_refresh_at": to_iso(due) if due is not None and due > now else None,
            "carried_over": list(state.carried_over),
            "reanchor": state.reanchor,
            "waiting_for_scope_change": state.empty_scope is not None,
            "last_refusal": state.refused,
            **({"hold": state.hold} if state.hold else {}),
            **({"draft": _draft_summary(state.draft)} if state.draft else {}),
            "spend": {"today": totals_view(spend.today, self.prices), "total": totals_view(spend.total, self.prices)},
            "daily_token_budget": model_budget,
        }

    def bank_view(self, bank_id: str, now: datetime) -> dict[str, Any]:
        """The refresh figures of bank stats: spend today and in total, the budgets, the failing models."""
        spend = self.core.store.bank_refresh_spend(bank_id, utc_day(now))
        model_budget, bank_budget = self.budgets(bank_id, None)
        failing = self.core.store.count_failing_models(bank_id)
        limit = self.core.settings.refresh_bank_breaker_models
        return {
            "refresh_spend": {
                "day": utc_day(now),
                "today": totals_view(spend.today, self.prices),
                "total": totals_view(spend.total, self.prices),
            },
            "refresh_budget": {"bank_daily_tokens": bank_budget, "model_daily_tokens": model_budget},
            "failing_models": failing,
            "bank_breaker_open": limit > 0 and failing >= limit,
        }
