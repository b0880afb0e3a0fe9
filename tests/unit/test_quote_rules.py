"""Who a quote is about and whether it reads on its own (``engine/synthesis/attribution.py``,
``engine/synthesis/referents.py``): a question about one speaker is not answered by another speaker's facts; a
sentence whose pronoun has no referent in view is quoted with its antecedent or not at all; a request is never
quoted; a refresh whose scope gained nothing relevant writes the same document, sections in the same order."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_briefing import facts
from test_briefing import scope as briefing_scope

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import ScoredMemory
from mindbank.engine.consolidate.statements import stated
from mindbank.engine.synthesis.attribution import asked_speakers
from mindbank.engine.synthesis.compose import compose_briefing
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.referents import is_request, needs_referent
from mindbank.engine.synthesis.salience import quote
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

TOMAS = [
    "Tomas: I finally started building the app for the bike-repair co-op in my free evenings.",
    "Tomas: I'm stripping the hallway wallpaper and there are four layers, the bottom one from the seventies.",
    "Tomas: I signed up for a pottery class on Thursday evenings at a studio near the station.",
]
PRIYA = [
    "Priya: I signed up for Portuguese lessons because my grandmother grew up in Goa.",
    "Priya: The race is the Riverside Half on the 4th of May, and I run four days a week around my shifts.",
    "Priya: I work night shifts as a nurse on the cardiology ward at the hospital.",
]
ABOUT_TOMAS = "Priya: Tomas fixed the brakes on my bike at the co-op last Saturday."
QUESTION = "What does Tomas do?"


def read_for(embedder: MiniLMEmbedder, query: str, hits: list[ScoredMemory], cited=()):  # type: ignore[no-untyped-def]
    scores = {h.memory.id: 0.5 for h in hits}
    return replace(briefing_scope(embedder, query, hits, list(cited), cited=cited), relevance=scores)


# ---------------------------------------------------------------- attribution
def test_a_fact_about_priya_is_not_cited_for_what_does_tomas_do(embedder: MiniLMEmbedder) -> None:
    hits = facts(*TOMAS, *PRIYA, ABOUT_TOMAS)
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                                read=read_for(embedder, QUESTION, hits))  # fmt: skip
    priya = {h.memory.id for h in hits if h.memory.text.startswith("Priya:")}
    about_tomas = hits[-1].memory.id
    assert set(briefing.cited) & priya == {about_tomas}  # only what Priya says about Tomas
    assert {h.memory.id for h in hits[: len(TOMAS)]} <= set(briefing.cited)
    for memory_id in priya - {about_tomas}:
        assert briefing.left_out[memory_id] == "about another person: said by Priya, the question asks about Tomas"
    assert "Portuguese" not in briefing.markdown and "Riverside" not in briefing.markdown


def test_a_greeting_that_names_the_listener_does_not_make_a_turn_about_them(embedder: MiniLMEmbedder) -> None:
    greeting = "Priya: Tomas! It's been ages. I just got back from a run along the canal and my legs are jelly."
    hits = facts(*TOMAS, *PRIYA, greeting)
    briefing = compose_briefing(source_query=QUESTION, hits=hits, max_tokens=2048,
                                read=read_for(embedder, QUESTION, hits))  # fmt: skip
    assert hits[-1].memory.id not in briefing.cited and "canal" not in briefing.markdown
    assert briefing.left_out[hits[-1].memory.id].startswith("about another person: said by Priya")


def test_a_delta_does_not_add_another_speakers_fact_to_a_question_about_one(embedder: MiniLMEmbedder) -> None:
    old = facts(*TOMAS)
    briefing = compose_briefing(source_query=QUESTION, hits=old, max_tokens=2048,
                                read=read_for(embedder, QUESTION, old))  # fmt: skip
    new = facts(PRIYA[0], "Tomas: I sold my first set of twelve mugs at the studio market.", prefix="n", first_day=90)
    left_out: dict[str, str] = {}
    ops, used = plan_delta_operations(parse_markdown(briefing.markdown), new, max_tokens=2048,
                                      read=read_for(embedder, QUESTION, [*old, *new], cited=old),
                                      source_query=QUESTION, left_out=left_out)  # fmt: skip
    assert used == [new[1].memory.id] and ops
    assert left_out[new[0].memory.id].startswith("about another person: said by Priya")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What does Tomas do?", {"Tomas"}),
        ("What is Priya's training for?", {"Priya"}),
        ("What plans do Priya and Tomas share?", set()),  # every speaker: no one else to leave out
        ("What plans do they share?", set()),
    ],
)
def test_the_people_a_question_asks_about(question: str, asked: set[str]) -> None:
    assert asked_speakers(question, ["Priya", "Tomas", "Priya"]) == asked


# ---------------------------------------------------------------- referents and requests
@pytest.mark.parametrize(
    ("sentence", "referring"),
    [
        ("She's cutting my mileage for two weeks.", True),
        ("And they were stoked for the dinosaur exhibit!", True),
        ("That was the best concert of my life.", True),
        ("Beatriz taught me that one early.", True),
        ("His vet says the leg will heal.", True),
        ("It's yours as soon as I make one that doesn't leak.", True),
        ("It's six weeks to race day, so there's still time.", False),  # a dummy "it"
        ("It took me three years to finish my degree.", False),
        ("My physio says it's early shin splints.", False),
        ("This weekend I ran fourteen kilometres.", False),  # a determiner, not a pronoun
        ("I'm going to Porto in September.", False),
    ],
)
def test_a_sentence_needs_a_referent_when_its_subject_is_a_bare_pronoun(sentence: str, referring: bool) -> None:
    assert needs_referent(sentence) is referring


def test_a_referent_less_sentence_is_not_quoted_as_is() -> None:
    # no antecedent in the turn: the pronoun sentence goes, what else the turn states stays
    alone = quote("Priya: Not yet. She's cutting my mileage for two weeks and I'm cross-training on the bike.")
    assert alone is None
    rest = quote("Priya: Not yet. She's cutting my mileage for two weeks. I'm training on the bike at the gym.")
    assert rest is not None and "She's" not in rest.text and "bike at the gym" in rest.text
    # the sentence before it names the referent: quoted together
    both = quote("Priya: My physio found the problem. She's cutting my mileage for two weeks.")
    assert both is not None and both.text == "My physio found the problem. She's cutting my mileage for two weeks."
    # a glue sentence is no antecedent ("Congrats …, John!" names whom it is said to, not what "it" is)
    congrats = quote("Maria: Congrats on finishing your degree, John! It must have been quite the adventure.")
    assert congrats is None or "adventure" not in congrats.text
    # a shared photo shows what "he" is: quoted beside it
    photo = quote("Priya: He's great for three kilometres and then he sniffs every lamppost. [shares a photo: a "
                  "beagle lying next to muddy running shoes]")  # fmt: skip
    assert photo is not None and photo.text.endswith("muddy running shoes]")
    assert stated("Priya: Perfectly. Beatriz taught me that one early, she says I'll need it for the toasts.") is None
    # an observation reads the turn's other statements when its quote is short, never a referent-less one
    said = stated("Maria: Congrats on finishing your degree, John! It must have been quite the adventure.")
    assert said is None or "adventure" not in said[0]


@pytest.mark.parametrize(
    ("sentence", "asks"),
    [
        ("Send me pictures of the kitchen, and I'll send you pictures of Porto in return.", True),
        ("Let me know how the race goes on Sunday.", True),
        ("Don't forget your charger for the long train ride.", True),
        ("Please bring your bike to the co-op on Saturday.", True),
        ("Let's keep training together every Sunday.", False),  # an exhortation: glue, scored as such
        ("Sent the pictures of the kitchen to my landlord yesterday.", False),
        ("I'll send you pictures of Porto.", False),
    ],
)
def test_a_request_is_an_imperative_to_the_listener(sentence: str, asks: bool) -> None:
    assert is_request(sentence) is asks


def test_a_request_sentence_forms_no_observation_and_is_not_quoted() -> None:
    text = "Tomas: Send me pictures of the kitchen, and I'll send you pictures of Porto in return."
    assert quote(text) is None and stated(text) is None
    mixed = quote("Tomas: I laid the green hexagon tiles in the kitchen last weekend. Send me your photos of Porto.")
    assert mixed is not None and "Send me" not in mixed.text


# ---------------------------------------------------------------- stable documents
def test_a_no_op_refresh_keeps_the_document_and_its_section_order(embedder: MiniLMEmbedder) -> None:
    texts = [
        "Tomas: I finally started building the app for the bike-repair co-op.",
        "Tomas: The app lets mechanics log which parts they used, so we know when to reorder inner tubes.",
        "Tomas: I'm stripping the hallway wallpaper and there are four layers, the bottom one from the seventies.",
        "Tomas: The hallway is stripped and I patched the plaster before painting it green.",
        "Tomas: I signed up for a pottery class on Thursday evenings at a studio near the station.",
        "Tomas: My pottery teacher let me glaze my first mugs in the studio kiln.",
    ]
    hits = facts(*texts)
    first = compose_briefing(
        source_query=QUESTION, hits=hits, max_tokens=2048, read=briefing_scope(embedder, QUESTION, hits)
    )
    # the scope gains nothing relevant: small talk, a question, another speaker's own news
    more = [
        *hits,
        *facts("Tomas: Thanks, see you soon!", "Tomas: How was your week?", PRIYA[2], prefix="x", first_day=60),
    ]
    again = compose_briefing(
        source_query=QUESTION, hits=more, max_tokens=2048, read=briefing_scope(embedder, QUESTION, more)
    )
    assert again.markdown == first.markdown
    headings = [s.heading for s in parse_markdown(first.markdown).sections if s.heading]
    assert len(headings) >= 2 and headings == [s.heading for s in parse_markdown(again.markdown).sections if s.heading]


def test_a_full_refresh_quotes_every_fact_that_answers_a_narrow_question(mindbank) -> None:  # type: ignore[no-untyped-def]
    """The relative floor of a full refresh keeps a fact that answers beside the best answer ("finished the
    marathon in 3:58" for "What is Alice training for?"), and leaves out what does not."""
    from mindbank.domain.records import RetainItem

    tags = ("user:alice",)
    texts = [
        "Alice: I started training for the Berlin marathon.",
        "Alice: My coach says I should run 40 km a week.",
        "Alice: I bake rye bread on Sundays with my grandmother's recipe.",
        "Alice: We repainted the kitchen a warm yellow last weekend.",
        "Alice: I finished the marathon in 3:58.",
    ]
    for text in texts:
        mindbank.retain("b", [RetainItem(content=text, tags=tags)])
    mindbank.run_pending()
    model_id, _ = mindbank.create_mental_model(
        "b", name="Alice", source_query="What is Alice training for?", tags=tags,
        trigger={"refresh_after_consolidation": False},
    )  # fmt: skip
    mindbank.run_pending()
    mindbank.refresh_mental_model("b", model_id, mode="full")
    mindbank.run_pending()
    content = mindbank.get_mental_model("b", model_id).content
    assert "3:58" in content and "Berlin marathon" in content and "40 km" in content
    assert "rye bread" not in content and "yellow" not in content
