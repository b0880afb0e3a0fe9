"""Automatic refresh rules: when a cron is due, when a model's automatic refreshes are paused, when to park.

Spec: "Automatic Refresh", "Rate-limiting automatic refreshes"; reference facts §4.4, §4.5. Pure functions over
model rows and a clock; the service submits and the worker parks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from croniter import croniter

from mindbank.domain.records import MentalModel


def cron_due(model: MentalModel, now: datetime) -> bool:
    """A ``refresh_cron`` model is due when its schedule fired after its last refresh (the fire time closest
    before ``now`` is later than ``last_refreshed_at``)."""
    expression = model.trigger.get("refresh_cron")
    if not expression:
        return False
    previous = croniter(expression, now).get_prev(datetime)
    return bool(previous > model.last_refreshed_at)


def next_fire(expression: str | None, now: datetime) -> datetime | None:
    """When a (validated, UTC) cron expression fires next after ``now``; None without one. What a person reads as
    "next refresh at" (a cron refresh still runs only if the model is stale then)."""
    if not expression:
        return None
    return croniter(expression, now).get_next(datetime)  # type: ignore[no-any-return]


def automatic_paused(model: MentalModel) -> bool:
    """After a non-transient failure, automatic refreshes wait until a refresh succeeds or the model is cleared
    (no endless re-trigger loops, no unbounded spend)."""
    failed = model.last_refresh_failed_at
    return failed is not None and failed > model.last_refreshed_at


def park_until(model: MentalModel, interval_seconds: int | float, now: datetime) -> datetime | None:
    """When an automatic refresh inside the model's minimum interval may run (None: it may run now)."""
    if interval_seconds <= 0:
        return None
    due = model.last_refreshed_at + timedelta(seconds=interval_seconds)
    return due if now < due else None
