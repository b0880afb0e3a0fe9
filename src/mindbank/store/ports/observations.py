"""Observation curation and reads beyond consolidation: an observation's history, the bank's observation scopes,
and the reference's deletes (the observations drawn from one memory, every observation, a bank's memories)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mindbank.domain.records import MemoryUnit

# the reference's cap on an observation's history (HINDSIGHT_API_OBSERVATION_HISTORY_MAX_ENTRIES): newest kept
OBSERVATION_HISTORY_CAP = 50


@dataclass(frozen=True, slots=True)
class ObservationChange:
    """One observation history row: the state the observation had before a consolidation changed it (its text and
    the facts it was built from), and when that change was written."""

    id: int
    observation_id: str
    previous_text: str
    previous_source_memory_ids: tuple[str, ...]
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class ObservationScope:
    """A distinct observation scope: the exact (sorted) tag set observations were consolidated under, with how many
    observations live in it; ``()`` is the untagged scope."""

    tags: tuple[str, ...]
    count: int


class ObservationStore(Protocol):
    """Every delete here is a memory write (the bank's stamp advances: models citing what went become stale); facts
    whose observations were deleted are sent back to consolidation (``consolidated_at`` cleared)."""

    def observation_history(self, bank_id: str, observation_id: str) -> list[ObservationChange]: ...
    def derived_observations(self, bank_id: str, memory_id: str) -> list[MemoryUnit]: ...
    def observation_scopes(self, bank_id: str, limit: int, offset: int) -> tuple[list[ObservationScope], int]: ...
    def delete_observations(self, bank_id: str, *, derived_from: str | None = None) -> int: ...
    def clear_memories(self, bank_id: str, fact_type: str | None = None) -> int: ...
