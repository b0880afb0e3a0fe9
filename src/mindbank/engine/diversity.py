"""Maximal marginal relevance (MMR) over recall's ranking: a near-duplicate of a result already taken gives way.

Agents retain the same thing more than once (a fact restated in two sessions, a turn repeated by the other
speaker, an observation and the facts it rests on), and a token budget filled with one fact's copies holds less.
Greedy MMR (Carbonell and Goldstein, 1998) takes, at each step, the candidate with the highest
``score - lam * max(similarity to every result already taken)``. Similarity is the Jaccard overlap of the two
texts' content words (:func:`content_words`): it needs nothing beyond the texts recall has already loaded, so it
behaves the same on every store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mindbank.domain.records import MemoryUnit
from mindbank.domain.text import keyword_terms, strip_speaker


def content_words(text: str) -> frozenset[str]:
    """The content words of ``text`` without its ``Name: `` speaker prefix (:func:`keyword_terms`: lowercased, no
    stopwords). The prefix is left out because two turns of one speaker share it whatever they say."""
    return frozenset(keyword_terms(strip_speaker(text)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a ∩ b| / |a ∪ b|`` in [0, 1]; 0 when both are empty (two texts with no content word are not alike)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mmr(
    ranked: Sequence[tuple[str, float]], memories: Mapping[str, MemoryUnit], *, lam: float, top: int
) -> list[tuple[str, float]]:
    """Re-rank the ``top`` best of ``ranked`` (``(id, score)`` best first) by greedy MMR; best first.

    Each of the ``top`` gets the score ``score - lam * max Jaccard(its content words, those of each candidate taken
    before it)``, its value at the step greedy MMR took it. These values never rise from one step to the next
    (a candidate's value only falls as results are taken), so the result stays sorted by score and a floor on the
    final score still cuts it in one place. A candidate without near-duplicates above it keeps its score exactly;
    a penalised one may fall below candidates past ``top``, which keep their own scores. ``lam`` 0 or ``top`` below
    2 returns ``ranked`` unchanged; candidates missing from ``memories`` count as alike to nothing.
    """
    if lam <= 0 or top < 2 or len(ranked) < 2:
        return list(ranked)
    head, tail = list(ranked[:top]), list(ranked[top:])
    words = {i: content_words(memories[i].text) if i in memories else frozenset() for i, _ in head}
    penalty = dict.fromkeys(words, 0.0)  # max similarity to any candidate taken so far
    remaining = dict(head)
    position = {memory_id: n for n, (memory_id, _) in enumerate(head)}  # ties go to the better-ranked
    taken: list[tuple[str, float]] = []
    while remaining:
        best = max(remaining, key=lambda i: (remaining[i] - lam * penalty[i], -position[i]))
        taken.append((best, remaining.pop(best) - lam * penalty[best]))
        for other in remaining:
            penalty[other] = max(penalty[other], jaccard(words[best], words[other]))
    merged = taken + tail
    merged.sort(key=lambda kv: -kv[1])  # stable: MMR's order among the head, the ranking's among the rest
    return merged
