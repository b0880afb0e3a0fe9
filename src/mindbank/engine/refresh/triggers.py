"""Automatic refresh timing: when a cron is due, how long a failing model backs off, when its breaker is open,
when to park inside the minimum interval.

Spec: "Automatic Refresh", "Rate-limiting automatic refreshes"; reference facts §4.4, §4.5; beyond them (the
reference pauses after one failure until a success), mindbank backs off exponentially and opens a circuit breaker,
so a transient outage heals by itself and a broken provider stops costing. Pure functions over model rows and a
clock; the service's policy (``service/governance.py``) submits, refuses and parks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from croniter import croniter  # type: ignore[import-untyped]  # croniter ships no type hints

from mindbank.domain.governance import RefreshState
from mindbank.domain.records import MentalModel


def cron_due(model: MentalModel, now: datetime) -> bool:
    """A ``refresh_cron`` model is due when its schedule fired after its last refresh (the fire time closest
    before ``now`` is later than ``last_refreshed_at``)."""
    expression = model.trigger.get("refresh_cron")
    if not expression:
        return False
    previous = croniter(expression, now).get_prev(datetime)
    return bool(previous > model.last_refreshed_at)


@dataclass(frozen=True, slots=True)
class Backoff:
    """How automatic refreshes of a failing model wait (beyond the reference): ``base_seconds`` after the first
    recorded failure, doubling per further consecutive failure up to ``max_seconds``; at ``breaker_failures``
    consecutive failures they stop (0: never) until a manual refresh succeeds or the model is cleared."""

    base_seconds: float = 300.0
    max_seconds: float = 21600.0
    breaker_failures: int = 3

    def delay(self, failures: int) -> timedelta:
        """The wait after ``failures`` consecutive failures (zero for none)."""
        if failures < 1:
            return timedelta(0)
        seconds = self.base_seconds * 2 ** min(failures - 1, 32)
        return timedelta(seconds=max(0.0, min(seconds, self.max_seconds)))


def breaker_open(state: RefreshState, backoff: Backoff) -> bool:
    """Whether the model's circuit breaker is open: ``breaker_failures`` consecutive recorded failures."""
    return backoff.breaker_failures > 0 and state.failures >= backoff.breaker_failures


def next_automatic_at(
    state: RefreshState, last_failed_at: datetime | None, last_refreshed_at: datetime, backoff: Backoff
) -> datetime | None:
    """When an automatic refresh of a failing model may run again (None: no failure since the last completed
    refresh, nothing to wait for)."""
    if state.failures < 1 or last_failed_at is None or last_failed_at <= last_refreshed_at:
        return None
    return last_failed_at + backoff.delay(state.failures)


def next_fire(expression: str | None, now: datetime) -> datetime | None:
    """When a (validated, UTC) cron expression fires next after ``now``; None without one. What a person reads as
    "next refresh at" (a cron refresh still runs only if the model is stale then)."""
    if not expression:
        return None
    fires: datetime = croniter(expression, now).get_next(datetime)
    return fires


def park_until(model: MentalModel, interval_seconds: int | float, now: datetime) -> datetime | None:
    """When an automatic refresh inside the model's minimum interval may run (None: it may run now)."""
    if interval_seconds <= 0:
        return None
    due = model.last_refreshed_at + timedelta(seconds=interval_seconds)
    return due if now < due else None
