"""Consolidation: fold facts into observations (the extractive engine), one bounded round at a time.

Spec: "Automatic Refresh" (observations are what ``refresh_after_consolidation`` follows); reference facts §6.
Observations are memory units with ``fact_type`` observation, ``source_memory_ids``, ``proof_count`` and the tags
of their scope. Observation scopes: ``combined`` (default: a fact's whole tag set is one scope) or ``per_tag``
(one scope per tag). A round takes up to :data:`~mindbank.engine.consolidate.plan.ROUND_SIZE` pending facts and
hands the consolidator what it compares them with, all read through indexes (consolidation stays incremental):
the observations nearest each fact in its scopes (:func:`nearby_observations`), its earlier consolidated
neighbours (:func:`earlier_neighbours`, so facts that arrive one retain at a time still meet), the
observations whose sources were deleted or edited since (:func:`detach_sources`), and the other speaker's turn
before each of those facts (:func:`turns_before`), which decides what a reply states. What the extractive
consolidator makes of them: ``engine/consolidate/extractive.py``. Source facts get ``consolidated_at``, which is
bookkeeping and never a write for staleness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mindbank.domain.records import FactType, MemoryUnit
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.text import speaker_prefix
from mindbank.engine.consolidate.plan import (
    NEARBY_OBSERVATIONS,
    NEIGHBOUR_FLOOR,
    NEIGHBOURS,
    ROUND_SIZE,
    ConsolidationRound,
    Consolidator,
    ObservationScopes,
    scope_filter,
    scope_keys,
)
from mindbank.engine.synthesis.exchange import TURN_WINDOW_S, previous_turns
from mindbank.store.base import Store

# moments a neighbour read asks for at once: SQLite spells each as two parts of one compound SELECT (at most 500)
TURN_ANCHORS = 100


def _probes(
    facts: Sequence[MemoryUnit],
    vectors: dict[str, np.ndarray],
    scopes: ObservationScopes,
    fact_types: tuple[FactType, ...] | None = None,
) -> tuple[list[str], list[tuple[np.ndarray, MemoryFilter]]]:
    """``(fact id, (its vector, a scope's filter))`` per fact with a vector and observation scope, as two lists."""
    owners: list[str] = []
    probes: list[tuple[np.ndarray, MemoryFilter]] = []
    for fact in facts:
        if fact.id in vectors:
            for scope in scope_keys(fact.tags, scopes):
                owners.append(fact.id)
                probes.append((vectors[fact.id], replace(scope_filter(scope, scopes), fact_types=fact_types)))
    return owners, probes


def earlier_neighbours(
    store: Store,
    bank_id: str,
    facts: Sequence[MemoryUnit],
    vectors: dict[str, np.ndarray],
    scopes: ObservationScopes,
    *,
    k: int = NEIGHBOURS,
    floor: float = NEIGHBOUR_FLOOR,
) -> dict[str, list[tuple[MemoryUnit, float]]]:
    """Per pending fact: the facts of its observation scopes that consolidation has already seen, among its ``k``
    nearest per scope in the vector index, with cosine at least ``floor``, nearest first. Adds their vectors to
    ``vectors``. One store call for the round (``Store.consolidated_neighbours``), one read of the facts found."""
    owners, probes = _probes(facts, vectors, scopes)
    if not probes:
        return {}
    found = store.consolidated_neighbours(bank_id, probes, k)
    wanted = sorted({i for hits in found for i, score in hits if score >= floor})
    units = {m.id: m for m in store.get_memories(bank_id, wanted)} if wanted else {}
    vectors.update(store.memory_vectors(bank_id, [i for i in units if i not in vectors]))
    out: dict[str, list[tuple[MemoryUnit, float]]] = {}
    for fact_id, hits in zip(owners, found, strict=True):
        kept = out.setdefault(fact_id, [])
        for memory_id, score in hits:
            usable = score >= floor and memory_id in units and memory_id in vectors and memory_id != fact_id
            if usable and all(m.id != memory_id for m, _ in kept):
                kept.append((units[memory_id], score))
        kept.sort(key=lambda hit: -hit[1])
    return {f: hits for f, hits in out.items() if hits}


def turns_before(store: Store, bank_id: str, units: Sequence[MemoryUnit]) -> dict[str, str]:
    """Memory id -> the text of the other speaker's turn just before it (``exchange.previous_turns``), for each of
    ``units`` that is a conversation turn with one. The turns are read with ``Store.memory_neighbours`` (the facts
    said at the nearest moment before and after each distinct ``(context, moment)``, observations left out: they
    carry their facts' contexts and dates), at most :data:`TURN_ANCHORS` moments a call: one call for a round of
    turns retained one at a time."""
    anchors = sorted(
        {(u.context, when) for u in units if u.context and speaker_prefix(u.text) and (when := u.moment) is not None}
    )
    if not anchors:
        return {}
    facts = MemoryFilter(fact_types=("world", "experience"))
    pool: list[MemoryUnit] = []
    for start in range(0, len(anchors), TURN_ANCHORS):
        pool.extend(store.memory_neighbours(bank_id, anchors[start : start + TURN_ANCHORS], TURN_WINDOW_S, facts))
    return previous_turns(units, pool)


def nearby_observations(
    store: Store,
    bank_id: str,
    facts: Sequence[MemoryUnit],
    vectors: dict[str, np.ndarray],
    scopes: ObservationScopes,
    *,
    k: int = NEARBY_OBSERVATIONS,
) -> list[MemoryUnit]:
    """The observations a round's facts are compared with: per fact and observation scope, the ``k`` nearest
    observations of that scope in the vector index (``Store.nearest_in``, one call), read in one call."""
    _, probes = _probes(facts, vectors, scopes, fact_types=("observation",))
    wanted = {memory_id for hits in store.nearest_in(bank_id, probes, k) for memory_id, _ in hits}
    return store.get_memories(bank_id, sorted(wanted)) if wanted else []


def detach_sources(
    store: Store, bank_id: str, observations: Sequence[MemoryUnit], requeued: set[str]
) -> tuple[dict[str, tuple[tuple[str, ...], int]], list[str], dict[str, MemoryUnit]]:
    """Sources an observation can no longer rest on: facts deleted since, or sent back to consolidation by an edit
    (``requeued``: the unconsolidated facts of this round). Returns ``({observation id: (remaining source ids,
    proof count)}, [ids of observations left with no source], {id: source fact still there})``; the consolidator
    may attach an edited fact again if it still says the same thing."""
    source_ids = sorted({s for o in observations for s in (o.source_memory_ids or ())})
    if not source_ids:
        return {}, [], {}
    units = {m.id: m for m in store.get_memories(bank_id, source_ids)}
    alive = set(units)
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
    return trimmed, emptied, units


def consolidate_round(
    store: Store,
    bank_id: str,
    *,
    consolidator: Consolidator,
    scopes: ObservationScopes = "combined",
    limit: int = ROUND_SIZE,
) -> ConsolidationRound:
    """Consolidate up to ``limit`` pending facts of the bank, written in one transaction; ``more`` says whether
    others wait.

    The round reads only what it needs, however many observations the bank holds: the observations nearest each
    pending fact in its scopes (:func:`nearby_observations`, through the vector index) and those citing a source
    that was deleted or edited (``Store.observations_losing_sources``). It detaches such sources
    (:func:`detach_sources`): an observation left with no source is deleted, one that lost some is updated or
    retold by the consolidator (memory writes, so models reading or citing it go stale)."""
    facts = store.unconsolidated_facts(bank_id, limit + 1)
    result = ConsolidationRound(more=len(facts) > limit)
    facts = facts[:limit]
    losing = store.observations_losing_sources(bank_id, [f.id for f in facts])
    trimmed, emptied, units = detach_sources(store, bank_id, losing, {f.id for f in facts})
    if not facts and not trimmed and not emptied:
        return result
    vectors = store.memory_vectors(bank_id, [f.id for f in facts])
    stored = {o.id: o for o in [*nearby_observations(store, bank_id, facts, vectors, scopes), *losing]}
    observations = [
        replace(o, source_memory_ids=trimmed[o.id][0], proof_count=trimmed[o.id][1]) if o.id in trimmed else o
        for o in stored.values()
        if o.id not in emptied
    ]
    # what each observation that lost sources still rests on, for a consolidator that retells it
    lost = {i: [units[s] for s in trimmed[i][0] if s in units] for i in trimmed}
    kept = sorted({u.id for us in lost.values() for u in us})
    vectors.update(store.memory_vectors(bank_id, [o.id for o in observations] + kept))
    neighbours = earlier_neighbours(store, bank_id, facts, vectors, scopes) if facts else {}
    # each fact is read with the turn before it (reactions and answers), and so are the earlier facts it meets
    read = {m.id: m for m in [*facts, *(n for hits in neighbours.values() for n, _ in hits), *units.values()]}
    previous = turns_before(store, bank_id, list(read.values()))
    plan = consolidator.plan(facts, vectors, observations, scopes, neighbours=neighbours, lost=lost, previous=previous)
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
        successors=plan.successors,
    )
    changed = {u[0] for u in updates} | {r[0] for r in plan.rewrites} | set(deletes)
    result.created, result.consolidated = len(plan.creates), len(facts)
    result.updated = len(changed)
    result.scopes = {tuple(c.tags) for c in plan.creates} | {o.tags for o in stored.values() if o.id in changed}
    return result
