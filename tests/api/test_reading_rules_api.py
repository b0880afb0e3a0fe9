"""The demo's documents read well to a person, on both stores: the bundled two-speaker conversation (the one
``mindbank demo`` imports), models created over its first half and refreshed in delta mode after its second, the
way the demo runs them, plus "What does Tomas do?" over the whole conversation.

Each assertion is a reading rule (``tests/unit/test_reading_rules.py`` has them one by one): every block sits under
a heading whose words it holds or whose section it is close to, a heading rests on two facts, "Other notes" comes
last; a remark about everyone, a reaction to the other speaker's news and a pronoun with nothing to stand for are
never quoted; a broad question about plans quotes the plans stated in it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindbank.demo import model_specs
from mindbank.domain.document import parse_markdown
from mindbank.engine.synthesis.compose import OTHER_HEADING
from mindbank.importers import load_locomo, locomo_items, sample_conversation_path, split_halves

BANK = "demo"
NEVER_QUOTED = (
    "Everyone has an opinion about my floor.",  # a remark about everyone
    "Better to find it now than under brand new tiles.",  # a reaction to the other speaker's news
    "Fifteen minutes of verbs on a nursing break",  # the same, about the other speaker's life
    "Beatriz taught me that one early",  # "that one" leans on a question that names nothing
)


def _sections(content: str) -> list[tuple[str, list[str]]]:
    return [(s.heading, [b.text for b in s.blocks]) for s in parse_markdown(content).sections if s.heading]


def _reads_well(content: str) -> None:
    for text in NEVER_QUOTED:
        assert text not in content, content
    headings = [h for h, _ in _sections(content)]
    assert headings.count(OTHER_HEADING) <= 1, content
    if OTHER_HEADING in headings:
        assert headings[-1] == OTHER_HEADING, content


def test_the_demo_models_read_well_before_and_after_their_delta_refresh(served: Callable[..., Any]) -> None:
    s = served()
    conv = load_locomo(sample_conversation_path())
    first, second = split_halves(conv)
    s.mb.retain(BANK, locomo_items(conv, first))
    specs = model_specs(conv.speakers)
    ids = {}
    for spec in specs:
        trigger = {"mode": "delta", **({"tags_match": spec.tags_match} if spec.tags_match else {})}
        ids[spec.name], _ = s.mb.create_mental_model(
            BANK, name=spec.name, source_query=spec.source_query, tags=spec.tags, max_tokens=600, trigger=trigger
        )
    s.mb.run_pending()
    plans = s.mb.get_mental_model(BANK, ids["Plans and goals"]).content
    # a plan stated in passing answers the question about plans; a beagle's wants are no one's plan
    assert "Next is the kitchen, I want to retile it myself before summer." in plans
    for spec in specs:
        content = s.mb.get_mental_model(BANK, ids[spec.name]).content
        _reads_well(content)
        for heading, blocks in _sections(content):
            if heading != OTHER_HEADING and not spec.narrow:
                assert len(blocks) >= 2, content  # no heading drawn from one fact ("Lamppost")
    before = {name: _sections(s.mb.get_mental_model(BANK, i).content) for name, i in ids.items()}
    s.mb.retain(BANK, locomo_items(conv, second))
    for model_id in ids.values():
        s.mb.refresh_mental_model(BANK, model_id)
    s.mb.run_pending()
    for name, model_id in ids.items():
        content = s.mb.get_mental_model(BANK, model_id).content
        _reads_well(content)
        # stable: the sections that stay keep their order
        old = [h for h, _ in before[name]]
        kept = [h for h, _ in _sections(content) if h in old]
        assert kept == [h for h in old if h in kept], content


def test_what_does_tomas_do_sits_every_fact_under_a_heading_it_holds(served: Callable[..., Any]) -> None:
    s = served()
    conv = load_locomo(sample_conversation_path())
    first, second = split_halves(conv)
    s.mb.retain(BANK, locomo_items(conv, first + second))
    s.mb.run_pending()
    model_id, _ = s.mb.create_mental_model(BANK, name="Tomas", source_query="What does Tomas do?")
    s.mb.run_pending()
    content = s.mb.get_mental_model(BANK, model_id).content
    _reads_well(content)
    sections = dict(_sections(content))
    assert "People holding" not in sections, content
    for heading, blocks in sections.items():
        if heading == OTHER_HEADING:
            continue
        assert len(blocks) >= 2, content
        assert not any("first bowl collapsed" in b for b in blocks) or "Kitchen" not in heading, content
        assert not any("on-call" in b for b in blocks) or "Hallway" not in heading, content
