"""What an offline observation states: the salience bar, attribution, the second-witness rule for short statements,
history in the text, and the merge guards of the extractive consolidator (numbers, names)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from mindbank.domain.records import MemoryUnit
from mindbank.engine.consolidate.addressed import without_vocatives
from mindbank.engine.consolidate.extractive import ExtractiveConsolidator
from mindbank.engine.consolidate.statements import names, numbers, split_history, stated, statement, with_history
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: Hey Mel! Long time no talk.", None),
        ("Caroline: Thanks, Melanie! Your kind words mean a lot.", None),
        ("Caroline: How have you been lately?", None),
        ("Melanie: Family time matters to me.", ("Melanie: Family time matters to me.", False)),
        ("Xavier: I live in Paris with my partner.", ("Xavier: I live in Paris with my partner.", True)),
        (
            "John: Hi Maria, since we last chatted, I'm volunteering as a mentor for a local school.",
            ("John: Since we last chatted, I'm volunteering as a mentor for a local school.", True),
        ),
        (
            "Deborah: Max is my mother's cat. I took him when my mother passed away. How are your cats?",
            ("Deborah: Max is my mother's cat. I took him when my mother passed away.", True),
        ),
    ],
)
def test_what_a_fact_states(text: str, expected: tuple[str, bool] | None) -> None:
    assert stated(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Maria: Cherish those family time moments!",  # an exhortation: an exclamation about no one
        "Nate: Go for it! Follow your passion, but give acting a shot as well.",
        "Jon: That's so cool! Weddings are definitely full of joy!",  # reactions
        "Sam: Oof, Sam, so embarrassing!",  # a vocative is the address, not a name the sentence gives
        "Evan: Alright Sam, have fun with it!",
        "Jon: Nice one, Gina! You never shy away from a challenge and always try something new.",  # a compliment
        "Maria: Wow, John! Your hard work will definitely start conversations and create positive change.",
        "Maria: Obrigado, John! Your support means the world to me.",  # a short thanks to the listener
        "Joanna: Got it Nate, I'll see you soon!",
        "Joanna: I'll make sure to keep you updated.",
    ],
)
def test_reactions_exhortations_and_talk_to_the_listener_state_nothing(text: str) -> None:
    assert stated(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a statement beside the reaction is kept, without the reaction and the name it is said to
        (
            "Jon: Cool, Gina! I love all dances, but contemporary is my top pick since 2019.",
            ("Jon: I love all dances, but contemporary is my top pick since 2019.", True),
        ),
        # a pronoun subject is about someone: a description, not a reaction
        (
            "Nate: I love this series. It has adventures, magic, and great characters - it's a must-read!",
            ("Nate: I love this series. It has adventures, magic, and great characters - it's a must-read!", True),
        ),
        # a name in a phrase of the sentence is not a vocative
        (
            "Bob: In Lisbon, I joined the data platform team.",
            ("Bob: In Lisbon, I joined the data platform team.", True),
        ),
        # second person beside a first-person statement stays (it says something about the speaker)
        (
            "Jon: Taking your advice, I'm sprucing up my business plan and tweaking my pitch to investors.",
            ("Jon: Taking your advice, I'm sprucing up my business plan and tweaking my pitch to investors.", True),
        ),
    ],
)
def test_what_an_observation_keeps_beside_talk_to_the_listener(text: str, expected: tuple[str, bool]) -> None:
    assert stated(text) == expected


def test_vocatives_are_removed_but_phrases_and_photo_descriptions_are_kept() -> None:
    assert without_vocatives("Alright Sam, have fun with it!") == "Have fun with it!"
    assert without_vocatives("I 100% agree, Mel.") == "I 100% agree."
    assert without_vocatives("Oof, Sam, so embarrassing!") == "So embarrassing!"  # a capitalised opener too
    # thanks to the listener is the address too
    assert without_vocatives("Thanks for the idea, my mate and I are going kayaking on the lake!") == (
        "My mate and I are going kayaking on the lake!"
    )
    for unchanged in ("In Paris, I met Tom.", "Last March, I joined the team.", "[shares a photo: a dog, Max]",
                      "Thanks, Gina!"):  # fmt: skip
        assert without_vocatives(unchanged) == unchanged


def test_a_short_statement_to_the_listener_is_not_witnessed(embedder: MiniLMEmbedder) -> None:
    promise = "Joanna: I'll make sure to keep you updated."
    assert plan([promise, promise], embedder) == []
    # a name in a statement to the listener does not make it stand alone (they are the listener's keys)
    assert stated("Sam: Evan, I'd put a GPS sensor on your keys!") is None


def test_history_round_trips_newest_first_and_is_capped() -> None:
    history = [
        ("3 May 2024", "I live in Rome."),
        ("1 March 2024", "I live in Berlin."),
        ("1 Jan 2024", "I live in Oslo."),
    ]
    text = with_history("Xavier: I moved to Paris.", [*history, ("1 Jan 2023", "I live in Lima.")])
    assert text.count("(earlier, ") == 3 and "Lima" not in text
    assert split_history(text) == ("Xavier: I moved to Paris.", history)
    assert split_history("Xavier: I moved (for good) to Paris.") == ("Xavier: I moved (for good) to Paris.", [])


def test_names_and_numbers() -> None:
    assert names("Tom: My sister Clara lives in Lisbon on Sundays.") == {"Clara", "Lisbon"}
    assert numbers("Lena: My seven-year-old daughter has 2 cats.") == {"seven", "2"}


def fact(i: int, text: str, embedder: MiniLMEmbedder) -> tuple[MemoryUnit, np.ndarray]:
    unit = MemoryUnit(
        id=f"f{i}", bank_id="b", text=text, fact_type="world", tags=("t",), context=None, metadata={},
        document_id=None, chunk_id=None, occurred_start=None, occurred_end=None,
        mentioned_at=T0 + timedelta(days=i), created_at=T0, updated_at=T0,
    )  # fmt: skip
    return unit, embedder.embed([text])[0]


def plan(texts: list[str], embedder: MiniLMEmbedder) -> list[tuple[str, tuple[str, ...]]]:
    facts, vectors = [], {}
    for i, text in enumerate(texts):
        unit, vector = fact(i, text, embedder)
        facts.append(unit)
        vectors[unit.id] = vector
    found = ExtractiveConsolidator().plan(facts, vectors, [], "combined")
    return [(c.text, c.source_memory_ids or ()) for c in found.creates]


def test_a_short_statement_needs_a_second_witness(embedder: MiniLMEmbedder) -> None:
    assert plan(["Melanie: Family time matters to me."], embedder) == []
    witnessed = plan(["Melanie: Family time matters to me.", "Melanie: Family time matters to me."], embedder)
    assert witnessed == [("Melanie: Family time matters to me.", ("f0", "f1"))]


def test_different_people_or_numbers_are_different_observations(embedder: MiniLMEmbedder) -> None:
    two_people = [
        "Tom: My sister Clara lives in Lisbon with her two kids.",
        "Tom: My brother Paul lives in Porto with his wife.",
    ]
    assert len(plan(two_people, embedder)) == 2
    two_runs = ["Sam: I ran 8 km along the river this morning.", "Sam: I ran 10 km along the river this morning."]
    assert len(plan(two_runs, embedder)) == 2
    paraphrases = ["Raj: I play the violin in a community orchestra every Thursday.",
                   "Raj: Every Thursday I play violin with a community orchestra."]  # fmt: skip
    assert [sources for _, sources in plan(paraphrases, embedder)] == [("f0", "f1")]


# the turn before: the rules of engine/synthesis/exchange.py, as the briefing applies them
NEWS = "Andrew: We adopted two German Shepherds from the shelter in Portland last week."
BOOK_QUESTION = "Caroline: What was your favorite book when you were a kid?"


def test_a_reaction_to_the_news_before_it_states_nothing() -> None:
    reaction = "Audrey: German Shepherds are indeed awesome and loyal companions for hiking trips!"
    assert stated(reaction) is not None  # alone it reads as a statement ...
    assert stated(reaction, NEWS) is None  # ... after the news it is a comment on it
    # the speaker's own statement after the news stays
    own = "Audrey: I adopted a border collie from the same shelter in 2019."
    assert stated(own, NEWS) == (own, True)
    # a short statement read with the rest of its turn does not take the reaction back in
    turn = "Audrey: German Shepherds are such loyal and smart companions for hiking! I walk Pepper daily."
    assert stated(turn) == (turn, True)
    assert stated(turn, NEWS) == ("Audrey: I walk Pepper daily.", True)


def test_a_short_answer_carries_the_question_it_answers() -> None:
    answer = 'Melanie: I loved reading "Charlotte\'s Web" as a kid.'
    assert stated(answer) == (answer, True)  # alone: a short statement that names something
    assert stated(answer, BOOK_QUESTION) == (
        'Melanie: [Caroline asked: "What was your favorite book when you were a kid?"] I loved reading '
        '"Charlotte\'s Web" as a kid.',
        True,
    )
    # a question that says nothing ("How are you?") lends nothing; a statement that says enough needs none
    assert stated(answer, "Caroline: How are you?") == (answer, True)
    long = "Melanie: I read Charlotte's Web to my kids every night before bed last summer."
    assert stated(long, BOOK_QUESTION) == (long, True)


def test_an_answer_leaning_on_the_question_is_stated_behind_it() -> None:
    answer = "Tomas: They signed it to show our friendship and appreciation."
    asked = "Priya: That's so cool of your teammates. Did they sign it for a special reason?"
    assert stated(answer) is None  # "they" stands for no one in its own turn
    assert stated(answer, asked) == (
        'Tomas: [Priya asked: "Did they sign it for a special reason?"] They signed it to show our friendship and '
        "appreciation.",
        True,
    )


def test_the_listeners_name_is_their_address_not_something_the_statement_names() -> None:
    reply = "Joanna: I love the thought Nate!"
    news = "Nate: I might adopt a third turtle for the tank next month."
    assert stated(reply) == (reply, True)  # "Nate" reads as a name the statement gives
    assert stated(reply, news) == (reply, False)  # said to Nate: too short to stand alone


def test_a_statement_is_compared_by_what_the_speaker_said(embedder: MiniLMEmbedder) -> None:
    text = 'Melanie: [Caroline asked: "What was your favorite book when you were a kid?"] I loved "Charlotte\'s Web".'
    unit, vector = fact(0, text, embedder)
    said = statement(unit, text, vector)
    assert said is not None and said.unit.text == text
    assert "asked" not in said.quoted.text and "Charlotte" in said.quoted.text
    assert names(said.quoted.text) == {"Charlotte's", "Web"}


def test_consolidation_reads_each_fact_with_the_turn_before_it(embedder: MiniLMEmbedder) -> None:
    texts = [NEWS, "Audrey: German Shepherds are indeed awesome and loyal companions for hiking trips!",
             BOOK_QUESTION, 'Melanie: I loved reading "Charlotte\'s Web" as a kid.']  # fmt: skip
    facts, vectors = [], {}
    for i, text in enumerate(texts):
        unit, vector = fact(i, text, embedder)
        facts.append(unit)
        vectors[unit.id] = vector
    previous = {"f1": NEWS, "f3": BOOK_QUESTION}
    found = ExtractiveConsolidator().plan(facts, vectors, [], "combined", previous=previous)
    assert [(c.text, c.source_memory_ids) for c in found.creates] == [
        (NEWS, ("f0",)),
        ('Melanie: [Caroline asked: "What was your favorite book when you were a kid?"] I loved reading '
         '"Charlotte\'s Web" as a kid.', ("f3",)),
    ]  # fmt: skip
