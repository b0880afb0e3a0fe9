"""Answer first, breadth that follows the question (``engine/synthesis/answer.py``), one rule at a time: broad and
narrow questions, the relative relevance floor (not moved by unrelated facts), the answer section and its heading,
the shared-subject lift, the delta floor, and the reasons a refresh gives for what it leaves out.

Relevance comes as the pipeline hands it over: each fact's hybrid recall score (``ScopeRead.relevance``); here the
scores are set by hand so each rule is tested on its own. Facts are embedded with the real MiniLM embedder."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_briefing import facts, memory
from test_briefing import scope as briefing_scope

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis.answer import DELTA_FLOOR, FLOOR, asks_speech, is_broad
from mindbank.engine.synthesis.compose import NOT_QUOTABLE, compose_briefing
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.eviction import evicted_reason
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

QUESTION = "What pets does Jolene have?"
PETS = [
    "Jolene: I adopted two cats last month, Luna and Susie, both tabbies from the shelter.",
    "Jolene: My snake Seraphim is a ball python, she is my oldest pet.",
    "Jolene: Luna hides under the bed all day, but Susie sleeps on my keyboard.",
]
OTHER = [
    "Jolene: I went for a morning jog along the river before work today.",
    "Jolene: I'm studying for my engineering licence exam in June, three evenings a week.",
    "Jolene: Our team is shipping the new water pump controller next month.",
    "Jolene: I booked flights to Lisbon for a long weekend with my college friends.",
    "Jolene: My mother visited and we cooked her lentil soup recipe together.",
    "Jolene: We repainted the living room a warm yellow colour on Saturday.",
]
PET_SCORES = [0.9, 1.0, 0.75]


def read_for(
    embedder: MiniLMEmbedder, query: str, hits: list[ScoredMemory], scores: dict[str, float], cited=()
) -> ScopeRead:  # type: ignore[no-untyped-def]
    """What the pipeline hands over (``test_briefing.scope``), with the facts' recall scores."""
    return replace(briefing_scope(embedder, query, hits, list(cited), cited=cited), relevance=scores)


def scope(other_score: float = 0.2, extra: int = 0) -> tuple[list[ScoredMemory], dict[str, float]]:
    """The pets, the other topics (each scored ``other_score``) and ``extra`` more unrelated facts (scored lower)."""
    unrelated = [f"Jolene: On day {n} I fixed the {w} in the garage with my neighbour Tom."
                 for n, w in enumerate(["shelf", "door", "lamp", "bench", "clock", "fan"] * 5)][:extra]  # fmt: skip
    hits = facts(*PETS, *OTHER, *unrelated)
    scores = {h.memory.id: s for h, s in zip(hits, PET_SCORES, strict=False)}
    scores |= {h.memory.id: other_score for h in hits[len(PETS) : len(PETS) + len(OTHER)]}
    scores |= {h.memory.id: 0.05 for h in hits[len(PETS) + len(OTHER) :]}
    return hits, scores


@pytest.mark.parametrize(
    ("question", "broad"),
    [
        ("What matters most to Caroline, and what is Caroline working on?", True),
        ("What plans do they share?", True),
        ("What is Sam doing?", True),
        ("What pets do they have, and what happened with them?", False),
        ("What is Priya training for, and how is it going?", False),
        ("When did Melanie run a charity race?", False),
    ],
)
def test_a_question_naming_no_topic_of_its_own_is_broad(question: str, broad: bool) -> None:
    assert is_broad(question) is broad


def test_a_narrow_question_opens_with_its_answer_under_a_heading_naming_its_subject(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope()
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                                read=read_for(embedder, QUESTION, hits, scores))  # fmt: skip
    document = parse_markdown(briefing.markdown)
    first = next(s for s in document.sections if s.heading)
    assert first.heading == "Pets"
    # most relevant first: the snake (1.0), the cats (0.9), Luna and Susie (0.75)
    assert [b.memory_ids[0] for b in first.blocks] == ["m1", "m0", "m2"]
    # breadth follows the question: the other topics score below the floor and share no word with the question or
    # the best answer, so they are not quoted
    assert set(briefing.cited) == {"m0", "m1", "m2"}
    assert all("below the relevance floor" in briefing.left_out[h.memory.id] for h in hits[3:])


