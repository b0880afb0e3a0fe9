"""How an extractive document reads to a person (the rules behind issue 21's reading pass), one rule per test:
a remark about "everyone" is no fact; a pronoun leaning on a question that names nothing is not quoted; a reply
that speaks of the other speaker's news by a pronoun is a reaction; a broad question about plans is answered by
stated plans; a heading rests on two facts and a block sits only under a heading it fits; a delta refresh places
new blocks by the same rule and keeps "Other notes" last. End-to-end readings of the demo's models:
``tests/api/test_reading_rules_api.py``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_briefing import facts, scope

from mindbank.domain.document import apply_operations, parse_markdown, render_markdown
from mindbank.engine.synthesis.compose import OTHER_HEADING, compose_briefing
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.exchange import names_something, reacts_to
from mindbank.engine.synthesis.salience import quote
from mindbank.engine.synthesis.tense import states_plan
from mindbank.engine.synthesis.topics import fits, headings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder


# ---------------------------------------------------------------- remarks
def test_a_remark_about_everyone_states_no_fact() -> None:
    assert quote("Tomas: That's exactly what my pottery teacher said. Everyone has an opinion about my floor.") is None
    assert quote("Priya: Everyone asks that!") is None
    # a sentence that says something besides "everyone" still does
    found = quote("Priya: Everyone in my family came to my graduation in Leeds last June.")
    assert found is not None and "graduation" in found.text


# ---------------------------------------------------------------- referents: a question that names nothing
@pytest.mark.parametrize(
    ("prompt", "names"),
    [
        ("Did I say that right?", False),
        ("What will it do?", False),
        ("Which is?", False),
        ("Does that mean the race is off?", True),
        ("How are the lessons with Beatriz?", True),
        ("Did they sign it for a special reason?", True),
        ("Did you do all 12 of them?", True),
    ],
)
def test_whether_a_prompt_names_something_a_pronoun_could_stand_for(prompt: str, names: bool) -> None:
    assert names_something(prompt) is names


def test_a_pronoun_leaning_on_a_question_that_names_nothing_is_not_quoted() -> None:
    answer = "Priya: Perfectly. Beatriz taught me that one early, she says I'll need it for all the toasts."
    assert quote(answer, "Tomas: Priya! Parabéns! Did I say that right?") is None
    # behind a question that names what it is about, the same answer is quoted with the question in front
    found = quote(answer, "Tomas: Who taught you the toast for the wedding?")
    assert found is not None and found.text.startswith('[Tomas asked: "Who taught you the toast for the wedding?"]')


# ---------------------------------------------------------------- attribution: reactions by pronoun
NEWS = "Tomas: When I lifted the old kitchen floor I found damp underneath. The tiling is on hold."


def test_a_reply_speaking_of_the_news_by_a_pronoun_is_a_reaction() -> None:
    assert reacts_to("Better to find it now than under brand new tiles.", NEWS)
    assert quote("Priya: Ugh, damp. Better to find it now than under brand new tiles.", NEWS) is None
    # the speaker's own news, or a name the news did not give, is not a reaction
    assert not reacts_to("I found damp in my bathroom last winter.", NEWS)
    assert not reacts_to("It cost Marta a fortune in 2023.", NEWS)
    # after a remark that tells nothing of its speaker's life, the pronoun is the reply's own story
    assert not reacts_to("The kids loved it and it was a nice way to relax.", "Caroline: Looks like you all had fun!")
    # and a pronoun after a question is an answer, not a reaction (exchange.py)
    assert not reacts_to("It was a leaking pipe.", "Priya: What caused the damp?")


# ---------------------------------------------------------------- plans
@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("The hallway is stripped and I patched the plaster. Next is the kitchen, I want to retile it myself.", True),
        ("The race is the Riverside Half on the 4th of May, and my plan has me running four days a week.", True),
        ("[Tomas asked: \"What's the plan for Biscuit?\"] He's staying with Anjali, and I'll video call him.", True),
        ("He's great for three kilometres and then he wants to sniff every lamppost.", False),
        ("Today I told her my dog ate a sandwich next to a nurse.", False),
        ("I'm stripping the hallway wallpaper and there are four layers.", False),
    ],
)
def test_what_states_a_plan_of_the_speakers_own(text: str, plan: bool) -> None:
    assert states_plan(text) is plan


def test_a_broad_question_about_plans_quotes_a_stated_plan_however_few_words_it_shares(
    embedder: MiniLMEmbedder,
) -> None:
    query = "What plans, goals and upcoming events do they talk about?"
    topics = [
        f"Sam: I went to the {place} with my cousins and we had a long lunch by the water."
        for place in ("harbour", "lake", "river", "beach", "park", "market", "castle", "museum")
    ]
    plan = "Sam: The hallway is stripped. Next is the kitchen, I want to retile it myself before summer."
    hits = facts(*topics, "Sam: My plan for the race is four runs a week.", plan)
    read = scope(embedder, query, hits)
    # the stated plan shares no word with the question: its recall score is the lowest of the scope
    scores = {h.memory.id: 1.0 for h in hits}
    scores[hits[-1].memory.id] = 0.01
    briefing = compose_briefing(source_query=query, hits=hits, max_tokens=260, read=replace(read, relevance=scores))
    assert "retile it myself" in briefing.markdown
    assert hits[-1].memory.id in briefing.cited


# ---------------------------------------------------------------- headings and where blocks sit
@pytest.mark.parametrize(
    ("heading", "quote_text", "fit"),
    [
        ("Kitchen floor", "And the kitchen tiles arrived. Dark green hexagons.", True),
        ("Kitchen floor", "My first bowl collapsed into something the teacher called a confident ashtray.", False),
        ("Hallway", "After one week of on-call I could barely find my shoes.", False),
        ("Co-op app", "I'm rebuilding the app as a web app.", True),
        ("Running", "[shares a photo: a beagle next to muddy running shoes] He sniffs every lamppost.", False),
    ],
)
def test_a_block_fits_a_heading_whose_words_it_holds(heading: str, quote_text: str, fit: bool) -> None:
    assert fits(heading, [quote_text]) is fit


def test_a_heading_rests_on_two_facts() -> None:
    sections = [
        ["I stripped the wallpaper in the hallway.", "The plaster in the hallway is patched now."],
        ["The volunteers said the text is too small for people holding a phone with greasy fingers."],
    ]
    centroids = np.zeros((0, 1), dtype=np.float32)
    assert headings(sections, centroids, banned=set(), lone=False) == ["Hallway", None]
    # a document of one fact is titled by it
    assert headings(sections[1:], centroids, banned=set(), lone=True)[0] is not None


TOMAS = [
    "Tomas: I'm stripping the hallway wallpaper and there are four layers, the bottom one from the seventies.",
    "Tomas: The hallway is stripped and I patched the plaster, the hallway is finally done.",
    "Tomas: I finally started building the app for the bike-repair co-op in my evenings.",
    "Tomas: The co-op app lets people book a repair slot and lets the mechanics log the parts they used.",
    "Tomas: After one week of on-call at my day job I could barely find my shoes.",
    "Tomas: My first bowl at the pottery studio collapsed into something the teacher called a confident ashtray.",
    "Tomas: The volunteers said the text is too small for people holding a phone with greasy fingers.",
]
QUESTION = "What matters most to Tomas, and what is Tomas working on?"


def _sections(markdown: str) -> list[tuple[str, list[str]]]:
    return [(s.heading, [b.text for b in s.blocks]) for s in parse_markdown(markdown).sections if s.heading]


def test_every_block_sits_under_a_heading_it_fits_and_other_notes_comes_last(embedder: MiniLMEmbedder) -> None:
    hits = facts(*TOMAS)
    read = scope(embedder, QUESTION, hits)
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048, read=read)
    sections = _sections(briefing.markdown)
    assert set(briefing.cited) == {h.memory.id for h in hits}
    for heading, blocks in sections:
        if heading != OTHER_HEADING:
            assert len(blocks) >= 2, briefing.markdown  # no heading drawn from one fact ("People holding")
            assert all(fits(heading, [b]) for b in blocks), briefing.markdown
    assert [h for h, _ in sections].count(OTHER_HEADING) <= 1
    assert sections[-1][0] == OTHER_HEADING  # the lone facts: on-call, the bowl, the phone
    assert any("on-call" in b for b in sections[-1][1]) and any("bowl" in b for b in sections[-1][1])


def test_a_delta_places_a_new_block_only_under_a_heading_it_fits(embedder: MiniLMEmbedder) -> None:
    old = facts(*TOMAS[:4])
    read = scope(embedder, QUESTION, old)
    document = parse_markdown(compose_briefing(source_query=QUESTION, hits=old, max_tokens=2048, read=read).markdown)
    assert {s.heading for s in document.sections if s.heading} >= {"Hallway"}
    new = facts(
        "Tomas: The bathroom is finished, the kitchen floor is dry, and next weekend I'm laying the green hexagons.",
        "Tomas: When I lifted the old kitchen floor I found damp underneath, so the tiling is on hold.",
        "Tomas: I signed up for a pottery class on Thursday evenings at a studio near the station.",
        prefix="n",
        first_day=60,
    )
    every = scope(embedder, QUESTION, old, new, cited=old)
    operations, used = plan_delta_operations(document, new, max_tokens=2048, read=every, source_query=QUESTION)
    after = apply_operations(document, operations)
    assert not after.skipped
    sections = _sections(render_markdown(after.document))
    assert set(used) == {h.memory.id for h in new}
    for heading, blocks in sections:
        if heading != OTHER_HEADING:
            assert all(fits(heading, [b]) for b in blocks if "[mem:n" in b), sections
    headings_now = [h for h, _ in sections]
    if OTHER_HEADING in headings_now:
        assert headings_now[-1] == OTHER_HEADING


def test_a_delta_section_added_to_a_document_with_other_notes_goes_before_it(embedder: MiniLMEmbedder) -> None:
    old = facts(*TOMAS)
    read = scope(embedder, QUESTION, old)
    document = parse_markdown(compose_briefing(source_query=QUESTION, hits=old, max_tokens=2048, read=read).markdown)
    assert document.sections[-1].heading == OTHER_HEADING
    new = facts(
        "Tomas: When I lifted the old kitchen floor I found damp underneath, so the kitchen tiling is on hold.",
        "Tomas: The damp under the kitchen floor turned out to be a leaking pipe from the flat upstairs.",
        prefix="n",
        first_day=60,
    )
    every = scope(embedder, QUESTION, old, new, cited=old)
    operations, _ = plan_delta_operations(document, new, max_tokens=2048, read=every, source_query=QUESTION)
    after = apply_operations(document, operations)
    assert not after.skipped
    sections = _sections(render_markdown(after.document))
    assert sections[-1][0] == OTHER_HEADING
    heading, blocks = sections[-2]  # the new section, titled by what the two new facts share
    assert heading not in {h for h, _ in _sections(render_markdown(document))}
    assert all("[mem:n" in b for b in blocks) and len(blocks) == 2, render_markdown(after.document)


def test_a_lone_topic_block_after_an_answer_section_takes_no_title_of_its_own(embedder: MiniLMEmbedder) -> None:
    query = "What pets does Sam have?"
    pets = [
        "Sam: I adopted a tabby cat called Luna from the shelter on Elm Street.",
        "Sam: Luna sleeps on my keyboard every afternoon while I work.",
        "Sam: My snake Seraphim is a ball python, my oldest pet.",
        "Sam: Seraphim shed her skin in one piece this week.",
        "Sam: My second cat Susie is eating again after the vet visit.",
        "Sam: The volunteers said the text is too small for people holding a phone with greasy fingers.",
    ]
    hits = facts(*pets)
    read = replace(scope(embedder, query, hits), relevance={h.memory.id: 1.0 - i / 100 for i, h in enumerate(hits)})
    briefing = compose_briefing(source_query=query, hits=hits, max_tokens=2048, read=read)
    sections = _sections(briefing.markdown)
    assert len(sections) == 2 and len(sections[0][1]) == 5, briefing.markdown
    assert sections[1] == (OTHER_HEADING, sections[1][1]) and "greasy fingers" in sections[1][1][0]
