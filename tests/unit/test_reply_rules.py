"""What a reply says of its own (``engine/synthesis/salience.py``, ``exchange.py``, ``referents.py``): a sentence
that only announces news or remarks on a word says nothing; sympathy or judgement passed on someone ("Poor Max …")
is a reaction; a short reply to a request leans on it; a pronoun opening a reply to the other speaker's news stands
for what they said and is quoted behind it."""

from __future__ import annotations

import pytest
from test_briefing import facts

from mindbank.engine.synthesis.compose import compose_briefing
from mindbank.engine.synthesis.exchange import prompt_note, prompt_of, reacts_to, said_note, split_asked_note
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.referents import opens_turn
from mindbank.engine.synthesis.salience import previous_antecedent, quote

NEWS = "Ana: My physio found the problem with my shin last week."


@pytest.mark.parametrize(
    "sentence",
    [
        "I have news too, two things actually.",
        "I've got some news for you, two updates actually.",
        "Okay, I have a question about that.",
        "Merci is the only word I know.",
    ],
)
def test_a_sentence_about_talk_itself_is_not_quoted(sentence: str) -> None:
    assert quote(f"Ben: {sentence}") is None


@pytest.mark.parametrize(
    "sentence",
    [
        "My news is that I start at the hospital in Porto in September.",
        "I finally learned the Portuguese word for a blood pressure cuff at my interview.",
        "I have news: I signed up for Portuguese lessons with a tutor in Lisbon.",
    ],
)
def test_news_that_states_its_fact_is_quoted(sentence: str) -> None:
    found = quote(f"Ben: {sentence}")
    assert found is not None
    assert "Port" in found.text  # Porto, Portuguese


@pytest.mark.parametrize(
    "sentence",
    [
        "Poor Max, stuck at the vet again.",
        "Lucky Marta, a whole week in Lisbon.",
        "Ugh, damp under the kitchen floor.",
    ],
)
def test_sympathy_or_judgement_on_someone_is_a_reaction(sentence: str) -> None:
    assert quote(f"Ben: {sentence}") is None


def test_a_first_person_statement_opening_on_such_a_word_is_still_quoted() -> None:
    found = quote("Ben: Poor sleep has wrecked my training plan this month.")
    assert found is not None and found.text == "Poor sleep has wrecked my training plan this month."


def test_a_short_reply_to_a_request_is_quoted_behind_it() -> None:
    previous = "Ana: Thanks for listening! Don't stop writing those songs!"
    reply = "Ben: Sure thing, Ana! I won't stop writing them."
    assert prompt_of(previous) == "Don't stop writing those songs!"
    assert quote(reply) is None  # two words of its own: not a statement alone
    found = quote(reply, previous)
    assert found is not None
    assert found.text == "[Ana said: \"Don't stop writing those songs!\"] I won't stop writing them."


def test_a_reply_to_a_request_is_no_reaction_to_news() -> None:
    previous = "Ana: Keep painting those lake scenes for the gallery!"
    assert not reacts_to("Lake scenes for the gallery are what sell best.", previous)
    assert prompt_note(previous) == '[Ana said: "Keep painting those lake scenes for the gallery!"] '
    assert prompt_note("Ana: I painted a lake.") == ""


def test_a_pronoun_opening_a_reply_to_news_is_quoted_behind_it() -> None:
    reply = "Ben: She sounds sharp, mine missed a torn ligament for months."
    assert quote(reply) is None  # "She": nothing in the turn says who
    found = quote(reply, NEWS)
    assert found is not None
    assert found.text == (
        '[Ana said: "My physio found the problem with my shin last week."] '
        "She sounds sharp, mine missed a torn ligament for months."
    )


def test_the_antecedent_is_the_statement_that_names_it() -> None:
    # back past trailing glue and through a chain of referring statements
    assert previous_antecedent("Ana: I adopted a kitten named Luna. She sleeps all day. So cute!") == (
        "I adopted a kitten named Luna."
    )
    assert previous_antecedent("Ana: Did you adopt a kitten?") == ""  # a question: the reply answers it instead
    assert previous_antecedent("Ana: Wow! So cute!") == ""
    assert said_note(NEWS, "") == ""


