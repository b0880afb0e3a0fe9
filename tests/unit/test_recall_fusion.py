"""Hybrid recall's fusion: RRF, convex fusion, the neighbour boost, query terms, and the recall pipeline.

No embedder and no database: the pipeline tests run ``recall`` on an in-memory stand-in store with fixed scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import pytest

from mindbank.domain.records import MemoryUnit
from mindbank.domain.text import STOPWORDS, keyword_terms
from mindbank.engine.head_tail import head_then_tail
from mindbank.engine.recall import (
    NEIGHBOUR_NEXT,
    NEIGHBOUR_PREV,
    FusionParams,
    RecallRequest,
    convex_fuse,
    fuse,
    neighbour_boost,
    recall,
)
from mindbank.store.base import MemoryFilter

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
PREV = NEIGHBOUR_PREV  # the preceding turn's share, passed explicitly where a test is about the lift itself
# the lift inside a context too, and no turn-pair rerank (its own neighbour lookup would replace the anchors seen)
LIFT = FusionParams(neighbour_prev=PREV, neighbour_prev_in_context=None, pair_weight=0.0)


def _memory(memory_id: str, *, context: str | None = "chat", at: datetime | None = T0, text: str = "") -> MemoryUnit:
    return MemoryUnit(
        id=memory_id,
        bank_id="b",
        text=text or f"fact {memory_id}",
        fact_type="world",
        tags=(),
        context=context,
        metadata={},
        document_id=memory_id,
        chunk_id=None,
        occurred_start=at,
        occurred_end=at,
        mentioned_at=at,
        created_at=T0,
        updated_at=T0,
    )


def _turns(*ids: str, context: str = "chat", step_s: float = 1.0) -> dict[str, MemoryUnit]:
    """Memories said one after another, ``step_s`` seconds apart, in one context."""
    return {i: _memory(i, context=context, at=T0 + timedelta(seconds=n * step_s)) for n, i in enumerate(ids)}


def _ids(ranked: Sequence[tuple[str, float]]) -> list[str]:
    return [i for i, _ in ranked]


# ---------------------------------------------------------------- reciprocal-rank fusion


def test_rrf_scores_are_weighted_reciprocal_ranks() -> None:
    ranked = fuse([[("a", 0.9), ("b", 0.5)], [("b", 12.0), ("c", 3.0)]], [1.0, 2.0], k=10)
    scores = dict(ranked)
    assert scores["a"] == pytest.approx(1 / 11)
    assert scores["b"] == pytest.approx(1 / 12 + 2 / 11)
    assert scores["c"] == pytest.approx(2 / 12)
    assert _ids(ranked) == ["b", "c", "a"]


def test_rrf_ignores_score_values_and_breaks_ties_by_id() -> None:
    assert _ids(fuse([[("z", 100.0)], [("y", 0.001)]], [1.0, 1.0])) == ["y", "z"]


def test_rrf_needs_one_weight_per_ranking() -> None:
    with pytest.raises(ValueError):
        fuse([[("a", 1.0)], [("b", 1.0)]], [1.0])


# ---------------------------------------------------------------- convex fusion


def test_convex_fusion_mixes_cosine_with_max_normalised_bm25() -> None:
    ranked = convex_fuse([("a", 0.8), ("b", 0.4)], [("b", 10.0), ("c", 5.0)], dense_weight=0.5)
    scores = dict(ranked)
    assert scores["a"] == pytest.approx(0.5 * 0.8)  # no keyword match: BM25 part is 0
    assert scores["b"] == pytest.approx(0.5 * 0.4 + 0.5 * 1.0)
    # keyword-only hit: its cosine is taken as the lowest cosine of the dense list (0.4), not 0
    assert scores["c"] == pytest.approx(0.5 * 0.4 + 0.5 * 0.5)
    assert _ids(ranked) == ["b", "c", "a"]


def test_convex_fusion_weight_extremes_reproduce_each_retriever() -> None:
    dense = [("a", 0.9), ("b", 0.7), ("c", 0.1)]
    sparse = [("c", 8.0), ("b", 4.0), ("a", 1.0)]
    assert _ids(convex_fuse(dense, sparse, dense_weight=1.0)) == ["a", "b", "c"]
    assert _ids(convex_fuse(dense, sparse, dense_weight=0.0)) == ["c", "b", "a"]


def test_convex_fusion_is_invariant_to_the_bm25_scale() -> None:
    dense = [("a", 0.6), ("b", 0.5)]
    sparse = [("b", 3.0), ("c", 1.5)]
    scaled = [(i, s * 7.0) for i, s in sparse]
    for (i1, s1), (i2, s2) in zip(convex_fuse(dense, sparse), convex_fuse(dense, scaled), strict=True):
        assert i1 == i2
        assert s1 == pytest.approx(s2)


def test_convex_fusion_handles_empty_and_zero_lists() -> None:
    assert convex_fuse([], []) == []
    assert convex_fuse([("a", 0.5)], []) == [("a", pytest.approx(0.25))]
    assert convex_fuse([], [("a", 2.0)]) == [("a", pytest.approx(0.5))]
    assert convex_fuse([("a", 0.5)], [("a", 0.0)]) == [("a", pytest.approx(0.25))]  # no division by zero


# ---------------------------------------------------------------- neighbour boost


def test_answer_after_a_matching_turn_is_lifted() -> None:
    memories = _turns("question", "answer")
    memories["other"] = _memory("other", context="elsewhere")
    ranked = neighbour_boost([("question", 1.0), ("other", 0.5), ("answer", 0.1)], memories, prev=0.8, next_=0.0)
    assert _ids(ranked) == ["question", "answer", "other"]
    assert dict(ranked)["answer"] == pytest.approx(0.8)
    assert dict(ranked)["question"] == pytest.approx(1.0)  # the top hit keeps its own score and place


def test_turn_before_a_strong_one_gets_the_next_share() -> None:
    memories = _turns("setup", "strong")
    ranked = dict(neighbour_boost([("strong", 1.0), ("setup", 0.2)], memories, prev=0.0, next_=0.6))
    assert ranked["setup"] == pytest.approx(0.6)
    assert ranked["strong"] == pytest.approx(1.0)


def test_boost_is_a_floor_not_a_sum() -> None:
    memories = _turns("a", "b")
    ranked = dict(neighbour_boost([("a", 0.5), ("b", 0.45)], memories, prev=0.8, next_=0.6))
    assert ranked["b"] == pytest.approx(0.45)  # 0.8 * 0.5 = 0.4 is below its own score
    assert ranked["a"] == pytest.approx(0.5)


def test_only_the_nearest_moment_counts_and_boosts_do_not_chain() -> None:
    memories = _turns("q", "b", "c")
    ranked = dict(neighbour_boost([("q", 1.0), ("b", 0.1), ("c", 0.1)], memories, prev=0.8, next_=0.0))
    assert ranked["b"] == pytest.approx(0.8)
    assert ranked["c"] == pytest.approx(0.1)  # its neighbour b lends from b's own 0.1, not the boosted 0.8


def test_nearest_retrieved_moment_stands_in_for_an_unretrieved_one() -> None:
    # "gap" was said between q and a but was not retrieved: a's nearest retrieved earlier moment is q
    memories = _turns("q", "gap", "a")
    ranked = dict(neighbour_boost([("q", 1.0), ("a", 0.1)], memories, prev=0.8, next_=0.0))
    assert ranked["a"] == pytest.approx(0.8)


def test_no_boost_across_contexts_or_beyond_the_window() -> None:
    other_context = {"q": _memory("q", context="s1"), "a": _memory("a", context="s2", at=T0 + timedelta(seconds=1))}
    assert dict(neighbour_boost([("q", 1.0), ("a", 0.1)], other_context, prev=PREV))["a"] == pytest.approx(0.1)
    far = _turns("q", "a", step_s=7200)
    assert dict(neighbour_boost([("q", 1.0), ("a", 0.1)], far, prev=PREV, window_s=3600))["a"] == pytest.approx(0.1)
    before_far = _turns("a", "q", step_s=7200)  # the strong turn comes two hours later: no next share either
    lifted = neighbour_boost([("q", 1.0), ("a", 0.1)], before_far, prev=PREV, window_s=3600)
    assert dict(lifted)["a"] == pytest.approx(0.1)
    near = _turns("q", "a", step_s=1800)
    assert dict(neighbour_boost([("q", 1.0), ("a", 0.1)], near, prev=PREV, window_s=3600))["a"] == pytest.approx(PREV)


def test_facts_of_one_moment_do_not_lend_to_each_other() -> None:
    memories = {"part1": _memory("part1"), "part2": _memory("part2")}  # same context, same time
    ranked = dict(neighbour_boost([("part1", 1.0), ("part2", 0.1)], memories))
    assert ranked["part2"] == pytest.approx(0.1)


def test_a_moment_lends_its_best_fact() -> None:
    memories = _turns("q", "a")
    memories["q2"] = _memory("q2", at=T0)  # a second fact of the first turn
    for fused in ([("q", 0.2), ("q2", 1.0), ("a", 0.0)], [("q2", 1.0), ("q", 0.2), ("a", 0.0)]):
        assert dict(neighbour_boost(fused, memories, prev=0.5, next_=0.0))["a"] == pytest.approx(0.5)


def test_memories_without_time_or_record_keep_their_score() -> None:
    memories = {"q": _memory("q"), "untimed": _memory("untimed", at=None)}
    ranked = dict(neighbour_boost([("q", 1.0), ("untimed", 0.1), ("unknown", 0.2)], memories))
    assert ranked == {"q": 1.0, "untimed": 0.1, "unknown": 0.2}


def test_zero_shares_leave_the_ranking_alone() -> None:
    memories = _turns("a", "b")
    fused = [("a", 1.0), ("b", 0.1)]
    assert neighbour_boost(fused, memories, prev=0.0, next_=0.0) == fused


def test_default_shares_keep_the_top_hit_first() -> None:
    assert 0 < NEIGHBOUR_NEXT < NEIGHBOUR_PREV < 1
    memories = _turns("a", "b", "c")
    ranked = neighbour_boost([("b", 0.9), ("a", 0.85), ("c", 0.84)], memories)
    assert _ids(ranked)[0] == "b"


# ---------------------------------------------------------------- query terms


def test_keyword_terms_keep_content_words_in_order_without_duplicates() -> None:
    assert keyword_terms("When did Melanie paint a sunrise?") == ["melanie", "paint", "sunrise"]
    assert keyword_terms("paint, painting and PAINT") == ["paint", "painting"]


def test_keyword_terms_reduce_possessives_to_their_owner() -> None:
    assert keyword_terms("What is Caroline's identity?") == ["caroline", "identity"]
    assert keyword_terms("What is Caroline\u2019s identity?") == ["caroline", "identity"]
    assert keyword_terms("her parents' house") == ["parents", "house"]


def test_keyword_terms_drop_the_light_verb_go() -> None:
    # "how is it going?" asks for news: a reply that says "go" is not an answer to it
    assert keyword_terms("What is Priya training for, and how is it going?") == ["priya", "training"]
    assert keyword_terms("How did the interview go?") == ["interview"]
    assert keyword_terms("Where is Caroline going this summer?") == ["caroline", "summer"]


def test_keyword_terms_drop_contractions_and_question_words() -> None:
    assert keyword_terms("I'm sure they don't know what it's about, can't you?") == ["know"]
    assert keyword_terms("Who, what, when, where, why, which and how?") == []
    assert {"what", "when", "where", "who", "why", "how", "which", "did", "does"} <= STOPWORDS


def test_keyword_terms_keep_hyphenated_words_and_numbers_but_not_single_characters() -> None:
    assert keyword_terms("How does Melanie prioritize self-care?") == ["melanie", "prioritize", "self-care"]
    assert keyword_terms("a Q3 report from 2023 x") == ["q3", "report", "2023"]


# ---------------------------------------------------------------- the recall pipeline


class _FixedEmbedder:
    """Returns one constant vector: the stand-in store ignores it and answers with fixed cosines."""

    dimension = 2
    name = "fixed"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.ones((len(texts), 2), dtype=np.float32)


class _FixedStore:
    """Answers vector and keyword searches with fixed rankings; records the keyword terms it was asked for."""

    def __init__(
        self, memories: dict[str, MemoryUnit], dense: list[tuple[str, float]], sparse: list[tuple[str, float]]
    ) -> None:
        self.memories, self.dense, self.sparse = memories, dense, sparse
        self.terms: list[str] = []
        self.neighbours: list[str] = []  # what memory_neighbours answers, whatever the anchors
        self.anchors: list[tuple[str, object]] = []
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}  # stored vectors (none: the pair rerank is inert)

    def vector_search(self, bank_id: str, query: object, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        return self.dense[:k]

    def keyword_search(self, bank_id: str, terms: Sequence[str], k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        self.terms = list(terms)
        return self.sparse[:k]

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]:
        return [self.memories[i] for i in ids if i in self.memories]

    def memory_neighbours(
        self, bank_id: str, anchors: Sequence[tuple[str, object]], window_s: float, flt: MemoryFilter
    ) -> list[MemoryUnit]:
        self.anchors = list(anchors)
        return [self.memories[i] for i in self.neighbours]

    def memory_vectors(self, bank_id: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        return {i: self.vectors[i] for i in ids if i in self.vectors}


def _store() -> _FixedStore:
    memories = _turns("q", "answer", "later", step_s=1)
    memories["noise"] = _memory("noise", context="other chat")
    dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3), ("answer", 0.2)]
    sparse = [("q", 9.0), ("noise", 3.0)]
    return _FixedStore(memories, dense, sparse)


def _run(store: _FixedStore, retriever: str = "hybrid", **kwargs: object) -> list[str]:
    fusion = kwargs.pop("fusion", None)
    request = RecallRequest(query="What did Ann's team ship?", retriever=retriever, **kwargs)  # type: ignore[arg-type]
    hits = recall(store, _FixedEmbedder(), "b", request, fusion=fusion)  # type: ignore[arg-type]
    return [h.memory.id for h in hits]


def test_hybrid_recall_fuses_and_lifts_the_answer_turn() -> None:
    store = _store()
    assert _run(store, fusion=LIFT) == ["q", "answer", "noise", "later"]
    assert store.terms == ["ann", "team", "ship"]


def test_hybrid_without_neighbours_is_plain_convex_fusion() -> None:
    off = FusionParams(neighbour_prev=0.0, neighbour_next=0.0)
    assert _run(_store(), fusion=off) == ["q", "noise", "later", "answer"]


def test_rrf_fusion_is_still_selectable() -> None:
    rrf = FusionParams(method="rrf", neighbour_prev=0.0, neighbour_next=0.0)
    assert _run(_store(), fusion=rrf) == ["q", "noise", "later", "answer"]


def test_single_retrievers_return_their_own_ranking_with_scores() -> None:
    store = _store()
    assert _run(store, "dense") == ["q", "noise", "later", "answer"]
    assert _run(store, "bm25") == ["q", "noise"]
    plain = FusionParams(context_share=0.0)
    hits = recall(store, _FixedEmbedder(), "b", RecallRequest(query="ship", retriever="hybrid"), fusion=plain)  # type: ignore[arg-type]
    first = hits[0]
    assert (first.semantic, first.keyword) == (pytest.approx(0.7), pytest.approx(9.0))
    assert first.final == pytest.approx(0.5 * 0.7 + 0.5 * 1.0)
    # the context lift mixes in the mean of the context's three best scores and stays on the fused scale
    lifted = recall(store, _FixedEmbedder(), "b", RecallRequest(query="ship", retriever="hybrid"))[0]  # type: ignore[arg-type]
    assert lifted.memory.id == "q" and 0 < lifted.final <= first.final


def test_limit_and_token_budget_cut_the_list_but_never_to_nothing() -> None:
    assert _run(_store(), limit=2, fusion=LIFT) == ["q", "answer"]
    assert _run(_store(), max_tokens=1) == ["q"]


def _wide_store(n: int) -> _FixedStore:
    memories = {f"m{i:03d}": _memory(f"m{i:03d}", context=f"chat {i}") for i in range(n)}  # no neighbours
    dense = [(f"m{i:03d}", 0.9 - i / 1000) for i in range(n)]
    sparse = [(f"m{i:03d}", float(n - i)) for i in range(0, n, 2)]
    return _FixedStore(memories, dense, sparse)


def _recalled(store: _FixedStore, **request: object) -> list[str]:
    hits = recall(store, _FixedEmbedder(), "b", RecallRequest(query="fact", **request), candidates=10)  # type: ignore[arg-type]
    return [h.memory.id for h in hits]


def test_fill_widens_the_pools_until_the_budget_is_spent() -> None:
    store = _wide_store(200)
    assert len(_recalled(store, max_tokens=100_000)) == 15  # fixed pools: the union of two top-10 lists
    assert len(_recalled(store, max_tokens=100_000, fill=True)) == 200  # the whole bank fits: widened until it ran out
    per_fact = 2  # "fact mNNN"
    filled = _recalled(store, max_tokens=120 * per_fact, fill=True)
    assert len(filled) == 120 and filled[:10] == _recalled(store, max_tokens=100_000)[:10]  # same head


def test_fill_does_not_widen_when_the_budget_or_limit_stops_first() -> None:
    store = _wide_store(200)
    assert _recalled(store, max_tokens=8, fill=True) == _recalled(store, max_tokens=8)  # 4 facts: one pool is plenty
    assert _recalled(store, limit=5, fill=True) == _recalled(store, limit=5)


def test_neighbours_of_the_best_hits_join_the_candidates_and_are_lifted() -> None:
    store = _store()
    store.dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3)]  # no retriever returns the answer turn
    store.neighbours = ["answer", "q"]  # a candidate already in the pool is not added twice
    assert _run(store, fusion=LIFT) == ["q", "answer", "noise", "later"]
    assert [context for context, _ in store.anchors] == ["chat", "other chat", "chat"]  # the best candidates
    assert _run(store, fusion=replace(LIFT, expand_top=1)) == ["q", "answer", "noise", "later"]
    assert len(store.anchors) == 1
    # off: the answer turn stays out
    assert "answer" not in _run(store, fusion=replace(LIFT, expand_top=0))


def test_a_newcomer_enters_at_the_lowest_score_and_only_borrows_from_its_neighbour() -> None:
    store = _store()
    store.dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3)]
    store.neighbours = ["answer"]
    plain = FusionParams(neighbour_prev=0.0, neighbour_next=1e-9, context_share=0.0)
    hits = recall(store, _FixedEmbedder(), "b", RecallRequest(query="ship"), fusion=plain)  # type: ignore[arg-type]
    answer = next(h for h in hits if h.memory.id == "answer")
    assert answer.final == pytest.approx(min(h.final for h in hits if h.memory.id != "answer"), rel=2e-3)
    assert answer.final < min(h.final for h in hits if h.memory.id != "answer")
    assert (answer.semantic, answer.keyword) == (None, None)  # no retriever scored it


def test_the_phrases_arm_adds_the_query_word_pairs_to_the_lexical_terms() -> None:
    store = _store()
    _run(store, fusion=FusionParams(phrases=True))
    assert store.terms == ["ann", "team", "ship", "ann team", "team ship"]
    _run(store, "bm25", fusion=FusionParams(phrases=True))
    assert store.terms[-2:] == ["ann team", "team ship"]


def test_the_mmr_arm_moves_a_near_duplicate_below_the_next_distinct_result() -> None:
    store = _store()
    store.memories["answer"] = _memory("answer", at=T0 + timedelta(seconds=1), text="Ann: the team shipped it")
    store.memories["later"] = _memory("later", at=T0 + timedelta(seconds=2), text="Bo: the team shipped it")
    precise = FusionParams(wide=False)  # MMR on its own, over the one fusion
    assert _run(store, fusion=precise) == ["q", "answer", "noise", "later"]
    store.dense = [("q", 0.7), ("answer", 0.65), ("later", 0.64), ("noise", 0.6)]
    assert _run(store, fusion=precise) == ["q", "answer", "later", "noise"]
    assert _run(store, fusion=replace(precise, mmr_lambda=0.3)) == ["q", "answer", "noise", "later"]


def test_the_preceding_share_can_be_left_to_the_lexical_field_inside_a_context() -> None:
    store = _store()
    store.dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3)]
    store.neighbours = ["answer"]
    outside = FusionParams(neighbour_prev_in_context=0.0)
    assert _run(store)[:2] == ["q", "answer"]  # the default lifts the reply inside a context too
    # with the share 0 in a context (the lexical arm's preceding-text field carries the turn before) it stays last
    assert _run(store, fusion=outside) == ["q", "noise", "later", "answer"]
    for memory_id in ("q", "answer", "later"):  # the same turns retained without a context
        store.memories[memory_id] = replace(store.memories[memory_id], context=None)
    store.neighbours = []
    store.dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3), ("answer", 0.2)]
    assert _run(store, fusion=outside)[:2] == ["q", "answer"]


def _paired_store() -> _FixedStore:
    """A question turn, its reply and an unrelated turn; the query's vector is (1, 1) (:class:`_FixedEmbedder`)."""
    store = _store()
    store.dense = [("q", 0.7), ("noise", 0.5), ("later", 0.3), ("answer", 0.2)]
    store.neighbours = ["q", "answer", "later"]
    store.vectors = {
        "q": np.array([1.0, 0.0], dtype=np.float32),  # half the query's topic
        "answer": np.array([0.0, 1.0], dtype=np.float32),  # the other half: together they are the query
        "noise": np.array([1.0, -0.6], dtype=np.float32),
        "later": np.array([-1.0, 0.0], dtype=np.float32),
    }
    return store


