"""Hybrid recall: dense (MiniLM cosine) + BM25 (FTS5), fused by reciprocal rank, trimmed to a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from mindbank.domain.document import count_tokens
from mindbank.domain.records import ScoredMemory
from mindbank.domain.text import keyword_terms
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import MemoryFilter, Store

Retriever = Literal["hybrid", "dense", "bm25"]

RRF_K = 60  # the usual reciprocal-rank-fusion constant: damps the head so both lists contribute


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """What to recall: ``query`` text, a memory filter, a token budget over fact texts and a result cap."""

    query: str
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    max_tokens: int = 4096
    limit: int | None = None
    retriever: Retriever = "hybrid"


def fuse(
    rankings: Sequence[Sequence[tuple[str, float]]], weights: Sequence[float], k: int = RRF_K
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: ``score(id) = Σ w_i / (k + rank_i(id))`` with 1-based ranks; best first."""
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (memory_id, _) in enumerate(ranking, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def recall(
    store: Store, embedder: Embedder, bank_id: str, request: RecallRequest, *, candidates: int = 60
) -> list[ScoredMemory]:
    """Run ``request`` against the bank; results best first, within ``max_tokens`` (fact text only).

    The first result is always returned even if it alone exceeds the budget, so a small budget never yields
    nothing when something matched.
    """
    dense: list[tuple[str, float]] = []
    sparse: list[tuple[str, float]] = []
    if request.retriever in ("hybrid", "dense"):
        vector = embedder.embed([request.query])[0]
        dense = store.vector_search(bank_id, vector, candidates, request.filter)
    if request.retriever in ("hybrid", "bm25"):
        sparse = store.keyword_search(bank_id, keyword_terms(request.query), candidates, request.filter)
    if request.retriever == "dense":
        fused = dense
    elif request.retriever == "bm25":
        fused = sparse
    else:
        fused = fuse([dense, sparse], [1.0, 1.0])
    semantic = dict(dense)
    keyword = dict(sparse)
    memories = {m.id: m for m in store.get_memories(bank_id, [i for i, _ in fused])}
    results: list[ScoredMemory] = []
    used = 0
    for memory_id, score in fused:
        memory = memories.get(memory_id)
        if memory is None:
            continue
        cost = count_tokens(memory.text)
        if results and used + cost > request.max_tokens:
            break
        used += cost
        results.append(ScoredMemory(memory, score, semantic.get(memory_id), keyword.get(memory_id)))
        if request.limit is not None and len(results) >= request.limit:
            break
    return results
