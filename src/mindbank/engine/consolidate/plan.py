"""Consolidation's shared shapes: the :class:`Consolidator` port, the plan a consolidator returns, a round's result,
the observation scopes a fact belongs to, and the earlier facts a round offers a consolidator as neighbours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.domain.scope import MemoryFilter

ObservationScopes = Literal["combined", "per_tag"]
ROUND_SIZE = 200
# Earlier facts a new fact is compared with (sequential consolidation): its NEIGHBOURS nearest facts of the same
# scope that consolidation has already seen, from the vector index, kept when their cosine reaches NEIGHBOUR_FLOOR
# (the extractive consolidator then asks its own, higher, duplicate threshold; the LLM one reads them as context).
NEIGHBOURS = 4
NEIGHBOUR_FLOOR = 0.8
# observations of its scope a new fact is compared with: the nearest in the vector index
NEARBY_OBSERVATIONS = 8
# per new fact: earlier facts of its scopes with their cosine, nearest first
Neighbours = Mapping[str, Sequence[tuple[MemoryUnit, float]]]


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
    proof count)``; rewrites ``(observation id, new text, its embedding)``; observation ids to delete; and
    ``successors`` ``(deleted observation id, index in creates)``: an observation restated as a new one, whose
    history the new one carries on."""

    creates: list[NewMemory] = field(default_factory=list)
    updates: list[tuple[str, tuple[str, ...], int]] = field(default_factory=list)
    rewrites: list[tuple[str, str, np.ndarray]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    successors: list[tuple[str, int]] = field(default_factory=list)


class Consolidator(Protocol):
    """Turns a batch of facts into a :class:`ConsolidationPlan` against the existing observations. ``lost``: per
    observation that lost sources this round (deleted or edited facts), the source facts it still has, for a
    consolidator that retells such an observation from what remains. ``previous``: memory id -> the text of the
    other speaker's turn just before that memory (``synthesis/exchange.py``), for the round's facts, neighbours
    and remaining sources that are conversation turns with one."""

    def plan(
        self,
        facts: Sequence[MemoryUnit],
        vectors: dict[str, np.ndarray],
        observations: Sequence[MemoryUnit],
        scopes: ObservationScopes,
        neighbours: Neighbours | None = None,
        lost: Mapping[str, Sequence[MemoryUnit]] | None = None,
        previous: Mapping[str, str] | None = None,
    ) -> ConsolidationPlan: ...


def scope_keys(tags: Sequence[str], scopes: ObservationScopes) -> list[tuple[str, ...]]:
    """The observation scopes a fact with ``tags`` belongs to."""
    if scopes == "per_tag" and tags:
        return [(t,) for t in sorted(set(tags))]
    return [tuple(sorted(set(tags)))]


def scope_filter(scope: tuple[str, ...], scopes: ObservationScopes) -> MemoryFilter:
    """The memories of one observation scope: exactly its tags (``combined``; untagged for ``()``), or carrying
    its one tag (``per_tag``)."""
    if scopes == "per_tag" and scope:
        return MemoryFilter(tags=scope, tags_match="all_strict")
    return MemoryFilter(tags=scope, tags_match="exact")


def in_scope(memory: MemoryUnit, scope: tuple[str, ...], scopes: ObservationScopes) -> bool:
    """Whether ``memory`` belongs to observation scope ``scope``."""
    return scope in scope_keys(memory.tags, scopes)