def test_the_pair_rerank_reads_a_reply_with_the_turn_it_answers() -> None:
    base = FusionParams(neighbour_prev=0.0, neighbour_next=0.0, context_share=0.0, expand_top=0, pair_weight=0.6)
    store = _paired_store()
    assert _run(store, fusion=base) == ["q", "answer", "noise", "later"]  # the reply is lifted past the noise
    assert _run(store, fusion=replace(base, pair_weight=0.0)) == ["q", "noise", "later", "answer"]
    assert _run(store, fusion=replace(base, pair_top=2)) == ["q", "noise", "later", "answer"]  # past the top: as is
    assert [context for context, _ in store.anchors] == ["chat", "other chat"]


def test_the_pair_rerank_adds_the_weighted_pair_cosine() -> None:
    base = FusionParams(neighbour_prev=0.0, neighbour_next=0.0, context_share=0.0, expand_top=0, pair_weight=0.5)
    store = _paired_store()
    plain = {h.memory.id: h.final for h in recall(store, _FixedEmbedder(), "b", RecallRequest(query="x"),  # type: ignore[arg-type]
                                                   fusion=replace(base, pair_weight=0.0))}  # fmt: skip
    hits = {h.memory.id: h.final for h in recall(store, _FixedEmbedder(), "b", RecallRequest(query="x"), fusion=base)}  # type: ignore[arg-type]
    assert hits["answer"] == pytest.approx(plain["answer"] + 0.5 * 1.0)  # (0,1)+(1,0) is the query's direction
    assert hits["noise"] == pytest.approx(
        plain["noise"] + 0.5 * float(np.dot([1.0, -0.6], [1, 1]) / np.hypot(1, 0.6) / np.sqrt(2))
    )
    del store.vectors["later"]  # no stored vector: the score is left alone
    hits = {h.memory.id: h.final for h in recall(store, _FixedEmbedder(), "b", RecallRequest(query="x"), fusion=base)}  # type: ignore[arg-type]
    assert hits["later"] == pytest.approx(plain["later"])


