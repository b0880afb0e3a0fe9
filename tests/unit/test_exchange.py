"""A turn read with the other speaker's turn before it (``engine/synthesis/exchange.py``): which turn that is, which
sentences react to its news (never quoted as the speaker's fact), and which answer its question (quoted behind it);
a question naming someone who is not a speaker is narrow (``answer.is_broad``); and a full refresh keeps the current
document's layout (``layout.py``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.engine.synthesis.answer import is_broad, scope_names
from mindbank.engine.synthesis.blocks import Unit
from mindbank.engine.synthesis.exchange import (
    asked_note,
    listener_of,
    previous_turns,
    question_of,
    reacts_to,
    split_asked_note,
)
from mindbank.engine.synthesis.layout import follow_layout
from mindbank.engine.synthesis.salience import Quote, quote
from mindbank.engine.synthesis.selection import Candidate

T0 = datetime(2024, 5, 4, 18, 0, tzinfo=UTC)
BISCUIT = "Priya: Like I was hit by a bus, in a good way. Biscuit and Anjali were waiting at the finish with a sign."
VERBS = "Priya: I have a tutor now, and I do fifteen minutes on a language app during my break at the hospital."


def unit(
    memory_id: str, text: str, seconds: float, context: str | None = "s1", created: int = 0, seq: int = 0
) -> MemoryUnit:
    when = T0 + timedelta(seconds=seconds)
    return MemoryUnit(
        id=memory_id, bank_id="b", text=text, fact_type="world", tags=(), context=context, metadata={},
        document_id=None, chunk_id=None, occurred_start=when, occurred_end=when, mentioned_at=when,
        created_at=T0 + timedelta(milliseconds=created), updated_at=T0, seq=seq,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sentence", "previous"),
    [
        ("Biscuit in a bandana is the real winner here.", BISCUIT),  # names what the news named
        ("Fifteen minutes of verbs on a nursing break is serious commitment.", VERBS),  # a third of its words
        ("Biscuit the beagle at the finish, that I would like to see.", BISCUIT),  # opens on it, "I" comes after
    ],
)
def test_a_comment_on_the_other_speakers_news_is_a_reaction(sentence: str, previous: str) -> None:
    assert reacts_to(sentence, previous)
    assert quote(f"Tomas: {sentence}") is not None  # alone it reads as a statement ...
    assert quote(f"Tomas: {sentence}", previous) is None  # ... after the news it is a comment on it


@pytest.mark.parametrize(
    ("sentence", "previous"),
    [
        ("I ran fifteen minutes on my break too, around the hospital car park.", VERBS),  # first person: his own
        ("Biscuit and I ran to the finish with Anjali yesterday.", BISCUIT),  # he is in the opening clause
        ("Biscuit in a bandana is the real winner here.", "Priya: Did Biscuit wear the bandana at the finish?"),
        ("The new kitchen tiles arrive on Thursday from the shop in Leeds.", BISCUIT),  # shares nothing
    ],
)
def test_own_statements_and_answers_are_not_reactions(sentence: str, previous: str) -> None:
    assert not reacts_to(sentence, previous)


def test_an_answer_with_only_a_pronoun_subject_is_quoted_behind_the_question() -> None:
    previous = "Tim: That's so cool of your teammates. Did they sign it for a special reason?"
    answer = "John: Thanks! They signed it to show our friendship and appreciation."
    assert quote(answer) is None  # "They signed it": nothing in the turn says who or what
    found = quote(answer, previous)
    assert found is not None
    assert found.text == (
        '[Tim asked: "Did they sign it for a special reason?"] They signed it to show our friendship and appreciation.'
    )


def test_a_short_answer_borrows_the_questions_words() -> None:
    previous = "Tim: Mmm, that sounds delicious, John! Can I get the recipe for it?"
    answer = "John: Sure thing! I can write it down for you and mail it to you."
    assert quote(answer) is None
    found = quote(answer, previous)
    assert found is not None and found.text.startswith('[Tim asked: "Can I get the recipe for it?"] I can write')


def test_an_answer_that_stands_alone_carries_no_note() -> None:
    previous = "Tim: What is it about him that makes him so inspiring for you?"
    answer = "John: Aragorn's brave, selfless, down-to-earth attitude is what inspired me."
    found = quote(answer, previous)
    assert found is not None and found.text == quote(answer).text  # type: ignore[union-attr]


def test_the_question_a_turn_ends_with() -> None:
    assert question_of("Tim: Great game! Did they sign it? [shares a photo: a ball]") == "Did they sign it?"
    assert question_of("Tim: Did they sign it? Great game!") == ""
    assert asked_note("Did they sign it?") == '[asked: "Did they sign it?"] '
    assert asked_note("Tim: Great game!") == ""


def test_the_turn_before_is_the_other_speakers_last_moment_in_the_same_context() -> None:
    turns = [
        unit("a1", "Priya: I ran the Riverside Half in 1:58.", 0, created=1),
        unit("a2", "Priya: Biscuit was waiting at the finish.", 0, created=2),  # the same turn, a second piece
        unit("b", "Tomas: Biscuit in a bandana is the real winner here.", 1),
        unit("c", "Tomas: I painted the hallway green.", 2),  # his own turn before: no reply
        unit("d", "Priya: Did you pick the colour?", 3, context="s2"),  # another session
        unit("e", "Tomas: I did, last week.", 4, context="s1"),
        unit("f", "Tomas: Later that evening I cooked.", 2 + 7200),  # too long after
        unit("g", "A note without a speaker.", 5),
    ]
    found = previous_turns(turns, turns)
    assert found == {
        "b": "Priya: I ran the Riverside Half in 1:58. Biscuit was waiting at the finish.",
    }


def test_the_pieces_of_one_turn_before_are_joined_in_the_order_they_were_written() -> None:
    # one write stamps every piece of a long turn alike (created_at): their ids sort against the write order,
    # and only the store's sequence puts the question the reply answers last
    turns = [
        unit("z", "Jon: I found a place with great light for the studio.", 0, seq=7),
        unit("a", "Jon: Did you ever visit Rome?", 0, seq=8),
        unit("m", "Gina: Been only to Rome once, with my sister.", 1, seq=9),
    ]
    assert previous_turns(turns[2:], turns) == {
        "m": "Jon: I found a place with great light for the studio. Did you ever visit Rome?"
    }
    assert question_of(previous_turns(turns[2:], turns)["m"]) == "Did you ever visit Rome?"


def test_an_observation_is_no_turn_before_but_is_read_with_its_facts() -> None:
    # consolidation dates an observation at its fact's moment, in its session, under its speaker: read as a piece of
    # that turn it would end it with a statement, and the reply would lose the question it answers; an observation
    # restating the reply is read with the same question (a knowledge page quotes "It's Shia Labeouf!" behind it)
    question = unit("q", "John: The students are doing great. How's your new pup doing, Maria?", 0, seq=1)
    said = replace(unit("o", "John: The students are doing great.", 0, created=5, seq=3), fact_type="observation")
    reply = unit("r", "Maria: The little one is doing great - learning commands and house training.", 1, seq=2)
    echo = replace(
        unit("e", "Maria: The little one is learning commands.", 1, created=5, seq=4), fact_type="observation"
    )
    found = previous_turns([reply, echo], [question, said, reply, echo])
    assert found == {"r": question.text, "e": question.text}
    assert quote(reply.text, found["r"]) is not None  # an answer to the question, not a reaction to news


@pytest.mark.parametrize(
    ("question", "named", "broad"),
    [
        ("Why does John like Aragorn from Lord of the Rings?", {"aragorn", "lord", "rings"}, False),  # its topic
        ("Why does John like Aragorn from Lord of the Rings?", set(), True),  # names no fact uses: set aside
        ("What matters most to Caroline?", {"aragorn"}, True),  # a speaker is never in ``named``
        ("What about Running?", {"berlin"}, True),  # a title's capital, no name of the scope
    ],
)
def test_a_name_the_scope_uses_is_the_questions_topic(question: str, named: set[str], broad: bool) -> None:
    assert is_broad(question, named) is broad


def test_the_names_a_scope_uses_leave_its_speakers_aside() -> None:
    hits = [ScoredMemory(unit(str(i), t, 0), 0.0) for i, t in enumerate(
        ["John: My favorite character is Aragorn, he grows so much.", "Tim: Thanks, John! I loved Lord of the Rings.",
         "John: Anthony and I went to a charity game."]
    )]  # fmt: skip
    cands = [Candidate(h, Quote(h.memory.text, 1.0, 3), np.zeros(2, dtype=np.float32), 0.5) for h in hits]
    assert {"aragorn", "lord", "rings", "anthony"} <= scope_names(cands, {"john", "tim"})
    assert not {"john", "tim"} & scope_names(cands, {"john", "tim"})


def test_a_named_answer_to_a_who_question_is_quoted_behind_it() -> None:
    previous = "Jon: Ha, ha! Thanks, Gina. Sounds familiar, who do those words belong to?"
    assert quote("Gina: It's Shia Labeouf!") is None  # two names and a pronoun: nothing a reader can place
    found = quote("Gina: It's Shia Labeouf!", previous)
    assert found is not None and found.text.endswith("belong to?\"] It's Shia Labeouf!")
    assert quote("Gina: Thanks, Jon.", previous) is None  # a bare address stays glue


# ---------------------------------------------------------------- stable layout (layout.py)
def _unit_of(memory_id: str, relevance: float, day: int) -> Unit:
    memory = unit(memory_id, f"Jolene: fact {memory_id}.", day * 86400.0)
    quoted = Quote(f"fact {memory_id}.", 1.0, 2)
    return Unit(Candidate(ScoredMemory(memory, 0.0), quoted, np.zeros(2, dtype=np.float32), relevance))


def test_a_full_refresh_puts_quoted_facts_back_where_they_were() -> None:
    a, b, c, d, e, n = (_unit_of(i, r, k) for k, (i, r) in enumerate(
        [("a", 0.9), ("b", 0.8), ("c", 0.3), ("d", 0.3), ("e", 0.2), ("n", 0.85)]))  # fmt: skip
    layout = (("Pets", ("a", "b")), ("Garden", ("c",)), ("Work", ("d", "e")))
    # the composer now puts the new fact n in the answer and pushes b out, and clusters c, d, e differently
    composed = [("Pets", [n, a]), ("Work", [c, b]), ("Yoga", [d, e])]
    assert [(h, [u.current.id for u in us]) for h, us in follow_layout(composed, layout, answering=True)] == [
        ("Pets", ["a", "n", "b"]),  # the answer keeps a and b in their order; n enters before the less relevant b
        ("Garden", ["c"]),
        ("Work", ["d", "e"]),
    ]
    # a fact new to the document under a new heading: a section of its own after the old ones
    composed = [("Pets", [a, b]), ("Garden", [c]), ("Work", [d, e]), ("Pottery", [_unit_of("p", 0.1, 9)])]
    assert [h for h, _ in follow_layout(composed, layout, answering=True)] == ["Pets", "Garden", "Work", "Pottery"]
    assert follow_layout(composed, (), answering=True) == composed  # no current document: as composed


def test_the_asked_note_is_read_back_from_a_quote() -> None:
    asked = "Priya: That's so cool. Did they sign it for a special reason?"
    note = asked_note(asked)
    quoted = f"{note}They signed it to show our friendship."
    assert split_asked_note(quoted) == (note, "They signed it to show our friendship.")
    assert split_asked_note(f"{asked_note('Did you go?')}We did.") == ('[asked: "Did you go?"] ', "We did.")
    for plain in ("They signed it.", "[shares a photo: a signed ball] They signed it."):
        assert split_asked_note(plain) == ("", plain)
    assert listener_of(asked) == "Priya" and listener_of("no prefix here") == ""
