"""Two orders of one candidate pool: a precise one places the first results, a wider one orders the rest.

Hybrid recall fuses the cosine on its own scale with BM25 divided by the query's best BM25 score. Cosines of
MiniLM sit in a narrow band (about 0.2 to 0.7), while divided BM25 spans 0 to 1, so a memory that only the dense
retriever found, with no query word in it, scores at most about half of what a lexical match scores and often
falls below rank 10 even when it is the dense retriever's first result (a turn that paraphrases the question). The
*wide* fusion divides the cosine by the query's best cosine too and raises divided BM25 to a power above 1, so a
weak lexical match counts for less than a strong paraphrase. On the tuning conversations that finds more evidence
in the top 10 but loses some first results that the precise fusion had right (docs/benchmarks.md), so the precise
order keeps the first ``head`` places and the wide order fills the places after them: each result below the head
is the best of the wide order not already placed.

Scores stay on the precise fusion's scale, the one every reader of a score knows (a floor on the final score, a
briefing's relevance relative to the best fact): the result at each place gets the score the precise order has at
that place. The list is best first, its best score is the precise best, and a relative floor keeps as many results
as before; the wide order only decides which memories hold the places after the head.
"""

from __future__ import annotations

from collections.abc import Sequence

HEAD = 1  # how many first results the precise fusion places (the wide order fills the rest)
TAIL_POWER = 1.5  # the wide fusion raises divided BM25 to this power (the precise fusion: 1)


def head_then_tail(
    precise: Sequence[tuple[str, float]], wide: Sequence[tuple[str, float]], *, head: int
) -> list[tuple[str, float]]:
    """The first ``head`` ids of ``precise``, then every other id in ``wide`` order, then any id only ``precise``
    has (in its order); ``(id, score)`` pairs, best first. The score at each place is the score ``precise`` has at
    that place (``precise`` best first; a place beyond its length takes its last score). ``head`` 0 orders every
    place by ``wide``, still scored by ``precise``'s places."""
    order = [memory_id for memory_id, _ in precise[:head]]
    placed = set(order)
    for memory_id, _ in (*wide, *precise[head:]):
        if memory_id not in placed:
            placed.add(memory_id)
            order.append(memory_id)
    scores = [score for _, score in precise]
    last = scores[-1] if scores else 0.0
    return [(memory_id, scores[n] if n < len(scores) else last) for n, memory_id in enumerate(order)]
