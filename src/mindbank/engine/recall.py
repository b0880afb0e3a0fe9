"""Hybrid recall: dense (MiniLM cosine) + BM25 (FTS5), fused, lifted by conversational neighbours, trimmed to a budget.

Hybrid recall runs in these steps (the fourth runs between fusion and the neighbour pass):

1. **Retrieve.** Each retriever returns its top ``candidates``: dense as ``(id, cosine)`` and BM25 as
   ``(id, score)`` with higher scores better.
2. **Fuse** (:func:`convex_fuse`). Each candidate scores ``w * cosine + (1 - w) * bm25 / best_bm25``. The
   cosine stays on its absolute scale, so a weak best match stays weak. BM25 is divided by the query's best
   score because its scale depends on how many terms the query has and how rare they are.
   Reciprocal-rank fusion (:func:`fuse`) is still available. It throws away how far apart the scores are, and
   on LoCoMo it scored below BM25 alone (docs/benchmarks.md).
3. **Neighbours** (:func:`neighbour_boost`). A memory scores at least a discounted share of the fused score of
   the memory said just before it (``0.8``), and a smaller share of the one said just after it (``0.6``), in the
   same context (conversation) and within an hour. The reason is that in a dialogue the answer often sits one
   turn after the turn that matches the question ("Anything you're excited about in the adoption process?" ->
   "I'm thrilled to make a family ..."); the lexical arm's preceding-text field finds such a reply too, but only
   within a context, while the lift also joins memories retained without one. Taking the larger of the memory's
   own score and the share means a top hit with a positive score never moves. Only candidates can lend a score,
   but before the pass the turns said just before and after the ``expand_top`` (10) best fused candidates join
   the candidates (:func:`expand_neighbours`, one store lookup), entering just below the lowest fused score, so a
   turn that neither retriever returned can still be lifted by the turn it answers.

4. **Who and when** (each adds to the fused score of candidates already retrieved, before the neighbour pass, so
   an answer turn after a lifted turn is lifted with it; each measured by ablation in docs/benchmarks.md):
   :func:`speaker_boost` (``+0.2``) for a memory said by a person the query names (a query term that is a
   candidate's speaker); :func:`when_boost` (``+0.2``) for a memory whose text says when ("yesterday", "in May",
   "2019") when the query asks when (:mod:`mindbank.domain.timecues`); :func:`period_boost` (``+0.3``) for a memory
   dated inside the calendar period the query names ("in July 2022", parsed by ``dateutil``). Then
   :func:`context_lift` mixes each score 1 : 0.6 with its context's strength (the mean of the three best scores in
   that context, a conversation session), so the turns of a session about the query rank above a lone match.

5. **Turn pairs** (:func:`mindbank.engine.pair_rerank.pair_rerank`, last; built, measured and **off** by default:
   ``pair_weight`` 0). Each of the 30 best gains ``pair_weight`` times the query's best cosine with its own stored
   vector or with that vector summed with the turn said just before or after it (same context, within the hour),
   so a short reply is read with its question. It raised hit@10 on the tuning conversations but not on the report
   ones, and cost hit@1 (docs/benchmarks.md).

6. **Two orders** (:mod:`mindbank.engine.head_tail`; built, measured and **off** by default: ``wide``). The pool
   is fused a second time with the wide fusion (the cosine divided by the query's best cosine, normalised BM25
   raised to the power 1.5) and put through steps 3 to 5 again; the first result stays the one ranked first above,
   and the places after it are filled in the wide order, each keeping the score the first ranking has at that
   place. A paraphrase with none of the query's words is then no longer sunk below weak keyword matches. It raised
   hit@10 on the tuning conversations without moving hit@1, but not on the report ones (one question more at 10,
   three fewer at 5), for a second pass over the pool (+0.8 ms CPU a recall) and three fewer documents holding
   their answer (docs/benchmarks.md).

**The lexical arm** (``Store.keyword_search``) gets the query's content words (:func:`keyword_terms`: lowercased,
possessives reduced, stopwords dropped) and ranks with BM25 over two stemmed fields (SQLite: FTS5, Porter;
PostgreSQL: a weighted ``tsvector``, English Snowball, ``ts_rank_cd``): the memory's own text (1) and the text said
just before it in the same context (0.3, ``PRECEDING_WEIGHT`` of :mod:`mindbank.store.shared`), so a reply is found by
the words of the turn it answers. Two arms are built, measured and off by default, since neither earned its place on
the tuning conversations (docs/benchmarks.md): ``phrases`` adds the query's word pairs (:func:`query_phrases`) as
extra lexical terms, so a memory saying the phrase outranks one with the words apart; ``mmr_lambda`` re-ranks the
``mmr_top`` best by maximal marginal relevance (:func:`mindbank.engine.diversity.mmr`) against near-duplicates.

The ``dense`` and ``bm25`` retrievers return their own ranking unchanged. They are the baselines that hybrid
is measured against.

Beyond these, a request may carry the reference's score floors and time window (``RecallRequest`` /
``MinScores`` / ``TemporalWindow`` of Hindsight 1.1.0): ``min_semantic`` and ``min_keyword`` cut the candidates of
their own retriever before fusion (a result surfaced by the other keeps a null score for it), ``min_final`` drops
every result whose final score is below it; ``window`` adds a temporal arm that surfaces the memories whose own
dates (``occurred_start``, ``occurred_end``, ``mentioned_at``) fall inside it and raises their score by
``TEMPORAL_BOOST`` (:func:`temporal_boost`): it ranks, it does not filter. ``prefer_observations`` drops a raw fact
once an observation consolidated from it is among the results, and fills the freed budget with the next results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np
import numpy.typing as npt

from mindbank.domain.document import count_tokens
from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.text import keyword_terms, query_phrases, speaker_prefix
from mindbank.domain.timecues import asks_when, named_period, says_when
from mindbank.engine.diversity import mmr
from mindbank.engine.head_tail import HEAD, TAIL_POWER, head_then_tail
from mindbank.engine.neighbours import (
    NEIGHBOUR_NEXT,
    NEIGHBOUR_PREV,
    NEIGHBOUR_PREV_IN_CONTEXT,
    NEIGHBOUR_WINDOW_S,
    expand_neighbours,
    neighbour_boost,
)
from mindbank.engine.neighbours import best_first as _ranked
from mindbank.engine.pair_rerank import PAIR_TOP, PAIR_WEIGHT, pair_rerank
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import Store

Retriever = Literal["hybrid", "dense", "bm25"]
FusionMethod = Literal["convex", "rrf"]
DenseScale = Literal["cosine", "max"]

RRF_K = 60  # the usual reciprocal-rank-fusion constant: damps the head so both lists contribute
DENSE_WEIGHT = 0.5  # convex fusion: weight of the cosine; normalised BM25 gets the rest
SPEAKER_BOOST = 0.2  # added to the fused score of a memory said by a person the query names
WHEN_BOOST = 0.2  # added to the fused score of a memory that says when, for a query that asks when
PERIOD_BOOST = 0.3  # added to the fused score of a memory dated inside the calendar period the query names
CONTEXT_SHARE = 0.6  # weight of a candidate's context strength (its 3 best scores / 3) against its own score
CONTEXT_TOP = 3
TEMPORAL_BOOST = 0.2  # added to the score of a memory dated inside a request's temporal window
EXPAND_TOP = 10  # the neighbours of this many best fused candidates join the candidates (0: no expansion)
MMR_LAMBDA = 0.0  # maximal marginal relevance: weight of a candidate's likeness to the results above it (0: off)
MMR_TOP = 30  # MMR re-ranks this many best candidates


@dataclass(frozen=True, slots=True)
class FusionParams:
    """How ``hybrid`` combines its retrievers. The defaults are the ones tuned in docs/benchmarks.md.

    ``method`` ``"convex"``: ``dense_weight * cosine + (1 - dense_weight) * bm25 / max_bm25``; ``"rrf"``:
    reciprocal-rank fusion with constant ``rrf_k`` and equal weights. ``neighbour_prev`` / ``neighbour_next``
    (each in [0, 1); 0 turns it off) are the shares of the preceding / following memory's fused score that a memory
    scores at least, for memories at most ``neighbour_window_s`` seconds apart in the same context.
    ``speaker_boost`` / ``when_boost`` / ``period_boost`` (0 turns each off) are the who-and-when arms;
    ``context_share`` (0: off) weighs a candidate's context strength against its own score. ``expand_top`` (0:
    off) is how many of the best fused candidates bring their neighbours in (:func:`expand_neighbours`).
    ``phrases`` adds the query's word pairs to the lexical terms; ``mmr_lambda`` (0: off) weighs a candidate's
    likeness to the results above it among the ``mmr_top`` best (both measured, off by default).
    ``neighbour_prev_in_context`` (None, the default: ``neighbour_prev``) is the preceding share for memories with a
    context (measured at 0 in docs/benchmarks.md).
    ``pair_weight`` (0: off) and ``pair_top`` set the turn-pair rerank (:mod:`mindbank.engine.pair_rerank`).
    ``wide`` (convex only) ranks the pool a second time with the wide fusion (cosine divided by the best cosine,
    divided BM25 to the power ``wide_power``) and lets that order fill every place after the first ``head``, which
    the fusion above keeps (:mod:`mindbank.engine.head_tail`; ``head`` 0: the wide order alone).
    """

    method: FusionMethod = "convex"
    dense_weight: float = DENSE_WEIGHT
    rrf_k: int = RRF_K
    neighbour_prev: float = NEIGHBOUR_PREV
    neighbour_next: float = NEIGHBOUR_NEXT
    neighbour_window_s: float = NEIGHBOUR_WINDOW_S
    neighbour_prev_in_context: float | None = NEIGHBOUR_PREV_IN_CONTEXT
    speaker_boost: float = SPEAKER_BOOST
    when_boost: float = WHEN_BOOST
    period_boost: float = PERIOD_BOOST
    context_share: float = CONTEXT_SHARE
    expand_top: int = EXPAND_TOP
    phrases: bool = False
    mmr_lambda: float = MMR_LAMBDA
    mmr_top: int = MMR_TOP
    pair_weight: float = PAIR_WEIGHT
    pair_top: int = PAIR_TOP
    wide: bool = False
    head: int = HEAD
    wide_power: float = TAIL_POWER


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """What to recall: ``query`` text, a memory filter, a token budget over fact texts and a result cap.

    ``fill``: when the candidate pools run out before ``max_tokens`` is spent while a retriever still had more to
    give, widen them (×4 each time) and rank again, so a large budget is really read. A refresh and the reflect
    tools ask for this (a ``recall_max_tokens`` of 8192 must read up to 8192 tokens, not one pool's worth); the
    recall endpoint keeps fixed pools, like the reference.
    """

    query: str
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    max_tokens: int = 4096
    limit: int | None = None
    retriever: Retriever = "hybrid"
    fill: bool = False
    min_semantic: float | None = None
    min_keyword: float | None = None
    min_final: float | None = None
    window: tuple[datetime, datetime] | None = None
    prefer_observations: bool = False


def fuse(
    rankings: Sequence[Sequence[tuple[str, float]]], weights: Sequence[float], k: int = RRF_K
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: ``score(id) = Σ w_i / (k + rank_i(id))`` with 1-based ranks; best first."""
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (memory_id, _) in enumerate(ranking, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + rank)
    return _ranked(scores)


def convex_fuse(
    dense: Sequence[tuple[str, float]],
    sparse: Sequence[tuple[str, float]],
    *,
    dense_weight: float = DENSE_WEIGHT,
    dense_scale: DenseScale = "cosine",
    sparse_power: float = 1.0,
) -> list[tuple[str, float]]:
    """Convex combination of cosine and max-normalised BM25 over the union of both lists; best first.

    ``dense``: ``(id, cosine in [-1, 1])`` best first; ``sparse``: ``(id, bm25 >= 0)`` best first. Fused score
    ``= dense_weight * cos + (1 - dense_weight) * bm25 / max(bm25)``, so it lies in [-1, 1]. A candidate only BM25
    found gets the lowest cosine in ``dense``. That is an upper bound, since the candidate did not make the dense
    top list, and it keeps keyword-only hits from being sunk by a made-up zero. A candidate only dense found gets 0
    from BM25, the score of a text that matched no query term.

    ``dense_scale`` ``"max"`` divides each cosine by the query's best one (a best cosine at or below 0 leaves them
    as they are), and ``sparse_power`` raises divided BM25 to that power: the wide fusion of
    :mod:`mindbank.engine.head_tail`. The defaults are the fusion above.
    """
    cos = dict(dense)
    best_cos = max(cos.values(), default=0.0)
    if dense_scale == "max" and best_cos > 0:
        cos = {i: c / best_cos for i, c in cos.items()}
    floor = min(cos.values()) if cos else 0.0
    top = max((score for _, score in sparse), default=0.0)
    bm25 = {i: (s / top if top > 0 else 0.0) ** sparse_power for i, s in sparse}
    scores = {
        memory_id: dense_weight * cos.get(memory_id, floor) + (1.0 - dense_weight) * bm25.get(memory_id, 0.0)
        for memory_id in (*cos, *bm25)
    }
    return _ranked(scores)


def temporal_boost(
    ranked: Sequence[tuple[str, float]], in_window: Sequence[str], *, boost: float = TEMPORAL_BOOST
) -> list[tuple[str, float]]:
    """Add ``boost`` to the score of every id in ``in_window``; best first. An id the other retrievers did not
    surface enters with the lowest score among theirs (0 when there is none) before its boost: the temporal arm
    brings it in, the query still decides how far it climbs."""
    scores = dict(ranked)
    base = min(scores.values(), default=0.0)
    for memory_id in in_window:
        scores[memory_id] = scores.get(memory_id, base) + boost
    return _ranked(scores)


def speaker_of(memory: MemoryUnit) -> str | None:
    """Who said ``memory``, lowercased: its ``speaker`` metadata, else the ``Name: `` prefix of its text."""
    named = memory.metadata.get("speaker") or memory.metadata.get("role") or speaker_prefix(memory.text)
    return named.strip().lower() or None if named else None


def speaker_boost(
    ranked: Sequence[tuple[str, float]], memories: Mapping[str, MemoryUnit], terms: Sequence[str], *, boost: float
) -> list[tuple[str, float]]:
    """Add ``boost`` to each candidate said by a person the query names; best first.

    A person is named when a query term (``keyword_terms``: lowercased) is the speaker of some candidate, or the
    first word of that speaker's name. Without such a term, or with ``boost`` 0, the ranking is unchanged.
    """
    scores = dict(ranked)
    if not boost or not terms:
        return _ranked(scores)
    wanted = set(terms)
    said_by = {i: speaker_of(m) for i, m in memories.items() if i in scores}
    named = {who for who in said_by.values() if who and (who in wanted or who.split()[0] in wanted)}
    if not named:
        return _ranked(scores)
    for memory_id, who in said_by.items():
        if who in named:
            scores[memory_id] += boost
    return _ranked(scores)


def when_boost(
    ranked: Sequence[tuple[str, float]], memories: Mapping[str, MemoryUnit], query: str, *, boost: float
) -> list[tuple[str, float]]:
    """For a query that asks about time (:func:`mindbank.domain.timecues.asks_when`), add ``boost`` to each
    candidate whose text says when something happened (:func:`mindbank.domain.timecues.says_when`); best first."""
    scores = dict(ranked)
    if boost and asks_when(query):
        for memory_id in scores:
            memory = memories.get(memory_id)
            if memory is not None and says_when(memory.text):
                scores[memory_id] += boost
    return _ranked(scores)


def period_boost(
    ranked: Sequence[tuple[str, float]],
    memories: Mapping[str, MemoryUnit],
    period: tuple[datetime, datetime],
    *,
    boost: float,
) -> list[tuple[str, float]]:
    """Add ``boost`` to each candidate dated (``occurred_start``, else ``mentioned_at``) inside ``period``
    (inclusive); best first. Unlike a request's ``temporal_window`` it brings in no memory the retrievers missed:
    the period comes from the query's own words, so it only reorders what matched them."""
    start, end = period
    scores = dict(ranked)
    for memory_id in scores:
        memory = memories.get(memory_id)
        when = None if memory is None else memory.moment
        if when is not None and start <= when <= end:
            scores[memory_id] += boost
    return _ranked(scores)


def context_lift(
    ranked: Sequence[tuple[str, float]], memories: Mapping[str, MemoryUnit], *, share: float
) -> list[tuple[str, float]]:
    """Mix each candidate's score with its context's strength: ``(own + share * strength) / (1 + share)``; best
    first.

    A context's strength is the sum of the three best scores among the candidates in that context (a session of a
    conversation), divided by three, so a context where one stray turn matched lends less than one where several
    did: a session about the query's topic holds the evidence more often than a lone match elsewhere. Dividing by
    ``1 + share`` keeps scores on the fused scale, so a floor on ``final`` means about the same with the lift on.
    Candidates missing from ``memories`` keep their score; those without a context share one.
    """
    scores = dict(ranked)
    if not share:
        return _ranked(scores)
    by_context: dict[str | None, list[float]] = {}
    for memory_id, score in scores.items():
        memory = memories.get(memory_id)
        if memory is not None:
            by_context.setdefault(memory.context, []).append(score)
    strength = {c: sum(sorted(v, reverse=True)[:CONTEXT_TOP]) / CONTEXT_TOP for c, v in by_context.items()}
    for memory_id in scores:
        memory = memories.get(memory_id)
        if memory is not None:
            scores[memory_id] = (scores[memory_id] + share * strength[memory.context]) / (1.0 + share)
    return _ranked(scores)


_RETRIEVERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mindbank-bm25")
MAX_CANDIDATES = 20_000  # widening (RecallRequest.fill) stops here, whatever the budget
WIDEN = 4


def recall(
    store: Store,
    embedder: Embedder,
    bank_id: str,
    request: RecallRequest,
    *,
    candidates: int = 60,
    fusion: FusionParams | None = None,
) -> list[ScoredMemory]:
    """Run ``request`` against the bank. Results come best first and fit within ``max_tokens`` (fact text only).

    ``candidates`` is how many results each retriever contributes (at first, with ``request.fill``). ``fusion``
    sets how hybrid combines them; the default is :class:`FusionParams` ``()``. The first result is always
    returned, even when it alone is over the budget, so a small budget never returns nothing when something
    matched.
    """
    while True:
        results, pools_ran_dry = _recall_once(store, embedder, bank_id, request, candidates, fusion or FusionParams())
        if not (request.fill and pools_ran_dry) or candidates >= MAX_CANDIDATES:
            return results
        candidates = min(candidates * WIDEN, MAX_CANDIDATES)


def _recall_once(
    store: Store, embedder: Embedder, bank_id: str, request: RecallRequest, candidates: int, params: FusionParams
) -> tuple[list[ScoredMemory], bool]:
    """One ranking over pools of ``candidates``: ``(results, pools ran dry)``; the pools ran dry when every
    candidate fitted the budget and limit while some retriever returned a full pool (it may have had more)."""
    dense: list[tuple[str, float]] = []
    sparse: list[tuple[str, float]] = []
    keyword = None
    vector = None
    terms = keyword_terms(request.query)
    if request.retriever in ("hybrid", "bm25"):
        lexical = [*terms, *query_phrases(request.query)] if params.phrases else terms
        # BM25 runs on another thread while this one embeds the query and scans vectors: SQLite, numpy and
        # onnxruntime all release the GIL, so on two cores the two retrievers overlap instead of adding up
        keyword = _RETRIEVERS.submit(store.keyword_search, bank_id, lexical, candidates, request.filter)
    if request.retriever in ("hybrid", "dense"):
        vector = embedder.embed([request.query])[0]
        dense = store.vector_search(bank_id, vector, candidates, request.filter)
    if keyword is not None:
        sparse = keyword.result()
    pool_full = max(len(dense), len(sparse)) >= candidates  # before the floors: they prune, the pool did not run dry
    if request.min_semantic is not None:
        dense = [(i, s) for i, s in dense if s >= request.min_semantic]
    if request.min_keyword is not None:
        sparse = [(i, s) for i, s in sparse if s >= request.min_keyword]
    memories: dict[str, MemoryUnit] = {}
    if request.retriever == "dense":
        ranked = dense
    elif request.retriever == "bm25":
        ranked = sparse
    else:
        ranked = _rank_hybrid(store, bank_id, request, terms, dense, sparse, vector, memories, params, wide=False)
        if params.wide and params.method == "convex":
            wide = _rank_hybrid(store, bank_id, request, terms, dense, sparse, vector, memories, params, wide=True)
            ranked = head_then_tail(ranked, wide, head=params.head)
    if request.window is not None:
        start, end = request.window
        ranked = temporal_boost(ranked, store.memories_in_window(bank_id, start, end, candidates, request.filter))
    _load(store, bank_id, ranked, memories)
    results, stopped = _take(request, ranked, memories, dict(dense), dict(sparse))
    return results, pool_full and not stopped


def _rank_hybrid(
    store: Store,
    bank_id: str,
    request: RecallRequest,
    terms: Sequence[str],
    dense: Sequence[tuple[str, float]],
    sparse: Sequence[tuple[str, float]],
    vector: npt.NDArray[np.float32] | None,
    memories: dict[str, MemoryUnit],
    params: FusionParams,
    *,
    wide: bool,
) -> list[tuple[str, float]]:
    """Fuse ``dense`` and ``sparse`` (the wide fusion when ``wide``), then run the neighbour, who-and-when, context,
    MMR and turn-pair passes; best first. ``terms``: the query's lexical terms (:func:`keyword_terms`);
    ``memories`` gains every candidate the passes read."""
    if params.method == "rrf":
        ranked = fuse([dense, sparse], [1.0, 1.0], k=params.rrf_k)
    elif wide:
        ranked = convex_fuse(
            dense, sparse, dense_weight=params.dense_weight, dense_scale="max", sparse_power=params.wide_power
        )
    else:
        ranked = convex_fuse(dense, sparse, dense_weight=params.dense_weight)
    if not any((params.neighbour_prev, params.neighbour_next, params.speaker_boost, params.when_boost,
                params.period_boost, params.context_share, params.mmr_lambda, params.pair_weight)):  # fmt: skip
        return ranked
    # the who-and-when, context and neighbour passes read every candidate's speaker, text, context and time
    _load(store, bank_id, ranked, memories)
    if params.neighbour_prev or params.neighbour_next:
        ranked = expand_neighbours(
            store, bank_id, ranked, memories, request.filter, top=params.expand_top, window_s=params.neighbour_window_s
        )
    ranked = speaker_boost(ranked, memories, terms, boost=params.speaker_boost)
    ranked = when_boost(ranked, memories, request.query, boost=params.when_boost)
    if request.window is None and params.period_boost:
        period = named_period(request.query)
        if period is not None:
            ranked = period_boost(ranked, memories, period, boost=params.period_boost)
    ranked = context_lift(ranked, memories, share=params.context_share)
    ranked = neighbour_boost(
        ranked,
        memories,
        prev=params.neighbour_prev,
        next_=params.neighbour_next,
        window_s=params.neighbour_window_s,
        prev_in_context=params.neighbour_prev_in_context,
    )
    ranked = mmr(ranked, memories, lam=params.mmr_lambda, top=params.mmr_top)
    if vector is not None:
        ranked = pair_rerank(
            store, bank_id, ranked, memories, vector, request.filter, top=params.pair_top,
            weight=params.pair_weight, window_s=params.neighbour_window_s,
        )  # fmt: skip
    return ranked


def _load(store: Store, bank_id: str, ranked: Sequence[tuple[str, float]], memories: dict[str, MemoryUnit]) -> None:
    """Read into ``memories`` every id of ``ranked`` it lacks (one store read)."""
    missing = [i for i, _ in ranked if i not in memories]
    if missing:
        memories.update((m.id, m) for m in store.get_memories(bank_id, missing))


def _take(
    request: RecallRequest,
    ranked: Sequence[tuple[str, float]],
    memories: Mapping[str, MemoryUnit],
    semantic: Mapping[str, float],
    keyword: Mapping[str, float],
) -> tuple[list[ScoredMemory], bool]:
    """The results: ``ranked`` in order down to ``min_final``, within ``max_tokens`` of fact text (the first one
    always) and ``limit``; with ``prefer_observations`` a raw fact goes once an observation built from it is in.
    The flag says whether a floor, the budget or the limit stopped the walk before ``ranked`` ran out."""
    results: dict[str, ScoredMemory] = {}
    superseded: set[str] = set()
    used = 0
    for memory_id, score in ranked:
        memory = memories.get(memory_id)
        if memory is None or memory_id in superseded:
            continue
        if request.min_final is not None and score < request.min_final:
            return list(results.values()), True
        cost = count_tokens(memory.text)
        if results and used + cost > request.max_tokens:
            return list(results.values()), True
        used += cost
        results[memory_id] = ScoredMemory(memory, score, semantic.get(memory_id), keyword.get(memory_id))
        if request.prefer_observations and memory.fact_type == "observation":
            for source in memory.source_memory_ids or ():
                superseded.add(source)
                dropped = results.pop(source, None)  # a fact ranked above the observation it went into
                if dropped is not None:
                    used -= count_tokens(dropped.memory.text)
        if request.limit is not None and len(results) >= request.limit:
            return list(results.values()), True
    return list(results.values()), False
