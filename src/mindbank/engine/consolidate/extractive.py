"""The extractive consolidator: near-duplicate facts merged into observations by embedding similarity (no model).

A fact close to an existing observation of its scope strengthens it (one more source, proof + 1); two or more close
new facts found together form a new observation; a fact close to an earlier, already consolidated fact of its scope
(the round's neighbours) joins the observation that fact supports, or forms one with it (the earlier fact's text,
it was said first); a fact that repeats nothing is marked consolidated without an observation (an observation needs
a second witness).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.engine.consolidate.plan import ConsolidationPlan, Neighbours, ObservationScopes, in_scope, scope_keys

DUPLICATE_THRESHOLD = 0.9  # cosine: same statement in other words, not merely the same topic


@dataclass(slots=True)
class _Draft:
    """An observation being built or grown in this round."""

    scope: tuple[str, ...]
    vector: np.ndarray
    sources: list[str]
    proof: int
    template: MemoryUnit | None = None  # the fact whose text a new observation takes
    existing_id: str | None = None


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
        neighbours: Neighbours | None = None,
    ) -> ConsolidationPlan:
        """Creates and updates for a batch (the extractive engine never rewrites or deletes observations);
        ``neighbours``: per fact, earlier consolidated facts (their vectors in ``vectors``)."""
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
                elif not self._join_earlier(fact, scope, pool, (neighbours or {}).get(fact.id, ()), vectors, scopes):
                    singles.setdefault(scope, []).append(fact)
        return self._plan(drafts, observations)

    def _join_earlier(
        self,
        fact: MemoryUnit,
        scope: tuple[str, ...],
        pool: list[_Draft],
        earlier: Sequence[tuple[MemoryUnit, float]],
        vectors: dict[str, np.ndarray],
        scopes: ObservationScopes,
    ) -> bool:
        """Attach ``fact`` through its nearest earlier twin of ``scope`` (cosine at the threshold): to the draft
        or observation the twin supports, else to a new draft with the twin. False when it has none."""
        for twin, score in earlier:
            if score < self.threshold or twin.id not in vectors or not in_scope(twin, scope, scopes):
                continue
            owner = next((d for d in pool if twin.id in d.sources), None)
            if owner is None:
                pool.append(_Draft(scope, vectors[twin.id], [twin.id, fact.id], 2, template=twin))
            elif fact.id not in owner.sources:
                owner.sources.append(fact.id)
                owner.proof += 1
            return True
        return False

    @staticmethod
    def _plan(drafts: dict[tuple[str, ...], list[_Draft]], observations: Sequence[MemoryUnit]) -> ConsolidationPlan:
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