# ---------------------------------------------------------------- the wide fusion and the precise head


def test_the_wide_fusion_divides_the_cosine_by_the_best_and_raises_divided_bm25() -> None:
    dense = [("a", 0.8), ("b", 0.4)]
    sparse = [("b", 4.0), ("c", 1.0)]
    wide = dict(convex_fuse(dense, sparse, dense_weight=0.5, dense_scale="max", sparse_power=2.0))
    assert wide["a"] == pytest.approx(0.5 * 1.0)  # the best cosine becomes 1; no BM25
    assert wide["b"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert wide["c"] == pytest.approx(0.5 * 0.5 + 0.5 * 0.25**2)  # only BM25 found it: the lowest divided cosine
    assert dict(convex_fuse(dense, sparse, dense_weight=0.5)) == pytest.approx(
        {"a": 0.4, "b": 0.7, "c": 0.2 + 0.125}
    )  # the defaults: the precise fusion, unchanged


def test_the_wide_fusion_leaves_a_best_cosine_at_or_below_zero_alone() -> None:
    fused = dict(convex_fuse([("a", -0.2), ("b", -0.5)], [], dense_weight=1.0, dense_scale="max"))
    assert fused == pytest.approx({"a": -0.2, "b": -0.5})


def test_the_head_comes_from_the_precise_order_and_the_rest_from_the_wide_one() -> None:
    precise = [("a", 0.9), ("b", 0.7), ("c", 0.5), ("d", 0.2)]
    wide = [("c", 0.95), ("a", 0.9), ("d", 0.6), ("e", 0.3)]  # e: only the wide pass saw it
    merged = head_then_tail(precise, wide, head=1)
    assert _ids(merged) == ["a", "c", "d", "e", "b"]
    # every place keeps the precise score of that place, the last one beyond the precise list's length
    assert [s for _, s in merged] == [0.9, 0.7, 0.5, 0.2, 0.2]
    assert _ids(head_then_tail(precise, wide, head=0)) == ["c", "a", "d", "e", "b"]
    assert _ids(head_then_tail(precise, wide, head=2)) == ["a", "b", "c", "d", "e"]
    assert head_then_tail([], [], head=1) == []


def _paraphrase_store() -> _FixedStore:
    """A question whose best lexical match ("q") is also close in meaning, two weak lexical matches with nothing of
    its meaning, and a paraphrase ("para") that shares no word with it, each in a session of its own."""
    memories = {i: _memory(i, context=f"session {i}", at=T0 + timedelta(days=n)) for n, i in enumerate(
        ["q", "weak1", "weak2", "para"])}  # fmt: skip
    dense = [("q", 0.8), ("para", 0.6), ("weak1", 0.1), ("weak2", 0.05)]
    sparse = [("q", 10.0), ("weak1", 7.0), ("weak2", 6.8)]
    return _FixedStore(memories, dense, sparse)


def test_a_paraphrase_the_lexical_arm_misses_is_placed_by_the_wide_order() -> None:
    plain = FusionParams(neighbour_prev=0.0, neighbour_next=0.0, speaker_boost=0.0, when_boost=0.0, wide=True)
    precise = _run(_paraphrase_store(), fusion=replace(plain, wide=False))
    assert precise == ["q", "weak1", "weak2", "para"]  # 0.5 * 0.6 = 0.30 < 0.5 * 0.1 + 0.5 * 0.7 = 0.40
    # wide: para 0.5 * 0.75 = 0.375 > weak1 0.5 * 0.125 + 0.5 * 0.7 ** 1.5 = 0.355
    assert _run(_paraphrase_store(), fusion=plain) == ["q", "para", "weak1", "weak2"]
    store = _paraphrase_store()
    hits = recall(store, _FixedEmbedder(), "b", RecallRequest(query="x"), fusion=plain)  # type: ignore[arg-type]
    precise_hits = recall(
        store,
        _FixedEmbedder(),
        "b",
        RecallRequest(query="x"),
        fusion=replace(plain, wide=False),  # type: ignore[arg-type]
    )
    assert [h.final for h in hits] == [h.final for h in precise_hits]  # the precise scale, place by place


def test_the_wide_order_never_moves_the_precise_first_result() -> None:
    store = _paraphrase_store()
    store.dense = [("para", 0.8), ("q", 0.75), ("weak1", 0.1), ("weak2", 0.05)]  # the paraphrase is the nearest
    plain = FusionParams(neighbour_prev=0.0, neighbour_next=0.0, speaker_boost=0.0, when_boost=0.0, wide=True)
    assert _run(store, fusion=plain)[0] == "q"  # precise: q 0.875 > para 0.40
    assert _run(store, fusion=replace(plain, head=0))[0] == "q"  # wide alone: q 0.96875 > para 0.5
    assert _run(store, fusion=replace(plain, wide=False))[0] == "q"
