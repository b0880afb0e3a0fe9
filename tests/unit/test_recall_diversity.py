"""Recall's measured-but-off arms: maximal marginal relevance against near-duplicates, and the query's word pairs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mindbank.domain.records import MemoryUnit
from mindbank.domain.text import query_phrases
from mindbank.engine.diversity import content_words, jaccard, mmr

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _memory(memory_id: str, text: str) -> MemoryUnit:
    return MemoryUnit(
        id=memory_id, bank_id="b", text=text, fact_type="world", tags=(), context="chat", metadata={},
        document_id=memory_id, chunk_id=None, occurred_start=T0, occurred_end=T0, mentioned_at=T0,
        created_at=T0, updated_at=T0,
    )  # fmt: skip


MEMORIES = {
    "a": _memory("a", "Caroline: I went to the LGBTQ support group yesterday."),
    "a2": _memory("a2", "Melanie: Caroline went to the LGBTQ support group yesterday."),  # a restatement of a
    "b": _memory("b", "Caroline: I am researching adoption agencies."),
    "c": _memory("c", "Melanie: I painted a sunset over the lake."),
}


def test_content_words_leave_out_the_speaker_and_stopwords() -> None:
    assert content_words("Caroline: I went to the group.") == {"went", "group"}
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_a_near_duplicate_gives_way_to_the_next_distinct_result() -> None:
    ranked = [("a", 0.9), ("a2", 0.85), ("b", 0.8), ("c", 0.1)]
    reranked = mmr(ranked, MEMORIES, lam=0.3, top=3)
    assert [i for i, _ in reranked] == ["a", "b", "a2", "c"]
    scores = dict(reranked)
    assert scores["a"] == 0.9 and scores["b"] == 0.8  # nothing alike above them: scores unchanged
    assert scores["a2"] == pytest.approx(0.85 - 0.3 * jaccard(content_words(MEMORIES["a"].text),
                                                              content_words(MEMORIES["a2"].text)))  # fmt: skip
    assert [s for _, s in reranked] == sorted((s for _, s in reranked), reverse=True)  # still sorted by score


def test_mmr_off_or_too_short_changes_nothing() -> None:
    ranked = [("a", 0.9), ("a2", 0.85), ("b", 0.8)]
    assert mmr(ranked, MEMORIES, lam=0.0, top=30) == ranked
    assert mmr(ranked, MEMORIES, lam=0.3, top=1) == ranked
    assert mmr(ranked[:1], MEMORIES, lam=0.3, top=30) == ranked[:1]


def test_a_penalised_result_can_fall_below_the_candidates_past_the_top() -> None:
    ranked = [("a", 0.9), ("a2", 0.85), ("b", 0.84)]
    reranked = mmr(ranked, MEMORIES, lam=0.5, top=2)
    assert [i for i, _ in reranked] == ["a", "b", "a2"]


@pytest.mark.parametrize(
    ("query", "pairs"),
    [
        ("Where is the LGBTQ support group?", ["lgbtq support", "support group"]),
        ("What did Caroline's mom paint?", ["caroline mom", "mom paint"]),
        ("When did she go to the park?", []),  # "go", "park": a stopword between them
        ("support group and support group", ["support group"]),  # no duplicates
        ("", []),
    ],
)
def test_query_phrases_are_content_words_written_side_by_side(query: str, pairs: list[str]) -> None:
    assert query_phrases(query) == pairs
