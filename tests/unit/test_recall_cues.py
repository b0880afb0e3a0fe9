"""Who and when in recall: the speaker arm, the time-cue arm, the named-period arm and their text tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from mindbank.domain.records import MemoryUnit
from mindbank.domain.timecues import asks_when, named_period, says_when
from mindbank.engine.recall import context_lift, period_boost, speaker_boost, speaker_of, when_boost

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _memory(memory_id: str, text: str, *, speaker: str | None = None, at: datetime = T0) -> MemoryUnit:
    return MemoryUnit(
        id=memory_id, bank_id="b", text=text, fact_type="world", tags=(), context="chat",
        metadata={"speaker": speaker} if speaker else {}, document_id=memory_id, chunk_id=None,
        occurred_start=at, occurred_end=at, mentioned_at=at, created_at=T0, updated_at=T0,
    )  # fmt: skip


def test_speaker_comes_from_metadata_else_the_prefix() -> None:
    assert speaker_of(_memory("a", "hi", speaker="Caroline")) == "caroline"
    assert speaker_of(_memory("a", "Melanie: hi")) == "melanie"
    assert speaker_of(_memory("a", "no one said this")) is None


def test_a_named_speaker_lifts_their_own_memories_only() -> None:
    memories = {
        "c": _memory("c", "Caroline: I went to a support group.", speaker="Caroline"),
        "m": _memory("m", "Melanie: I painted a sunrise.", speaker="Melanie"),
    }
    ranked = [("m", 0.5), ("c", 0.45)]
    assert speaker_boost(ranked, memories, ["caroline", "group"], boost=0.1) == [("c", pytest.approx(0.55)), ("m", 0.5)]
    assert speaker_boost(ranked, memories, ["group"], boost=0.1) == ranked  # nobody named
    assert speaker_boost(ranked, memories, ["caroline"], boost=0.0) == ranked  # arm off
    # a first name names a speaker known by a full name
    full = {"c": replace(memories["c"], metadata={"speaker": "Caroline Smith"}), "m": memories["m"]}
    assert speaker_boost(ranked, full, ["caroline"], boost=0.1)[0][0] == "c"


def test_a_when_question_lifts_memories_that_say_when() -> None:
    memories = {
        "dated": _memory("dated", "I went to the support group yesterday."),
        "plain": _memory("plain", "The support group was powerful."),
    }
    ranked = [("plain", 0.5), ("dated", 0.45)]
    assert when_boost(ranked, memories, "When did she go to the support group?", boost=0.2)[0][0] == "dated"
    assert when_boost(ranked, memories, "What was the support group like?", boost=0.2) == ranked


@pytest.mark.parametrize(
    ("query", "asks"),
    [("When did Caroline go?", True), ("How long ago was it?", True), ("What year did he move?", True),
     ("Which month was the race?", True), ("What did Caroline paint?", False), ("Whenever is fine", False)],
)  # fmt: skip
def test_asks_when(query: str, asks: bool) -> None:
    assert asks_when(query) is asks


@pytest.mark.parametrize(
    ("text", "says"),
    [("I went yesterday.", True), ("Two weeks ago we met.", True), ("See you on Friday!", True),
     ("Back in 2019 I moved.", True), ("I may go.", False), ("The group was great.", False)],
)  # fmt: skip
def test_says_when(text: str, says: bool) -> None:
    assert says_when(text) is says


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("Where did Joanna travel to in July 2022?", (_utc(2022, 7, 1), _utc(2022, 7, 31, 23, 59, 59))),
        ("What did he do on 7 May 2023?", (_utc(2023, 5, 7), _utc(2023, 5, 7, 23, 59, 59))),
        ("What happened in 2022?", (_utc(2022, 1, 1), _utc(2022, 12, 31, 23, 59, 59))),
        ("When did Caroline go to the support group?", None),  # no year: no single period
        ("What did she do in May?", None),
        ("How many times did he win 4 games?", None),  # a number alone is no date
    ],
)
def test_named_period(query: str, period: tuple[datetime, datetime] | None) -> None:
    assert named_period(query) == period


def test_memories_dated_in_the_named_period_rise_and_nothing_is_added() -> None:
    memories = {
        "july": _memory("july", "We went to Woodhaven.", at=_utc(2022, 7, 20)),
        "june": _memory("june", "We went to the coast.", at=_utc(2022, 6, 20)),
    }
    ranked = [("june", 0.5), ("july", 0.45)]
    july = (_utc(2022, 7, 1), _utc(2022, 7, 31, 23, 59, 59))
    assert [i for i, _ in period_boost(ranked, memories, july, boost=0.1)] == ["july", "june"]
    assert [i for i, _ in period_boost([("june", 0.5)], memories, july, boost=0.1)] == ["june"]


def test_a_context_where_several_matched_lifts_its_members() -> None:
    def turn(memory_id: str, context: str) -> MemoryUnit:
        return replace(_memory(memory_id, "text"), context=context)

    memories = {"a1": turn("a1", "s1"), "a2": turn("a2", "s1"), "a3": turn("a3", "s1"), "b1": turn("b1", "s2")}
    ranked = [("b1", 0.6), ("a1", 0.55), ("a2", 0.5), ("a3", 0.5)]
    lifted = context_lift(ranked, memories, share=0.6)
    assert [i for i, _ in lifted] == ["a1", "a2", "a3", "b1"]  # a lone match in s2 is weaker than s1's three
    assert all(0 < score <= 0.6 for _, score in lifted)  # on the fused scale
    assert context_lift(ranked, memories, share=0.0) == ranked