def test_a_pronoun_after_a_statement_of_the_reply_takes_that_statement() -> None:
    reply = "Ben: I visited my sister in Leeds last weekend. She has three dogs now."
    found = quote(reply, NEWS)
    assert found is not None and not found.text.startswith("[")
    assert "I visited my sister in Leeds" in found.text


def test_a_pronoun_after_the_replys_own_statement_never_takes_the_turn_before() -> None:
    # "It" follows a statement of the reply's own (the market), past a reaction: not the other speaker's news
    reply = "Ben: I went to the new market downtown with my brother. Wow! It was huge, forty stalls at least."
    found = quote(reply, NEWS)
    assert found is not None and "[Ana said" not in found.text
    assert opens_turn(0, [True], [True])
    assert not opens_turn(2, [False, False, True], [True, False, True])


@pytest.mark.parametrize(
    ("sentence", "previous"),
    [
        ("Everyone's first pot should be kept.", "Tomas: My first bowl collapsed into something like an ashtray."),
        (
            "The blue is gorgeous and the lopsidedness is charming.",
            "Tomas: Here's my mug. [shares a photo: a blue mug]",
        ),
        ("That hike sounds brutal in this heat.", "Ana: We did the ridge hike on Sunday, nine hours in the sun."),
    ],
)
def test_a_comment_that_picks_up_the_news_and_adds_nothing_is_a_reaction(sentence: str, previous: str) -> None:
    assert reacts_to(sentence, previous)


@pytest.mark.parametrize(
    ("sentence", "previous"),
    [
        # it names what the news did not: a place, a number
        ("The ridge in Snowdonia took my brother 12 hours.", "Ana: We did the ridge hike on Sunday."),
        ("The ridge near Lisbon is closed until spring.", "Ana: We did the ridge hike on Sunday."),
        # it shares no word with the news
        ("The kitchen tiles arrived on Thursday.", "Ana: We did the ridge hike on Sunday."),
    ],
)
def test_a_statement_naming_something_new_is_not_a_reaction(sentence: str, previous: str) -> None:
    assert not reacts_to(sentence, previous)


def test_a_statement_that_itself_says_it_names_nothing_for_the_reply() -> None:
    previous = "Ana: The glaze is lovely. I would drink tea from it."
    assert previous_antecedent(previous) == ""
    assert quote("Ben: It's yours as soon as I make one that doesn't leak.", previous) is None


def test_relish_at_the_other_speakers_news_is_a_reaction() -> None:
    assert quote("Tim: Mmm, that sounds delicious, John!") is None
    assert quote("Tim: Yum, a lemon tart with fresh berries.") is None


def test_a_briefing_quotes_a_continuation_behind_the_other_speakers_statement() -> None:
    hits = facts(
        "Ben: She sounds sharp, mine missed a torn ligament in my knee for months.",
        "Ben: I restored an old road bike from 1984 with my brother over the winter.",
    )
    read = ScopeRead(previous={"m0": NEWS})
    briefing = compose_briefing(source_query="What matters most to Ben?", hits=hits, max_tokens=2048, read=read)
    assert '[Ana said: "My physio found the problem with my shin last week."] She sounds sharp' in briefing.markdown
    assert set(briefing.cited) == {"m0", "m1"}  # the note is context: the block cites Ben's turn only
    alone = compose_briefing(source_query="What matters most to Ben?", hits=hits, max_tokens=2048)
    assert alone.cited == ["m1"]  # without the turn before, "She …" names nothing and is not quoted


def test_a_said_note_is_read_back_from_a_quote() -> None:
    note = said_note(NEWS, "My physio found the problem with my shin last week.")
    assert split_asked_note(f"{note}She sounds sharp.") == (note, "She sounds sharp.")
    request = prompt_note("Gina: Keep going after your dreams!")
    assert split_asked_note(f"{request}I'm not giving up.") == (request, "I'm not giving up.")
