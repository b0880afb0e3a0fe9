"""A question about plans, goals or upcoming events is answered by statements about what is to come
(``engine/synthesis/tense.py``, ``answer.to_come``): a quote speaking only of the past answers it at a share of its
relevance; other questions and present or future statements are left alone."""

from __future__ import annotations

import pytest
from test_briefing import facts

from mindbank.engine.synthesis.answer import is_broad, to_come
from mindbank.engine.synthesis.selection import candidates
from mindbank.engine.synthesis.tense import PAST_SHARE, asks_future, past_only


@pytest.mark.parametrize(
    ("question", "future"),
    [
        ("What plans, goals and upcoming events do they talk about?", True),
        ("What is Nate planning to do next summer?", True),
        ("What are Maria's goals for the shelter?", True),
        ("What does Tomas do?", False),
        ("When did Joanna start writing her third screenplay?", False),
    ],
)
def test_a_question_about_what_is_to_come(question: str, future: bool) -> None:
    assert asks_future(question) is future


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("After one week of night duty I could barely stand up.", True),  # a past hardship
        ("We painted the fence green last weekend.", True),
        ("My first bowl collapsed into a heap.", False),  # a noun subject: not read as past
        ("I make this honey chicken with roasted veg a lot.", False),  # "roasted" is an adjective here
        ("I'm going to retile the kitchen before summer.", False),  # an intention
        ("I signed up for Portuguese lessons with a tutor.", False),  # a commitment
        ("The race is on the 4th of May and my plan has me running four days a week.", False),
        ("I do my long run on the second day off.", False),  # a routine, in the present
        ("I need new shoes for the trail race.", False),  # "need" is no past form
    ],
)
def test_a_quote_that_speaks_only_of_the_past(text: str, past: bool) -> None:
    assert past_only(text) is past


def test_a_past_only_fact_answers_a_question_about_plans_at_a_share_of_its_relevance() -> None:
    hits = facts(
        "Sam: After one week of night duty I could barely stand up, the ward was chaos.",
        "Sam: Next spring I want to run the Lisbon marathon with my sister.",
    )
    cands = [c.__class__(c.hit, c.quote, c.vector, 0.8) for c in candidates(hits)]
    planned = to_come(cands, "What plans and goals does Sam talk about?")
    assert [c.relevance for c in planned] == pytest.approx([0.8 * PAST_SHARE, 0.8])
    assert [c.relevance for c in to_come(cands, "What does Sam do at work?")] == [0.8, 0.8]


@pytest.mark.parametrize(
    ("question", "broad"),
    [
        ("What plans, goals and upcoming events do they talk about?", True),  # names no topic of its own
        ("What do they talk about?", True),
        ("What upcoming races do they mention?", False),  # races: a topic
    ],
)
def test_talk_and_upcoming_events_name_no_topic(question: str, broad: bool) -> None:
    assert is_broad(question) is broad
