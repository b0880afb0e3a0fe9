"""Refresh governance state: what a model's refresh record says about its next refresh (beyond the reference).

Two rules: a fact the model was given is never silently dropped, and automatic spend is bounded (failures back
off, a breaker opens, a daily token budget refuses automatic refreshes). :class:`RefreshState` is stored on the
model row (``mental_models.refresh_state``, JSON) and written in the same transaction as the refresh it describes.
It holds:

* ``failures`` — consecutive recorded refresh failures (any trigger; reset by a completed refresh or a clear). The
  automatic-refresh policy backs off on it and opens the model's circuit breaker at a threshold
  (``engine/refresh/triggers.py``).
* ``carried_over`` — memory ids a delta refresh was given but whose operations failed even after the repair re-ask.
  The next delta reads them again, and the model counts as stale while any is pending (``staleness.py``).
  ``carried_attempts`` counts the delta refreshes that failed to place them.
* ``reanchor`` — why the next refresh must run in full (``mode_fallback_reason: delta_reanchored``): carried-over
  facts failed again, or every delta operation was rejected.
* ``empty_scope`` — the scope signature of a refresh that failed ``refresh_failed_empty_scope``: automatic triggers
  wait until the scope (its definition or its memories) changes.
* ``refused`` — the last automatic refresh refused by policy (``budget_exhausted``...), with what it was measured
  against, so the refusal stays visible on the model.
* ``hold`` — curation (docs/curation.md): automatic triggers wait for an in-scope write newer than
  ``hold["through"]`` (a database write stamp): set by a revert (``reason: "reverted"``: writes made before it do
  not undo it, and the next automatic refresh is a delta on top of the restored version) and by a draft waiting for
  review (``reason: "draft"``: its watermark).
* ``draft`` — review before publish: the refresh result waiting for a person's approval (content, structured
  document, response, watermark, diff); the published content is untouched until then.

``hold`` and ``draft`` are stored only when set, so a model that never used them keeps its record as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from mindbank.domain.projection import project


@dataclass(frozen=True, slots=True)
class RefreshState:
    """A model's refresh-governance record (module docstring). Immutable; build new ones with the methods."""

    failures: int = 0
    last_failure_reason: str | None = None
    carried_over: tuple[str, ...] = ()
    carried_attempts: int = 0
    reanchor: str | None = None
    empty_scope: str | None = None
    refused: dict[str, Any] | None = field(default=None, compare=True)
    hold: dict[str, Any] | None = None
    draft: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stored (and wire) form: every field, lists for tuples."""
        keys = ("failures", "last_failure_reason", "carried_over", "carried_attempts", "reanchor", "empty_scope")
        return {
            **project(self, (*keys, "refused")),
            **({"hold": self.hold} if self.hold else {}),
            **({"draft": self.draft} if self.draft else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RefreshState:
        """Read a stored state; missing or malformed fields take their defaults (the column starts as ``{}``)."""
        if not isinstance(data, Mapping) or not data:  # most models: never failed, nothing carried
            return cls()
        carried = data.get("carried_over")
        refused = data.get("refused")
        return cls(
            failures=_int(data.get("failures")),
            last_failure_reason=_str(data.get("last_failure_reason")),
            carried_over=tuple(str(i) for i in carried) if isinstance(carried, list) else (),
            carried_attempts=_int(data.get("carried_attempts")),
            reanchor=_str(data.get("reanchor")),
            empty_scope=_str(data.get("empty_scope")),
            refused=dict(refused) if isinstance(refused, Mapping) else None,
            hold=_mapping(data.get("hold")),
            draft=_mapping(data.get("draft")),
        )

    def after_success(self, *, carried_over: Sequence[str] = (), reanchor: str | None = None) -> RefreshState:
        """The state after a completed refresh: failures, refusal and empty-scope wait cleared; ``carried_over``
        is what this refresh could not place. Placing none of the previously carried facts again counts one more
        attempt; a second attempt that still fails asks the next refresh to re-anchor (``reanchor`` wins)."""
        carried = tuple(dict.fromkeys(carried_over))
        again = bool(set(carried) & set(self.carried_over))
        attempts = (self.carried_attempts + 1 if again else 1) if carried else 0
        if reanchor is None and again and attempts >= 2:
            reanchor = "carried_over_failed_again"
        return RefreshState(carried_over=carried, carried_attempts=attempts, reanchor=reanchor)

    def after_failure(self, reason: str | None, *, counts: bool = True, reanchor: str | None = None) -> RefreshState:
        """The state after a recorded failure. ``counts``: whether it moves the backoff and the breaker (a failure
        that spent nothing and cannot succeed until the scope changes does not)."""
        return replace(
            self,
            failures=self.failures + 1 if counts else self.failures,
            last_failure_reason=reason,
            reanchor=reanchor or self.reanchor,
        )


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def scope_signature(tags: Sequence[str], trigger: Mapping[str, Any]) -> str:
    """A stable string for what a model reads (tags, match mode, tag groups, fact types): a PATCH that changes any
    of them changes the signature."""
    key = {
        "tags": sorted(tags),
        "tags_match": trigger.get("tags_match"),
        "tag_groups": trigger.get("tag_groups"),
        "fact_types": trigger.get("fact_types"),
    }
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def utc_day(moment: datetime) -> str:
    """The UTC calendar day of ``moment`` as ``YYYY-MM-DD`` (what daily token budgets are counted per)."""
    return moment.astimezone(UTC).date().isoformat()


def next_utc_midnight(moment: datetime) -> datetime:
    """The start of the UTC day after ``moment`` (when a daily budget renews)."""
    day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def token_cost(input_tokens: int, output_tokens: int, prices: tuple[float | None, float | None]) -> float | None:
    """USD for ``input_tokens`` and ``output_tokens`` at ``prices`` = (input, output) USD per million tokens
    (``MINDBANK_LLM_PRICE_INPUT_PER_MILLION`` / ``..._OUTPUT_PER_MILLION``); None while either price is unset."""
    price_in, price_out = prices
    if price_in is None or price_out is None:
        return None
    return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 6)