def test_unrelated_facts_entering_the_scope_do_not_move_the_floor(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope(other_score=0.7)  # the other topics pass the floor (FLOOR × 1.0)
    assert FLOOR <= 0.7
    before = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                              read=read_for(embedder, QUESTION, hits, scores))  # fmt: skip
    more, more_scores = scope(other_score=0.7, extra=30)
    after = compose_briefing(source_query=QUESTION, hits=more, max_tokens=2048,
                             read=read_for(embedder, QUESTION, more, more_scores))  # fmt: skip
    assert set(before.cited) == set(after.cited)
    assert len(before.cited) == len(PETS) + len(OTHER)


def test_a_broad_question_keeps_its_breadth_and_has_no_answer_section(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope()
    query = "What matters most to Jolene, and what is Jolene working on?"
    briefing = compose_briefing(source_query=query, hits=hits, max_tokens=2048,
                                read=read_for(embedder, query, hits, scores))  # fmt: skip
    assert len(briefing.cited) == len(hits)  # every quotable fact: the floor does not apply


def test_a_fact_naming_the_answers_subject_is_lifted_to_the_answer(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope()
    news = ScoredMemory(memory("n0", "Jolene: Seraphim shed her skin in one piece this week, she is healthy.", 60), 0)
    scores["n0"] = 0.1  # no word of the question: recall ranks it low
    every = [*hits, news]
    briefing = compose_briefing(source_query=QUESTION, hits=every, max_tokens=2048,
                                read=read_for(embedder, QUESTION, every, scores))  # fmt: skip
    assert "n0" in briefing.cited


def test_a_month_or_weekday_is_no_subject_that_lifts_a_fact(embedder: MiniLMEmbedder) -> None:
    # "in June" in a pet fact and in an exam fact: the calendar names no one, so the exam stays where recall put it
    hits, scores = scope()
    month = ScoredMemory(memory("m0", "Jolene: Susie goes back to the vet in June for her jabs.", 60), 0)
    scores["m0"] = 0.95
    exam = next(h for h in hits if "exam in June" in h.memory.text)
    every = [*hits, month]
    briefing = compose_briefing(source_query=QUESTION, hits=every, max_tokens=2048,
                                read=read_for(embedder, QUESTION, every, scores))  # fmt: skip
    assert "m0" in briefing.cited
    assert exam.memory.id not in briefing.cited


def test_what_is_not_quotable_is_left_out_with_its_reason(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope()
    chat = ScoredMemory(memory("q0", "Deborah: Do you have any pets?", 3), 0)
    scores["q0"] = 0.95
    every = [*hits, chat]
    briefing = compose_briefing(source_query=QUESTION, hits=every, max_tokens=2048,
                                read=read_for(embedder, QUESTION, every, scores))  # fmt: skip
    assert briefing.left_out["q0"] == NOT_QUOTABLE


def test_delta_admits_a_new_fact_at_the_looser_bar_and_says_why_it_leaves_one_out(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope()
    first = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                             read=read_for(embedder, QUESTION, hits, scores))  # fmt: skip
    document = parse_markdown(first.markdown)
    cited = [h for h in hits if h.memory.id in set(first.cited)]
    near = ScoredMemory(memory("d0", "Jolene: I bought a heated rock for the terrarium at the reptile shop.", 70), 0)
    far = ScoredMemory(memory("d1", "Jolene: The water pump controller passed its field test in Ohio.", 71), 0)
    scores |= {"d0": (DELTA_FLOOR + FLOOR) / 2, "d1": DELTA_FLOOR / 2}  # d0: under the full floor, over the delta's
    left_out: dict[str, str] = {}
    operations, used = plan_delta_operations(
        document, [near, far], max_tokens=2048, source_query=QUESTION, left_out=left_out,
        read=read_for(embedder, QUESTION, [near, far], scores, cited=cited),
    )  # fmt: skip
    assert used == ["d0"] and operations
    assert left_out == {"d1": f"below the relevance floor {DELTA_FLOOR:.2f} (relevance {DELTA_FLOOR / 2:.2f})"}


def test_a_full_delta_on_a_narrow_question_drops_the_least_relevant_blocks_first(embedder: MiniLMEmbedder) -> None:
    hits, scores = scope(other_score=0.5)  # the other topics pass the floor here: the document is full of them
    first = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                             read=read_for(embedder, QUESTION, hits, scores))  # fmt: skip
    document = parse_markdown(first.markdown)
    cited = [h for h in hits if h.memory.id in set(first.cited)]
    budget = len(first.markdown) // 4 + 8  # about as many tokens as the document holds: no room for another block
    # a short fact that answers, against long, specific facts about other things already quoted
    answer = ScoredMemory(memory("d0", "Jolene: Susie the cat had her shots at the vet.", 70), 0)
    scores |= {"d0": 0.95}
    left_out: dict[str, str] = {}
    _, used = plan_delta_operations(
        document, [answer], max_tokens=budget, source_query=QUESTION, left_out=left_out,
        read=read_for(embedder, QUESTION, [answer], scores, cited=cited),
    )  # fmt: skip
    assert used == ["d0"] and "d0" not in left_out
    # what made room is on record: each old fact evicted, least relevant to the question first
    assert left_out and set(left_out.values()) == {evicted_reason("max_tokens", by_relevance=True)}
    assert set(left_out) <= set(first.cited)


ADVICE = "Evan: But remember, it's important to believe in yourself and take it one day at a time, Sam."


@pytest.mark.parametrize(
    ("question", "speech"),
    [
        ("According to Evan, what is important for Sam to believe in concerning his weight?", True),
        ("What does Jon tell Gina he won't do?", True),
        ("What city did Tim suggest to John for the team trip?", True),
        ("What pets does Jolene have?", False),
        ("When did Joanna plan to go over to Nate's?", False),
    ],
)
def test_a_question_about_what_someone_said_is_recognised(question: str, speech: bool) -> None:
    assert asks_speech(question) is speech


def test_advice_answers_a_question_about_what_someone_said_and_nothing_else(embedder: MiniLMEmbedder) -> None:
    hits = facts(ADVICE, "Sam: I'm struggling with my weight and it's affecting my confidence.", *OTHER)
    scores = {h.memory.id: 1.0 - 0.05 * n for n, h in enumerate(hits)}
    asked = "According to Evan, what is important for Sam to believe in concerning his weight?"
    said = compose_briefing(source_query=asked, hits=hits, max_tokens=2048,
                            read=read_for(embedder, asked, hits, scores))  # fmt: skip
    assert "m0" in said.cited and "believe in yourself" in said.markdown
    # the same request is no fact of Evan's for a question that does not ask what he said
    other = "How does Sam feel about his weight?"
    plain = compose_briefing(source_query=other, hits=hits, max_tokens=2048,
                             read=read_for(embedder, other, hits, scores))  # fmt: skip
    assert plain.left_out["m0"] == NOT_QUOTABLE


def test_a_delta_quotes_new_advice_for_a_question_about_what_someone_said(embedder: MiniLMEmbedder) -> None:
    asked = "What did Evan tell Sam about his weight?"
    hits = facts("Sam: I'm struggling with my weight and it's affecting my confidence.", *OTHER)
    scores = {h.memory.id: 1.0 - 0.05 * n for n, h in enumerate(hits)}
    first = compose_briefing(source_query=asked, hits=hits, max_tokens=2048,
                             read=read_for(embedder, asked, hits, scores))  # fmt: skip
    cited = [h for h in hits if h.memory.id in set(first.cited)]
    advice = ScoredMemory(memory("d0", ADVICE, 70), 0)
    scores["d0"] = 0.9
    for question, quoted in ((asked, True), ("How does Sam feel about his weight?", False)):
        left_out: dict[str, str] = {}
        _, used = plan_delta_operations(
            parse_markdown(first.markdown), [advice], max_tokens=2048, source_query=question, left_out=left_out,
            read=read_for(embedder, question, [advice], scores, cited=cited),
        )  # fmt: skip
        assert (used == ["d0"]) is quoted
        assert left_out == ({} if quoted else {"d0": NOT_QUOTABLE})
