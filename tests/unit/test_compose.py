"""The extractive composer: informative facts only, titled sections, citations, budget (the briefing rules one by
one: test_briefing.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from mindbank.domain.document import count_tokens, parse_markdown, render_markdown
from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.engine.synthesis.compose import compose_markdown
from mindbank.engine.synthesis.salience import quote


def hit(i: int, text: str) -> ScoredMemory:
    now = datetime(2025, 1, 1 + i, tzinfo=UTC)
    memory = MemoryUnit(
        id=f"m{i}", bank_id="b", text=text, fact_type="world", tags=(), context=None, metadata={},
        document_id=None, chunk_id=None, occurred_start=now, occurred_end=now, mentioned_at=now, created_at=now,
        updated_at=now,
    )  # fmt: skip
    return ScoredMemory(memory, 1.0 / (i + 1))


def test_questions_and_small_talk_are_never_quoted() -> None:
    """Questions, reactions, greetings and small talk are kept as memories but a briefing never quotes them."""
    assert quote("Tom: Which is?") is None
    assert quote("Tom: Go on!") is None
    assert quote("Tom: How is the garden project coming along these days?") is None
    assert quote("Tom: I repaired the greenhouse roof and planted tomatoes.") is not None


FACTS = [
    "Eva: I am training for a trail race in the Alps next autumn.",
    "Eva: My trail race training means hill repeats every Tuesday.",
    "Eva: Cool!",
    "Eva: I started learning Portuguese with an online tutor.",
    "Eva: My Portuguese tutor gives me homework on verbs every week.",
    "Eva: I adopted a rescue greyhound called Pepper last spring.",
]


def test_compose_groups_cites_and_keeps_budget() -> None:
    hits = [hit(i, t) for i, t in enumerate(FACTS)]
    markdown, cited = compose_markdown(source_query="What is Eva doing?", hits=hits, max_tokens=2048)
    doc = parse_markdown(markdown)
    assert render_markdown(doc) == markdown
    assert "m2" not in cited  # "Cool!" is never quoted
    assert set(cited) == {"m0", "m1", "m3", "m4", "m5"}
    assert list(doc.memory_ids()) and set(doc.memory_ids()) == set(cited)
    headings = [s.heading for s in doc.sections if s.heading]
    assert headings[0].startswith("Trail race") and headings[1] == "Portuguese tutor"
    # a heading rests on two facts: a lone fact's phrase ("Pepper", "Rescue greyhound") names what it mentions
    assert headings[2] == "Other notes"
    for section in doc.sections:
        for block in section.blocks[1:] if not section.heading else section.blocks:
            assert len(block.memory_ids) == 1


def test_compose_respects_a_small_budget_and_empty_input() -> None:
    hits = [hit(i, t) for i, t in enumerate(FACTS)]
    markdown, cited = compose_markdown(source_query="What is Eva doing?", hits=hits, max_tokens=60)
    assert count_tokens(markdown) <= 60 and cited
    assert compose_markdown(source_query="q", hits=[], max_tokens=100) == ("", [])
    assert compose_markdown(source_query="q", hits=[hit(0, "Eva: Wow!")], max_tokens=100) == ("", [])


def test_observations_speak_for_their_sources_and_duplicates_are_quoted_once() -> None:
    from dataclasses import replace

    facts = [
        hit(0, "Eva: I adopted a rescue greyhound called Pepper."),
        hit(1, "Eva: I adopted a rescue greyhound named Pepper."),
    ]
    observation = hit(2, "Eva: I adopted a rescue greyhound called Pepper.")
    observation = replace(
        observation, memory=replace(observation.memory, fact_type="observation", source_memory_ids=("m0", "m1"))
    )
    duplicate = hit(3, "Eva:  I adopted a rescue greyhound called Pepper.")
    markdown, cited = compose_markdown(source_query="q", hits=[*facts, observation, duplicate], max_tokens=500)
    # its sources are in the read: they speak for themselves, and the observation is never quoted beside them
    assert "m2" not in cited and {"m0", "m1"} <= set(cited)
    blocks = [b for s in parse_markdown(markdown).sections for b in s.blocks if b.memory_ids]
    assert ("m0", "m3") in [b.memory_ids for b in blocks]  # the same text again is a repeat of its block
    # without its sources in the read, the observation is quoted, the repeat folded into it
    markdown, cited = compose_markdown(source_query="q", hits=[observation, duplicate], max_tokens=500)
    assert cited == ["m2", "m3"]
    (block,) = [b for s in parse_markdown(markdown).sections for b in s.blocks if b.memory_ids]
    assert block.memory_ids == ("m2", "m3") and "(mentioned 2 times, last 4 Jan 2025)" in block.text


def test_an_observation_with_nothing_quotable_leaves_its_source_to_speak() -> None:
    from dataclasses import replace

    from mindbank.engine.synthesis.selection import candidates

    new = hit(1, "Maria: The new puppy is learning commands and house training.")
    # an observation of it and an earlier fact (m0, not in the read) whose text has nothing to quote (its statement was cut to a reaction): it cannot speak
    # for the new fact, which is quoted itself rather than lost
    observation = hit(2, "Maria: Awesome, John!")
    observation = replace(
        observation, memory=replace(observation.memory, fact_type="observation", source_memory_ids=("m0", "m1"))
    )
    assert [c.id for c in candidates([new, observation])] == ["m1"]
    # one that has something to say speaks for its source, as before
    said = replace(observation, memory=replace(observation.memory, text="Maria: The puppy is learning commands."))
    assert [c.id for c in candidates([new, said])] == ["m2"]
