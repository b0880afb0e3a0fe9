"""Consolidation: fold facts into observations (the extractive engine), one bounded round at a time.

Spec: "Automatic Refresh" (observations are what ``refresh_after_consolidation`` follows); reference facts §6.
Observations are memory units with ``fact_type`` observation, ``source_memory_ids``, ``proof_count`` and the tags
of their scope. Observation scopes: ``combined`` (default: a fact's whole tag set is one scope) or ``per_tag``
(one scope per tag). The extractive consolidator merges near-duplicate facts inside one scope by embedding
similarity: a fact close to an existing observation of its scope strengthens it (one more source, proof + 1);
two or more close new facts found together form a new observation; a fact that repeats nothing is marked
consolidated without an observation (an observation needs a second witness). Source facts get
``consolidated_at``, which is bookkeeping and never a write for staleness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.store.base import Store

ObservationScopes = Literal["combined", "per_tag"]
DUPLICATE_THRESHOLD = 0.9  # cosine: same statement in other words, not merely the same topic
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
class _Draft:
    """An observation being built or grown in this round."""

    scope: tuple[str, ...]
    vector: np.ndarray
    sources: list[str]
    proof: int
    template: MemoryUnit | None = None  # the fact whose text a new observation takes
    existing_id: str | None = None


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


class ExtractiveConsolidator:
    """Near-duplicate merging by cosine similarity (no model)."""

    def __init__(self, threshold: float = DUPLICATE_THRESHOLD) -> None:
        self.threshold = threshold

    def plan(
        self,
        facts: Sequence[MemoryUnit],
        vectors: dict[str, np.ndarray],
        observations: Sequence[MemoryUnit],
        scopes: ObservationScopes,
    ) -> ConsolidationPlan:
        """Creates and updates for a batch (the extractive engine never rewrites or deletes observations)."""
        drafts: dict[tuple[str, ...], list[_Draft]] = {}
        for obs in observations:
            if obs.id in vectors:
                drafts.setdefault(obs.tags, []).append(
                    _Draft(obs.tags, vectors[obs.id], list(obs.source_memory_ids or ()), obs.proof_count or 1,
                           existing_id=obs.id)
                )  # fmt: skip
        singles: dict[tuple[str, ...], list[MemoryUnit]] = {}
        for fact in facts:
            vector = vectors.get(fact.id)
            if vector is None:
                continue
            for scope in scope_keys(fact.tags, scopes):
                pool = drafts.setdefault(scope, [])
                best = max(pool, key=lambda d: float(d.vector @ vector), default=None)
                if best is not None and float(best.vector @ vector) >= self.threshold:
                    if fact.id not in best.sources:
                        best.sources.append(fact.id)
                        best.proof += 1
                    continue
                twin = next(
                    (f for f in singles.get(scope, []) if float(vectors[f.id] @ vector) >= self.threshold), None
                )
                if twin is not None:
                    singles[scope].remove(twin)
                    pool.append(_Draft(scope, vectors[twin.id], [twin.id, fact.id], 2, template=twin))
                else:
                    singles.setdefault(scope, []).append(fact)
        creates: list[NewMemory] = []
        updates: list[tuple[str, tuple[str, ...], int]] = []
        for pool in drafts.values():
            for draft in pool:
                if draft.existing_id is not None:
                    original = next(o for o in observations if o.id == draft.existing_id)
                    if len(draft.sources) != len(original.source_memory_ids or ()):
                        updates.append((draft.existing_id, tuple(draft.sources), draft.proof))
                elif draft.template is not None:
                    t = draft.template
                    creates.append(
                        NewMemory(
                            text=t.text, fact_type="observation", embedding=draft.vector, tags=draft.scope,
                            context=t.context, metadata={}, document_id=None, chunk_id=None,
                            occurred_start=t.occurred_start, occurred_end=t.occurred_end, mentioned_at=t.mentioned_at,
                            source_memory_ids=tuple(draft.sources), proof_count=draft.proof,
                        )
                    )  # fmt: skip
        return ConsolidationPlan(creates=creates, updates=updates)


def detach_sources(
    store: Store, bank_id: str, observations: Sequence[MemoryUnit], requeued: set[str]
) -> tuple[dict[str, tuple[tuple[str, ...], int]], list[str]]:
    """Sources an observation can no longer rest on: facts deleted since, or sent back to consolidation by an edit
    (``requeued``: the unconsolidated facts of this round). Returns ``({observation id: (remaining source ids,
    proof count)}, [ids of observations left with no source])``; the consolidator may attach an edited fact
    again if it still says the same thing."""
    source_ids = sorted({s for o in observations for s in (o.source_memory_ids or ())})
    if not source_ids:
        return {}, []
    alive = {m.id for m in store.get_memories(bank_id, source_ids)}
    gone = (set(source_ids) - alive) | (set(source_ids) & requeued)
    trimmed: dict[str, tuple[tuple[str, ...], int]] = {}
    emptied: list[str] = []
    for obs in observations:
        sources = obs.source_memory_ids or ()
        lost = [s for s in sources if s in gone]
        if not lost:
            continue
        remaining = tuple(s for s in sources if s not in gone)
        if remaining:
            trimmed[obs.id] = (remaining, max(1, (obs.proof_count or len(sources)) - len(lost)))
        else:
            emptied.append(obs.id)
    return trimmed, emptied


def consolidate_round(
    store: Store,
    bank_id: str,
    *,
    consolidator: Consolidator,
    scopes: ObservationScopes = "combined",
    limit: int = ROUND_SIZE,
) -> ConsolidationRound:
    """Consolidate up to ``limit`` pending facts of the bank in one transaction; ``more`` says whether others wait.

    The same transaction first detaches sources that were deleted or edited (:func:`detach_sources`): an
    observation left with no source is deleted, one that lost some is updated (both are memory writes, so models
    reading or citing it go stale)."""
    facts = store.unconsolidated_facts(bank_id, limit + 1)
    result = ConsolidationRound(more=len(facts) > limit)
    facts = facts[:limit]
    stored = store.list_observations(bank_id)
    trimmed, emptied = detach_sources(store, bank_id, stored, {f.id for f in facts})
    if not facts and not trimmed and not emptied:
        return result
    observations = [
        replace(o, source_memory_ids=trimmed[o.id][0], proof_count=trimmed[o.id][1]) if o.id in trimmed else o
        for o in stored
        if o.id not in emptied
    ]
    plan = ConsolidationPlan()
    if facts:
        vectors = store.memory_vectors(bank_id, [f.id for f in facts] + [o.id for o in observations])
        plan = consolidator.plan(facts, vectors, observations, scopes)
    planned = {u[0] for u in plan.updates} | set(plan.deletes)
    updates = [*plan.updates, *((i, *trimmed[i]) for i in trimmed if i not in planned)]
    deletes = [*plan.deletes, *emptied]
    store.write_consolidation(
        bank_id,
        creates=plan.creates,
        updates=updates,
        consolidated_ids=[f.id for f in facts],
        rewrites=plan.rewrites,
        deletes=deletes,
    )
    changed = {u[0] for u in updates} | {r[0] for r in plan.rewrites} | set(deletes)
    result.created, result.consolidated = len(plan.creates), len(facts)
    result.updated = len(changed)
    result.scopes = {tuple(c.tags) for c in plan.creates} | {o.tags for o in stored if o.id in changed}
    return result
