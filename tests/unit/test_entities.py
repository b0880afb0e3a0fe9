"""The offline entity heuristic: capitalised runs, speakers, possessives, sentence openers and stable ids."""

from __future__ import annotations

import pytest

from mindbank.domain.entities import entity_id, extract_entities


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Caroline: I went to a LGBTQ support group yesterday.", ["Caroline", "LGBTQ"]),
        ("Alice moved to Paris in 2021.", ["Alice", "Paris"]),
        ("Yesterday I met Bob at the Golden Gate Bridge.", ["Bob", "Golden Gate Bridge"]),
        ("Melanie: Thanks, Caroline! I'm at the Bank of America in New York.", ["Melanie", "Caroline",
                                                                                "Bank of America", "New York"]),
        ("Caroline's mom said hi. Caroline smiled.", ["Caroline"]),
        ("Wow! That is great. Sounds good. Painting helps me relax.", []),
        ("Dana leads the team's March planning.", ["Dana", "March"]),
    ],
)  # fmt: skip
def test_names(text: str, names: list[str]) -> None:
    assert list(extract_entities(text)) == names


def test_ids_are_stable_per_bank() -> None:
    assert entity_id("b", "Alice") == entity_id("b", "Alice")
    assert entity_id("b", "Alice") != entity_id("c", "Alice") != entity_id("b", "Bob")


def test_long_texts_are_read_the_same_way_uncached() -> None:
    long = "Alice moved to Paris. " + "She walked along the river every day. " * 60
    assert len(long) > 1_000 and list(extract_entities(long)) == ["Alice", "Paris"]
