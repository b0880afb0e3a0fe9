"""The extractive briefing, one rule at a time (issue 13): sentence-level quoting, glue scored down, breadth,
paraphrase collapse with a count, update marking in full and delta, repeats in delta, eviction by salience, and
headings that are never stopwords, speaker names or words of a single fact.

Facts are embedded with the real MiniLM embedder (the session fixture), as the refresh pipeline hands them over.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    InsertBlock,
    RemoveBlock,
    RemoveSection,
    apply_operations,
    count_tokens,
    parse_markdown,
    render_markdown,
)
from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.domain.text import STOPWORDS
from mindbank.engine.synthesis.compose import compose_markdown
from mindbank.engine.synthesis.delta import plan_delta_operations
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.salience import quote, score_sentence
from mindbank.engine.synthesis.selection import stems
from mindbank.engine.synthesis.topics import headings, phrases_of, speaker_names
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

START = datetime(2025, 1, 6, 10, 0, tzinfo=UTC)


def memory(memory_id: str, text: str, day: int) -> MemoryUnit:
    when = START + timedelta(days=day)
    return MemoryUnit(
        id=memory_id, bank_id="b", text=text, fact_type="experience", tags=(), context=None, metadata={},
        document_id=None, chunk_id=None, occurred_start=when, occurred_end=when, mentioned_at=when, created_at=when,
        updated_at=when,
    )  # fmt: skip


def facts(*texts: str, first_day: int = 0, prefix: str = "m") -> list[ScoredMemory]:
    return [ScoredMemory(memory(f"{prefix}{i}", t, first_day + i * 7), 0.0) for i, t in enumerate(texts)]


def scope(embedder: MiniLMEmbedder, query: str, *groups: list[ScoredMemory], cited=()) -> ScopeRead:  # type: ignore[no-untyped-def]
    hits = [h for g in groups for h in g]
    vectors = embedder.embed([h.memory.text for h in hits])
    return ScopeRead(
        vectors={h.memory.id: vectors[i] for i, h in enumerate(hits)},
        query_vector=embedder.embed([query])[0],
        embed=embedder.embed,
        cited=[h.memory for h in cited],
    )


def compose(embedder: MiniLMEmbedder, hits: list[ScoredMemory], max_tokens: int = 2048) -> tuple[str, list[str]]:
    query = "What matters most to Sam, and what is Sam working on?"
    return compose_markdown(source_query=query, hits=hits, max_tokens=max_tokens, read=scope(embedder, query, hits))


def blocks_citing(markdown: str, memory_id: str) -> list[str]:
    return [b.text for s in parse_markdown(markdown).sections for b in s.blocks if memory_id in b.memory_ids]


# ---------------------------------------------------------------- salience: sentence-level quoting, glue
def test_a_turn_contributes_its_informative_sentences_never_its_questions() -> None:
    found = quote(
        "Sam: Wow, that's amazing! I finished my first half-marathon in Leeds last Sunday. How was your weekend?"
    )
    assert found is not None
    assert found.text == "I finished my first half-marathon in Leeds last Sunday."


def test_sentences_left_out_between_quoted_ones_are_marked() -> None:
    found = quote(
        "Sam: I started a pottery class at the community centre in March. Haha, so messy! "
        "My teacher says my bowls are getting less lopsided every week."
    )
    assert found is not None and found.text.count("…") == 1
    assert found.text.startswith("I started a pottery class") and found.text.endswith("every week.")


def test_a_photo_description_is_quoted_beside_what_the_speaker_said_even_when_it_says_more() -> None:
    found = quote(
        "Priya: He's great for three kilometres and then he wants to sniff every lamppost. Here he is after this "
        "morning. [shares a photo: a photo of a beagle lying on a kitchen floor next to a pair of muddy running shoes]"
    )
    assert found is not None
    assert found.text.startswith("He's great for three kilometres") and found.text.endswith("muddy running shoes]")


@pytest.mark.parametrize(
    "turn",
    [
        "Sam: Pottery! Wheel or hand-building?",
        "Sam: That's amazing. Your first real happy user!",
        "Sam: Thanks, Gina! Your kind words mean a lot.",
        "Sam: Hey Mel! Long time no talk! How have you been?",
        "Sam: You're doing something amazing! You'll be an awesome mom!",
        "Sam: Congrats, Caroline! So happy for you!",
        "Sam: Look! [shares a photo: a photo of a beagle lying on a kitchen floor next to muddy running shoes]",
    ],
)
def test_glue_is_never_quoted(turn: str) -> None:
    assert quote(turn) is None


def test_glue_scores_below_a_statement_of_the_same_length() -> None:
    statement = score_sentence("I adopted a rescue dog from the shelter in Porto last May.")
    reaction = score_sentence("Wow, that rescue dog from the shelter looks so lovely and happy.")
    talk = score_sentence("You must be so proud of the rescue dog from the shelter.")
    assert statement.score > reaction.score and statement.score > talk.score
    assert reaction.glue and talk.glue and not statement.glue


# ---------------------------------------------------------------- breadth
def test_breadth_covers_many_topics_instead_of_variations_of_one(embedder: MiniLMEmbedder) -> None:
    variations = [
        f"Sam: I ran {km} km along the canal path this morning and my legs feel strong before the marathon."
        for km in (8, 10, 12, 14, 16, 18)
    ]
    others = [
        "Sam: I started a pottery class at the community centre and made my first bowl.",
        "Sam: My sister Ana moved to Lisbon for her new job at a design studio.",
        "Sam: I adopted a rescue cat called Miso from the shelter downtown.",
        "Sam: I am learning Portuguese with an online tutor twice a week.",
    ]
    hits = facts(*variations, *others)
    budget = count_tokens(compose(embedder, hits[:1])[0]) + 5 * 45  # room for about five blocks
    _, cited = compose(embedder, hits, max_tokens=budget)
    topics = sum(1 for i in range(6, 10) if f"m{i}" in cited)
    runs = sum(1 for i in range(6) if f"m{i}" in cited)
    assert topics >= 3 and runs <= 2


# ---------------------------------------------------------------- repeats
REX = [
    "Sam: My dog is named Rex.",
    "Sam: I have a dog called Rex.",
    "Sam: My dog's name is Rex.",
    "Sam: Rex is my dog, a very lazy beagle.",
]


def test_paraphrases_collapse_into_one_block_with_count_and_recency(embedder: MiniLMEmbedder) -> None:
    hits = facts(*REX, "Sam: I started a pottery class at the community centre and made my first bowl.")
    markdown, cited = compose(embedder, hits)
    (block,) = blocks_citing(markdown, "m0") or blocks_citing(markdown, "m1")
    assert all(f"[mem:m{i}]" in block for i in range(4))
    last = START + timedelta(days=21)
    assert f"(mentioned 4 times, last {last.day} {last:%b %Y})" in block
    assert sum(line.count("Rex") for line in markdown.splitlines() if line.startswith("-")) == 1 and "m4" in cited


def test_the_same_text_retained_twice_is_one_block(embedder: MiniLMEmbedder) -> None:
    text = "Sam: I volunteer at the food bank every Saturday morning."
    markdown, _ = compose(embedder, facts(text, text))
    (block,) = blocks_citing(markdown, "m0")
    assert "[mem:m1]" in block and "(mentioned 2 times" in block and markdown.count("food bank") == 1


def test_a_fact_repeated_at_retain_time_shows_its_mention_count(embedder: MiniLMEmbedder) -> None:
    """A repeat recorded on the stored fact (``mention_count``, ``last_mentioned_at``) is one fact, one citation."""
    text = "Sam: I volunteer at the food bank every Saturday morning."
    (hit,) = facts(text)
    later = START + timedelta(days=40)
    repeated = replace(hit, memory=replace(hit.memory, mention_count=3, last_mentioned_at=later))
    markdown, _ = compose(embedder, [repeated, *facts("Sam: I started a pottery class.", prefix="p")])
    (block,) = blocks_citing(markdown, "m0")
    assert f"(mentioned 3 times, last {later.day} {later:%b %Y}) [mem:m0]" in block


def test_a_scope_of_short_statements_is_quoted_rather_than_left_empty(embedder: MiniLMEmbedder) -> None:
    """Below the three-content-word bar ("I am learning the cello.") a scope with nothing else still gets a
    document; its questions and small talk stay out, and a scope of only those stays empty."""
    markdown, cited = compose(embedder, facts("Sam: I am learning the cello.", "Sam: Do you play?", "Sam: Thanks!"))
    assert "I am learning the cello." in markdown and cited == ["m0"] and "?" not in markdown.split("\n", 1)[1]
    assert compose(embedder, facts("Sam: Do you play?", "Sam: Thanks!")) == ("", [])


def test_two_statements_on_one_topic_are_not_repeats(embedder: MiniLMEmbedder) -> None:
    hits = facts(
        "Sam: The sailing boat needs a new mast and fresh varnish on the deck before summer.",
        "Sam: I finished varnishing the deck of the sailing boat.",
    )
    markdown, _ = compose(embedder, hits)
    assert "mentioned" not in markdown and len(blocks_citing(markdown, "m0")) == 1
    assert blocks_citing(markdown, "m0") != blocks_citing(markdown, "m1")


# ---------------------------------------------------------------- updates, full refresh
def test_a_newer_value_is_current_and_the_older_earlier(embedder: MiniLMEmbedder) -> None:
    hits = facts("Xavier lives in Paris.", "Xavier moved to Berlin.")
    markdown, cited = compose(embedder, hits)
    (block,) = blocks_citing(markdown, "m1")
    first, earlier = block.split("\n")
    assert "Berlin" in first and "Paris" not in first
    assert earlier.startswith("  - earlier (6 Jan 2025): Xavier lives in Paris.") and "[mem:m0]" in earlier
    assert set(cited) == {"m0", "m1"}


def test_a_changed_number_of_the_same_attribute_is_an_update(embedder: MiniLMEmbedder) -> None:
    hits = facts("Sam: My longest run so far is 12 km.", "Sam: I ran 14 km on Sunday, my longest run yet.")
    markdown, _ = compose(embedder, hits)
    (block,) = blocks_citing(markdown, "m1")
    assert block.index("14 km") < block.index("earlier") < block.index("12 km")


def test_unrelated_facts_with_numbers_are_not_updates(embedder: MiniLMEmbedder) -> None:
    hits = facts("Sam: My longest run so far is 12 km.", "Sam: I ran 5 km with my sister today.")
    markdown, _ = compose(embedder, hits)
    assert "earlier" not in markdown


# ---------------------------------------------------------------- delta: updates, repeats, eviction
QUERY = "What matters most to Sam, and what is Sam working on?"


def delta(
    embedder: MiniLMEmbedder, old: list[ScoredMemory], new: list[ScoredMemory], max_tokens: int = 2048
) -> tuple[str, list, list[str]]:  # type: ignore[type-arg]
    markdown, _ = compose_markdown(source_query=QUERY, hits=old, max_tokens=2048, read=scope(embedder, QUERY, old))
    document = parse_markdown(markdown)
    read = scope(embedder, QUERY, old, new, cited=old)
    operations, used = plan_delta_operations(document, new, max_tokens=max_tokens, read=read)
    after = apply_operations(document, operations)
    assert not after.skipped
    assert parse_markdown(render_markdown(after.document)).to_dict() == after.document.to_dict()  # ids as a parse gives
    return render_markdown(after.document), operations, used


OLD = [
    "Xavier lives in Paris.",
    "Sam: I started a pottery class at the community centre and made my first bowl.",
    "Sam: I am learning Portuguese with an online tutor twice a week.",
]


def test_delta_marks_an_update_in_the_block_it_updates(embedder: MiniLMEmbedder) -> None:
    new = facts("Xavier moved to Berlin.", first_day=60, prefix="n")
    markdown, operations, used = delta(embedder, facts(*OLD), new)
    assert [type(op) for op in operations] == [InsertBlock, RemoveBlock]  # the block rewritten where it stands
    (block,) = blocks_citing(markdown, "n0")
    assert block.split("\n")[0].count("Berlin") == 1 and "earlier (6 Jan 2025): Xavier lives in Paris." in block
    assert "[mem:m0]" in block and used == ["n0"]


def test_delta_counts_a_repeat_instead_of_appending_it(embedder: MiniLMEmbedder) -> None:
    old = facts(REX[0], *OLD[1:])
    new = facts(REX[1], first_day=40, prefix="n")
    markdown, operations, used = delta(embedder, old, new)
    assert [type(op) for op in operations] == [InsertBlock, RemoveBlock]
    (block,) = blocks_citing(markdown, "m0")
    when = START + timedelta(days=40)
    assert f"(mentioned 2 times, last {when.day} {when:%b %Y}) [mem:m0] [mem:n0]" in block
    assert block.startswith("- (6 Jan 2025) Sam: My dog is named Rex.") and used == ["n0"]


def test_delta_appends_only_what_is_new_and_says_something(embedder: MiniLMEmbedder) -> None:
    new = facts("Sam: Haha, cool!", "Sam: I signed up for a ceramics exhibition at the town hall in June.",
                first_day=40, prefix="n")  # fmt: skip
    markdown, operations, used = delta(embedder, facts(*OLD), new)
    assert all(isinstance(op, AppendBlock | AddSection) for op in operations) and used == ["n1"]
    assert "Haha" not in markdown and "ceramics exhibition" in markdown


def test_over_budget_the_least_salient_block_goes_not_the_oldest(embedder: MiniLMEmbedder) -> None:
    old = facts(
        "Sam: I adopted a rescue greyhound called Pepper from the Leeds shelter in 2023.",  # oldest, salient
        "Sam: The weather here is grey and cold again.",  # the least salient
        "Sam: I am learning Portuguese with an online tutor twice a week for my move to Lisbon.",
    )
    markdown, _ = compose_markdown(source_query=QUERY, hits=old, max_tokens=2048, read=scope(embedder, QUERY, old))
    assert "weather" in markdown
    new = facts("Sam: I finished my first half-marathon in Leeds in 1:52 last Sunday.", first_day=40, prefix="n")
    budget = count_tokens(markdown) + 25  # the new block (about 40 tokens) fits only if another goes
    rendered, operations, _ = delta(embedder, old, new, max_tokens=budget)
    removed = [op for op in operations if isinstance(op, RemoveBlock | RemoveSection)]
    assert removed and "weather" not in rendered and "Pepper" in rendered and "half-marathon" in rendered
    assert count_tokens(rendered) <= budget


def test_an_evicted_old_block_names_its_fact_and_why_in_left_out(embedder: MiniLMEmbedder) -> None:
    old = facts(
        "Sam: I adopted a rescue greyhound called Pepper from the Leeds shelter in 2023.",
        "Sam: The weather here is grey and cold again.",  # the least salient: evicted
        "Sam: I am learning Portuguese with an online tutor twice a week for my move to Lisbon.",
    )
    markdown, _ = compose_markdown(source_query=QUERY, hits=old, max_tokens=2048, read=scope(embedder, QUERY, old))
    new = facts("Sam: Haha, cool!", "Sam: I finished my first half-marathon in Leeds in 1:52 last Sunday.",
                first_day=40, prefix="n")  # fmt: skip
    left_out: dict[str, str] = {}
    read = scope(embedder, QUERY, old, new, cited=old)
    budget = count_tokens(markdown) + 25
    operations, used = plan_delta_operations(
        parse_markdown(markdown), new, max_tokens=budget, read=read, left_out=left_out
    )
    assert used == ["n1"] and any(isinstance(op, RemoveBlock | RemoveSection) for op in operations)
    # the weather fact was quoted by the earlier refresh and is still in scope: its leaving is recorded, and comes
    # before the small talk (a trace that lists only so many keeps what came closest to the document)
    assert list(left_out.items()) == [
        ("m1", "evicted: over max_tokens, less worthy than every block kept"),
        ("n0", "not quotable: a question, reaction or small talk"),
    ]


def test_an_evicted_block_whose_fact_another_block_cites_records_nothing(embedder: MiniLMEmbedder) -> None:
    old = facts(
        "Sam: I adopted a rescue greyhound called Pepper from the Leeds shelter in 2023.",
        "Sam: The weather here is grey and cold again.",
    )
    # the greyhound block also cites the weather memory: evicting the weather block loses no citation
    markdown = (
        "## Sam\n\n"
        "- Sam: I adopted a rescue greyhound called Pepper from the Leeds shelter in 2023. [mem:m0] [mem:m1]\n\n"
        "- Sam: The weather here is grey and cold again. [mem:m1]\n"
    )
    document = parse_markdown(markdown)
    new = facts("Sam: I finished my first half-marathon in Leeds in 1:52 last Sunday.", first_day=40, prefix="n")
    left_out: dict[str, str] = {}
    read = scope(embedder, QUERY, old, new, cited=old)
    operations, used = plan_delta_operations(
        document, new, max_tokens=count_tokens(markdown) + 30, read=read, left_out=left_out
    )
    after = render_markdown(apply_operations(document, operations).document)
    assert used == ["n0"] and "weather" not in after and "[mem:m1]" in after
    assert "m1" not in left_out and "m0" not in left_out


def test_a_new_fact_weaker_than_everything_kept_is_not_added(embedder: MiniLMEmbedder) -> None:
    old = facts(
        "Sam: I adopted a rescue greyhound called Pepper from the Leeds shelter in 2023.",
        "Sam: I am learning Portuguese with an online tutor twice a week for my move to Lisbon.",
    )
    markdown, _ = compose_markdown(source_query=QUERY, hits=old, max_tokens=2048, read=scope(embedder, QUERY, old))
    new = facts("Sam: The weather here is grey and cold again.", first_day=40, prefix="n")
    _, operations, used = delta(embedder, old, new, max_tokens=count_tokens(markdown) + 3)
    assert operations == [] and used == []


# ---------------------------------------------------------------- topics: headings
def test_headings_are_never_stopwords_speaker_names_or_single_fact_words(embedder: MiniLMEmbedder) -> None:
    texts = [
        "Caroline: Thanks, Melanie! I went to the LGBTQ support group meeting yesterday and felt so welcome.",
        "Caroline: The LGBTQ support group helped me find a counselor, Melanie.",
        "Caroline: Hey Mel, I started researching adoption agencies for single parents.",
        "Caroline: The adoption agencies near me all want a home study first.",
        "Caroline: I painted a sunset over the lake for the art show at the library.",
        "Caroline: My painting of the lake got a spot in the library art show.",
    ]
    markdown, _ = compose(embedder, facts(*texts))
    banned = speaker_names(texts)
    assert {"caroline", "melanie", "mel"} <= banned
    for section in parse_markdown(markdown).sections:
        if not section.heading:
            continue
        words = section.heading.lower().split()
        assert not set(words) & banned and not all(w in STOPWORDS for w in words)
        quoted = [stems(re.sub(r"\[mem:[^\]]+\]", "", b.text)) for b in section.blocks]
        need = 2 if len(section.blocks) >= 2 else 1
        for word in stems(section.heading):
            assert sum(1 for q in quoted if word in q) >= need, (section.heading, word)
    headings_found = [s.heading for s in parse_markdown(markdown).sections if s.heading]
    assert any(len(h.split()) > 1 for h in headings_found)  # a phrase where it says more than a word


def test_a_section_without_shared_words_gets_no_heading_from_one_fact() -> None:
    sections = [["I repaired the greenhouse roof.", "My cousin bought a kayak."], ["I baked rye bread."]]
    titles = headings(sections, centroids=__import__("numpy").zeros((0, 1)), banned=set())
    assert titles[0] is None and titles[1] is not None and titles[1].lower() in "rye bread"


def test_sections_go_by_weight_and_blocks_within_by_date(embedder: MiniLMEmbedder) -> None:
    texts = [
        "Sam: I ran the canal half-marathon in Leeds and finished in 1:52.",
        "Sam: I am training for the Leeds marathon with long canal runs on Sundays.",
        "Sam: I bought new trail running shoes for the Leeds marathon training.",
        "Sam: I baked rye bread with my grandmother's sourdough starter.",
    ]
    markdown, _ = compose(embedder, facts(texts[2], texts[3], texts[0], texts[1]))
    sections = [s for s in parse_markdown(markdown).sections if s.heading]
    assert len(sections[0].blocks) >= len(sections[-1].blocks)
    for section in sections:
        dates = [re.search(r"\((\d+ \w+ \d{4})\)", b.text).group(1) for b in section.blocks]  # type: ignore[union-attr]
        parsed = [datetime.strptime(d, "%d %b %Y") for d in dates]
        assert parsed == sorted(parsed)


# ---------------------------------------------------------------- the refresh pipeline reads the whole scope
def test_the_extractive_refresh_reads_its_whole_scope_with_stored_vectors(mindbank, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mindbank.domain.records import RetainItem
    from mindbank.domain.scope import MemoryFilter

    topics = ["pottery", "Portuguese", "the canal half-marathon", "a rescue cat", "the kitchen tiles", "the co-op app"]
    items = [RetainItem(content=f"Sam: Week {n}: I spent the evening on {topics[n % 6]} with my sister Ana.",
                        tags=("speaker:sam",)) for n in range(30)]  # fmt: skip
    mindbank.retain("b", items)
    seen: list[tuple[int, ScopeRead | None]] = []
    synthesizer = mindbank.refresher.synthesizer
    original = synthesizer.compose

    def spy(inputs):  # type: ignore[no-untyped-def]
        seen.append((len(inputs.facts), inputs.read))
        return original(inputs)

    monkeypatch.setattr(synthesizer, "compose", spy)
    model_id, op = mindbank.create_mental_model(
        "b", name="Sam", source_query="What is Sam doing?", tags=["speaker:sam"], trigger={"recall_max_tokens": 40}
    )
    mindbank.run_pending()
    assert mindbank.get_operation("b", op).status == "completed"
    ((count, read),) = seen
    in_scope = len(mindbank.store.list_memories("b", MemoryFilter(tags=("speaker:sam",)), query=None, limit=100,
                                                offset=0)[0])  # fmt: skip
    assert count == in_scope >= 30  # every in-scope memory, whatever the recall budget (40 tokens: about 2 facts)
    assert read is not None and len(read.vectors) == count and read.query_vector is not None and read.embed
    assert mindbank.get_mental_model("b", model_id).content.count("[mem:") >= 6


def test_a_title_never_starts_or_ends_on_a_number_word() -> None:
    """A quantity ("three kilometres", "twenty minutes") says how much, not what a section is about."""
    found = [
        p[0].lower() for p in phrases_of("He's great for three kilometres and then he sniffs every lamppost.", set())
    ]
    assert "kilometres" in found and "lamppost" in found
    assert not any(p.split()[0] in ("three", "twenty") or p.split()[-1] in ("three", "twenty") for p in found)
    assert not any(p.startswith("twenty") for p in (q[0].lower() for q in phrases_of("Twenty minutes of yoga.", set())))
