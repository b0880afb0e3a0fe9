"""Refresh spend: what refreshes cost per model and per UTC day, read by the refresh governance rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SpendRecord:
    """What one refresh spent, added to its model's row of ``day`` (UTC, ``YYYY-MM-DD``) in ``refresh_spend``:
    ``refreshes`` recorded (0 for a transient attempt that recorded nothing), LLM attempts (failed ones included)
    and the tokens the provider reported."""

    bank_id: str
    mental_model_id: str
    day: str
    refreshes: int = 1
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def params(self) -> tuple[Any, ...]:
        """The ``add_refresh_spend`` parameters."""
        return (self.bank_id, self.mental_model_id, self.day, self.refreshes, self.llm_calls, self.input_tokens,
                self.output_tokens)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SpendTotals:
    """Spend summed over some refreshes: counts and tokens (``total_tokens`` = input + output)."""

    refreshes: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: SpendTotals) -> SpendTotals:
        return SpendTotals(
            self.refreshes + other.refreshes,
            self.llm_calls + other.llm_calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )


@dataclass(frozen=True, slots=True)
class Spend:
    """A model's (or a bank's) spend: on one UTC day (``today``) and over all days (``total``)."""

    today: SpendTotals = SpendTotals()
    total: SpendTotals = SpendTotals()


class RefreshSpendStore(Protocol):
    """Spend rows and the reads the refresh governance rules take (budgets, failing models)."""

    def add_refresh_spend(self, spend: SpendRecord) -> None: ...
    def refresh_spend_by_model(self, bank_id: str, model_ids: Sequence[str], day: str) -> dict[str, Spend]: ...
    def refresh_status_reads(
        self, bank_id: str, model_ids: Sequence[str], day: str
    ) -> tuple[dict[str, Spend], dict[str, Any]]: ...
    def bank_refresh_spend(self, bank_id: str, day: str) -> Spend: ...
    def count_failing_models(self, bank_id: str) -> int: ...
