"""A sentence said to the other speaker in the second person (``selection.Candidate.listener``,
``salience.speaks_to_listener``): it tells of the listener's life, so it is shown as said to them ("Tomas, to
Priya: …"), may support a question about them (``attribution.py``) in a full refresh and in a delta, and never
titles a section (``compose.heading_quotes``). A question is ranked without the names of the scope's speakers
(``attribution.without_speakers``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_briefing import facts
from test_briefing import scope as briefing_scope

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis.attribution import without_speakers
from mindbank.engine.synthesis.compose import compose_briefing
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.salience import speaks_to_listener
from mindbank.engine.synthesis.selection import candidates
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

NEWS = "Priya: I joined the climbing gym downtown and they run bouldering, yoga and spin classes."
TO_PRIYA = "Tomas: Mixing bouldering with yoga sounds like a smart way to balance your training - I might try it too!"
PRIYA = [
    "Priya: I work night shifts as a nurse on the cardiology ward at the hospital.",
    "Priya: The race is the Riverside Half on the 4th of May, and I run four days a week around my shifts.",
]
TOMAS_OWN = "Tomas: I finished stripping the hallway wallpaper, all four layers, and painted the walls green."
QUESTION = "What does Priya think about the classes at her climbing gym?"


@pytest.mark.parametrize(
    ("text", "speaks"),
    [
        ("Trying new classes sounds like a fun way to switch up your exercise routine - I should give it a go!", True),
        ("You're going to love the view from the summit.", True),
        ("I painted the hallway walls green last weekend.", False),
        # the other speaker's question in front of an answer is not what the speaker said
        ('[Priya asked: "Did you paint it yourself?"] I painted it with my brother over two weekends.', False),
    ],
)
def test_a_quote_speaks_to_the_listener_when_what_the_speaker_said_is_in_the_second_person(
    text: str, speaks: bool
) -> None:
    assert speaks_to_listener(text) is speaks


def _read(embedder: MiniLMEmbedder, hits: list[ScoredMemory], previous: dict[str, str], cited=()) -> ScopeRead:  # type: ignore[no-untyped-def]
    scores = {h.memory.id: 0.5 for h in hits}
    return replace(briefing_scope(embedder, QUESTION, hits, cited=cited), relevance=scores, previous=previous)


def test_the_listener_is_the_speaker_of_the_turn_before_when_the_quote_speaks_to_them() -> None:
    hits = facts(NEWS, TO_PRIYA, TOMAS_OWN)
    previous = {hits[1].memory.id: NEWS, hits[2].memory.id: TO_PRIYA}
    found = {c.id: c.listener for c in candidates(hits, previous=previous)}
    assert found[hits[1].memory.id] == "Priya"
    assert found[hits[2].memory.id] == ""  # Tomas's own news, no second person
    assert found[hits[0].memory.id] == ""  # no turn before: nobody it could be said to
    # the same speaker's turn before is no listener
    same = facts("Tomas: I bought new climbing shoes.", TO_PRIYA)
    assert candidates(same, previous={same[1].memory.id: same[0].memory.text})[1].listener == ""


def test_a_sentence_said_to_priya_supports_a_question_about_her_shown_as_said_to_her(
    embedder: MiniLMEmbedder,
) -> None:
    hits = facts(*PRIYA, NEWS, TO_PRIYA, TOMAS_OWN)
    previous = {hits[3].memory.id: NEWS, hits[4].memory.id: TO_PRIYA}
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                                read=_read(embedder, hits, previous))  # fmt: skip
    assert hits[3].memory.id in briefing.cited
    assert "Tomas, to Priya: Mixing bouldering with yoga" in briefing.markdown
    assert "Tomas: Mixing" not in briefing.markdown
    # what Tomas says of his own life is still not an answer about Priya
    assert briefing.left_out[hits[4].memory.id].startswith("about another person: said by Tomas")
    # it never titles a section: no heading rests on its words alone
    headings = {s.heading.lower() for s in parse_markdown(briefing.markdown).sections if s.heading}
    assert not any({"mixing", "balance", "smart"} & set(h.split()) for h in headings)


def test_without_the_second_person_the_other_speakers_turn_is_still_left_out(embedder: MiniLMEmbedder) -> None:
    remark = "Tomas: Mixing bouldering with yoga is how my brother trains for his climbing trips, I might try it."
    hits = facts(*PRIYA, NEWS, remark)
    previous = {hits[3].memory.id: NEWS}
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                                read=_read(embedder, hits, previous))  # fmt: skip
    assert hits[3].memory.id not in briefing.cited
    assert briefing.left_out[hits[3].memory.id].startswith("about another person: said by Tomas")


def test_a_delta_adds_a_sentence_said_to_the_person_asked_about(embedder: MiniLMEmbedder) -> None:
    old = facts(*PRIYA, NEWS)
    briefing = compose_briefing(source_query=QUESTION, hits=old, max_tokens=2048,
                                read=_read(embedder, old, {}))  # fmt: skip
    new = facts(TO_PRIYA, TOMAS_OWN, prefix="n", first_day=90)
    left_out: dict[str, str] = {}
    previous = {new[0].memory.id: NEWS, new[1].memory.id: TO_PRIYA}
    ops, used = plan_delta_operations(parse_markdown(briefing.markdown), new, max_tokens=2048,
                                      read=_read(embedder, [*old, *new], previous, cited=old),
                                      source_query=QUESTION, left_out=left_out)  # fmt: skip
    assert used == [new[0].memory.id] and ops
    assert any("Tomas, to Priya: Mixing bouldering" in getattr(op, "text", "") for op in ops)
    assert left_out[new[1].memory.id].startswith("about another person: said by Tomas")


# ---------------------------------------------------------------- relevance without the speakers' names
@pytest.mark.parametrize(
    ("question", "ranked_by"),
    [
        ("What nickname does Nate use for Joanna?", "What nickname does use for?"),
        (
            "When did Joanna plan to go over to Nate's and share recipes?",
            "When did plan to go over to and share recipes?",
        ),
        ("What did Nate’s friends tell Joanna?", "What did friends tell?"),  # a typographic possessive
        # one speaker of two: the name tells whose turns answer it
        ("How long has Nate been creating art?", "How long has Nate been creating art?"),
        ("What about Nate and Joanna?", "What about Nate and Joanna?"),  # nothing left to rank by: unchanged
        ("Which city have both Jean and John visited?", "Which city have both Jean and John visited?"),  # no speaker
    ],
)
def test_a_question_naming_every_speaker_is_ranked_without_their_names(question: str, ranked_by: str) -> None:
    assert without_speakers(question, ["Nate", "Joanna", "Nate"]) == ranked_by
    assert without_speakers(question, ["Nate"]) == question  # a single speaker: every turn is theirs anyway


def test_no_heading_rests_on_sentences_said_to_the_listener(embedder: MiniLMEmbedder) -> None:
    question = "What matters most to Priya?"
    said = [
        "Tomas: Your bouldering sessions at the climbing gym look intense - I might join you for bouldering next week!",
        "Tomas: I bet your bouldering coach is proud of your progress, I watched your bouldering video twice.",
    ]
    hits = facts(*PRIYA, NEWS, *said)
    previous = {hits[3].memory.id: NEWS, hits[4].memory.id: NEWS}
    read = replace(briefing_scope(embedder, question, hits), previous=previous)
    briefing = compose_briefing(source_query=question, hits=hits, max_tokens=2048, read=read)
    assert {hits[3].memory.id, hits[4].memory.id} <= set(briefing.cited)
    assert "Tomas, to Priya: Your bouldering sessions" in briefing.markdown
    headings = [s.heading.lower() for s in parse_markdown(briefing.markdown).sections if s.heading]
    # "climbing gym" is in one of Priya's facts and in one said to her: a heading rests on two facts, and a
    # sentence said to the listener is not one of them
    assert not any("bouldering" in h or "climbing" in h for h in headings), headings
