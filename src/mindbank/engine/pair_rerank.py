"""Second stage of hybrid recall: rerank the best candidates by the turn pair, read from the stored vectors.

In a conversation the evidence is often a short turn that only makes sense with the one next to it: "They were
awestruck and humbled." answers "How did the kids react at the memorial?", and "Is that your third one?" is
answered by the turn after it. Neither turn alone is close to the question; the pair is. For each of the ``top``
best candidates (after fusion and the who-and-when, context and neighbour passes), the pair cosine is the largest
of the query's cosine with the memory's own vector and with the normalised sum of its vector and the vector of the
memory said at the nearest moment before (after) it in the same context within the neighbour window. The
candidate's score gains ``weight * pair cosine`` (``0.6`` when on; off by default). Only stored vectors are read
(one neighbour lookup and one vector read for all candidates): nothing is embedded at query time. A candidate
without a stored vector keeps its score; one without a context or a moment has no pair and gains by its own
cosine, like every other. Tuned on the LoCoMo tuning conversations and measured by ablation (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import MemoryUnit
from mindbank.domain.scope import MemoryFilter
from mindbank.engine.neighbours import best_first, nearest_on_side
from mindbank.store.base import Store

# added to a candidate's score per unit of its pair cosine; 0: off, the default. 0.6 was best on the tuning
# conversations (hit@10 0.832 -> 0.851) but did not carry over to the report ones and cost hit@1 (docs/benchmarks.md)
PAIR_WEIGHT = 0.0
PAIR_WEIGHT_TUNED = 0.6
PAIR_TOP = 30  # the stage reranks this many best candidates


def pair_rerank(
    store: Store,
    bank_id: str,
    ranked: Sequence[tuple[str, float]],
    memories: Mapping[str, MemoryUnit],
    query: npt.NDArray[np.float32],
    flt: MemoryFilter,
    *,
    top: int = PAIR_TOP,
    weight: float,
    window_s: float,
) -> list[tuple[str, float]]:
    """Add ``weight * pair cosine`` (module docstring) to each of the ``top`` best of ``ranked`` (``(id, score)``
    best first); best first. ``query``: the query's vector; ``flt``: the request's filter, which a pair partner
    must pass too. ``weight`` or ``top`` 0 returns ``ranked`` unchanged."""
    if weight <= 0 or top <= 0 or not ranked:
        return list(ranked)
    head = [memory_id for memory_id, _ in ranked[:top]]
    anchors: dict[str, tuple[str, datetime]] = {}
    for memory_id in head:
        memory = memories.get(memory_id)
        when = None if memory is None else memory.moment
        if memory is not None and memory.context is not None and when is not None:
            anchors[memory_id] = (memory.context, when)
    pool = store.memory_neighbours(bank_id, list(dict.fromkeys(anchors.values())), window_s, flt) if anchors else []
    partners: dict[str, list[str]] = {}
    for memory_id, (context, when) in anchors.items():
        sides = (nearest_on_side(pool, context, when, before=before) for before in (True, False))
        partners[memory_id] = [m.id for m in sides if m is not None]
    wanted = dict.fromkeys([*head, *(i for ids in partners.values() for i in ids)])
    vectors = store.memory_vectors(bank_id, list(wanted))
    unit = query / (float(np.linalg.norm(query)) or 1.0)
    scores = dict(ranked)
    for memory_id in head:
        own = vectors.get(memory_id)
        if own is None:
            continue
        best = _cosine(own, unit)
        for partner in partners.get(memory_id, ()):
            other = vectors.get(partner)
            if other is not None:
                best = max(best, _cosine(own + other, unit))
        scores[memory_id] += weight * best
    return best_first(scores)


def _cosine(vector: npt.NDArray[np.float32], unit: npt.NDArray[np.float32]) -> float:
    """Cosine of ``vector`` with the unit vector ``unit`` (0 for a zero vector)."""
    norm = float(np.linalg.norm(vector))
    return float(vector @ unit) / norm if norm else 0.0
