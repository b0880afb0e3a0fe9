"""Conversational neighbours in recall: the turns said just before and after a hit join the candidates, and a turn
scores at least a share of its neighbours' scores (the reply to a matching question often shares none of its words).

Both passes are described in :mod:`mindbank.engine.recall`, which runs them between fusion and the final trim.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from datetime import datetime

from mindbank.domain.records import MemoryUnit
from mindbank.domain.scope import MemoryFilter
from mindbank.store.base import Store

NEIGHBOUR_PREV = 0.8  # a memory scores at least this share of the memory said just before it (answer after question)
NEIGHBOUR_NEXT = 0.6  # ... and this share of the one said just after it (a turn whose follow-up spells it out)
NEIGHBOUR_WINDOW_S = 3600.0  # memories further apart in time than this (seconds) are never neighbours
# the preceding share for a memory that has a context (None: NEIGHBOUR_PREV). There the lexical arm already weighs
# the text said before it, and 0 gave LoCoMo recall its open-domain hit@5 back, but cost the knowledge pages (issue
# 21's synthesizers rank with this recall) 7 of 210 questions, so the lift stays on everywhere (docs/benchmarks.md)
NEIGHBOUR_PREV_IN_CONTEXT: float | None = None


def best_first(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """``scores`` as ``(id, score)`` pairs, best first. Ties are broken by id so the order is deterministic."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def expand_neighbours(
    store: Store,
    bank_id: str,
    ranked: Sequence[tuple[str, float]],
    memories: dict[str, MemoryUnit],
    flt: MemoryFilter,
    *,
    top: int,
    window_s: float,
) -> list[tuple[str, float]]:
    """Add to the candidates the memories said just before and just after each of the ``top`` best of ``ranked``
    (same context, nearest moment on each side, at most ``window_s`` seconds away, passing ``flt``); best first.

    A newcomer enters just below the lowest score in ``ranked`` and is added to ``memories`` (read from ``store``):
    it matched neither retriever, so only the neighbour pass can lift it, by borrowing a share of the hit beside it,
    and it never ties with a candidate that did match.
    Without this, a turn that answers the matching turn ("What did you paint?" -> "A sunset over the lake") can be
    lifted only when a retriever happened to return it too. Candidates without a context or a moment anchor
    nothing. One store read (``Store.memory_neighbours``, whole rows).
    """
    if top <= 0 or not ranked:
        return list(ranked)
    anchors: list[tuple[str, datetime]] = []
    for memory_id, _ in ranked[:top]:
        memory = memories.get(memory_id)
        when = None if memory is None else memory.moment
        if memory is not None and memory.context is not None and when is not None:
            anchors.append((memory.context, when))
    scores = dict(ranked)
    new = [m for m in store.memory_neighbours(bank_id, anchors, window_s, flt) if m.id not in scores]
    if not new:
        return list(ranked)
    # below every candidate, even when there is one, by a margin rather than the next float: a boost later added
    # to both (the when and period boosts add a constant) must not round the two into a tie broken by id
    lowest = min(scores.values())
    floor = lowest - max(abs(lowest) * 1e-3, 1e-9)
    for memory in new:
        memories[memory.id] = memory
        scores[memory.id] = floor
    return best_first(scores)


def neighbour_boost(
    fused: Sequence[tuple[str, float]],
    memories: Mapping[str, MemoryUnit],
    *,
    prev: float = NEIGHBOUR_PREV,
    next_: float = NEIGHBOUR_NEXT,
    window_s: float = NEIGHBOUR_WINDOW_S,
    prev_in_context: float | None = None,
) -> list[tuple[str, float]]:
    """Raise each candidate to at least ``prev`` times the best fused score at the nearest earlier moment and
    ``next_`` times the best at the nearest later moment. Best first.

    ``new(i) = max(f(i), prev * f(moment before i), next_ * f(moment after i))``. Moments are the distinct times
    (``occurred_start``, else ``mentioned_at``) of the candidates in ``fused`` that share the memory's ``context``.
    A moment more than ``window_s`` seconds away does not count. Facts with the same time, such as the pieces of
    one long turn, are one moment and lend nothing to each other. Candidates with no time, or missing from
    ``memories``, keep their own score. Scores are read from ``fused`` as given, before any boost, so a boost never
    chains along a conversation. With shares below 1, a top candidate with a positive score keeps its place.

    ``prev_in_context`` (None: ``prev``) replaces ``prev`` for a memory that has a context, where the lexical arm
    already weighs the text said before it; ``prev`` then lifts the memories retained without one.
    """
    base = dict(fused)
    if prev == 0 and next_ == 0 and not prev_in_context:
        return best_first(base)
    # context -> {time -> best fused score at that time}
    moments: dict[str | None, dict[datetime, float]] = {}
    for memory_id, score in base.items():
        memory = memories.get(memory_id)
        when = None if memory is None else memory.moment
        if memory is None or when is None:
            continue
        slots = moments.setdefault(memory.context, {})
        slots[when] = max(score, slots.get(when, score))
    timelines = {ctx: sorted(slots) for ctx, slots in moments.items()}
    boosted = dict(base)
    for memory_id, score in base.items():
        memory = memories.get(memory_id)
        when = None if memory is None else memory.moment
        if memory is None or when is None:
            continue
        times, slots = timelines[memory.context], moments[memory.context]
        at = bisect.bisect_left(times, when)  # times[at] == when: the memory's own moment
        share = prev if memory.context is None or prev_in_context is None else prev_in_context
        if at > 0 and (when - times[at - 1]).total_seconds() <= window_s:
            score = max(score, share * slots[times[at - 1]])
        if at + 1 < len(times) and (times[at + 1] - when).total_seconds() <= window_s:
            score = max(score, next_ * slots[times[at + 1]])
        boosted[memory_id] = score
    return best_first(boosted)


def nearest_on_side(pool: Sequence[MemoryUnit], context: str, when: datetime, *, before: bool) -> MemoryUnit | None:
    """Of ``pool``, a memory in ``context`` at the nearest moment strictly before (``before``) or after ``when``;
    None when there is none. Of several at that moment (the pieces of one long turn) the first in ``pool`` is kept.
    ``pool`` is typically :meth:`Store.memory_neighbours` of the anchor, which holds the nearest memories on both
    sides of every anchor asked, so the nearest among them is the nearest in the bank."""
    best: tuple[datetime, MemoryUnit] | None = None
    for memory in pool:
        moment = memory.moment
        if memory.context != context or moment is None or moment == when or (moment < when) != before:
            continue
        if best is None or (moment > best[0] if before else moment < best[0]):
            best = (moment, memory)
    return None if best is None else best[1]
