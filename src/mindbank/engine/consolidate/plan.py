"""Consolidation's shared shapes: the :class:`Consolidator` port, the plan a consolidator returns, a round's result,
and the observation scopes a fact belongs to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory

ObservationScopes = Literal["combined", "per_tag"]
ROUND_SIZE = 200


@dataclass(slots=True)
class ConsolidationRound:
    """What one round did: observations created/updated, facts consolidated, scopes touched, whether more wait."""

    created: int = 0
    updated: int = 0
    consolidated: int = 0
    scopes: set[tuple[str, ...]] = field(default_factory=set)
    more: bool = False


@dataclass(slots=True)
class ConsolidationPlan:
    """What a consolidator decided for one batch: new observations; updates ``(observation id, all source ids,
    proof count)``; rewrites ``(observation id, new text, its embedding)``; observation ids to delete."""

    creates: list[NewMemory] = field(default_factory=list)
    updates: list[tuple[str, tuple[str, ...], int]] = field(default_factory=list)
    rewrites: list[tuple[str, str, np.ndarray]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)


class Consolidator(Protocol):
    """Turns a batch of facts into a :class:`ConsolidationPlan` against the existing observations."""

    def plan(
        self,
        facts: Sequence[MemoryUnit],
        vectors: dict[str, np.ndarray],
        observations: Sequence[MemoryUnit],
        scopes: ObservationScopes,
    ) -> ConsolidationPlan: ...


def scope_keys(tags: Sequence[str], scopes: ObservationScopes) -> list[tuple[str, ...]]:
    """The observation scopes a fact with ``tags`` belongs to."""
    if scopes == "per_tag" and tags:
        return [(t,) for t in sorted(set(tags))]
    return [tuple(sorted(set(tags)))]
