"""Consolidation's reads and writes: pending facts, observations, neighbours and the round's write."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.domain.scope import MemoryFilter


class ConsolidationStore(Protocol):
    """Neighbour searches take ``(vector, scope)`` probes and return, per probe, ``(memory id, score)`` pairs."""

    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]: ...
    def list_observations(self, bank_id: str) -> list[MemoryUnit]: ...
    def observations_losing_sources(self, bank_id: str, requeued: Sequence[str]) -> list[MemoryUnit]: ...
    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...
    def consolidated_neighbours(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]: ...
    def nearest_in(
        self, bank_id: str, probes: Sequence[tuple[npt.NDArray[np.float32], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]: ...
    def write_consolidation(
        self,
        bank_id: str,
        *,
        creates: Sequence[NewMemory],
        updates: Sequence[tuple[str, tuple[str, ...], int]],
        consolidated_ids: Sequence[str],
        rewrites: Sequence[tuple[str, str, npt.NDArray[np.float32]]] = (),
        deletes: Sequence[str] = (),
        successors: Sequence[tuple[str, int]] = (),
    ) -> list[str]: ...
