"""Updates, generalised (``engine/synthesis/updates.py``), on the labelled cases of ``data/update_cases.json``:
names, relationships, jobs, pets, preferences, places and numbers, at least three updates and three non-updates
(same topic, another subject or attribute) each. An update shows the newer statement as current and the older as
"earlier", in a full refresh and in a delta; a non-update leaves both current.

The cases the rule gets wrong are listed in :data:`ESCAPES` with the reason (docs/architecture.md, "Updates"):
each is asserted to come out as the rule decides it today (the opposite of its label), so a change that starts
deciding one right shows here and the case leaves the list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_briefing import compose, delta, facts

from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "update_cases.json").read_text())["cases"]
ESCAPES = {
    # (not an update, marked as one) the club's name for the coach, in object position: another subject the
    # opening words do not show
    "Sam: Everyone at the club calls our coach Boss.",
    # a promotion within the same title ("nurse" -> "head nurse") names no frame word in the older statement
    "Sam: I got promoted, I'm now head nurse at St Mary's Hospital.",
    # the older statement is too short or negative to be quoted at all ("I don't have any pets yet.")
    "Sam: I got a dog! Her name is Daisy, a rescue beagle.",
    "Sam: I have 4 kids now, the baby arrived on Monday.",
}


def test_every_category_has_three_updates_and_three_non_updates() -> None:
    for category in ("names", "relationships", "jobs", "pets", "preferences", "places", "numbers"):
        cases = [c for c in CASES if c["category"] == category]
        assert sum(c["update"] for c in cases) >= 3 and sum(not c["update"] for c in cases) >= 3


def _expected(case: dict[str, Any]) -> bool:
    return bool(case["update"]) != (case["newer"] in ESCAPES)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['category']}-{i}" for i, c in enumerate(CASES)])
def test_a_full_refresh_shows_an_update_as_current_with_earlier(embedder: MiniLMEmbedder, case: dict[str, Any]) -> None:
    markdown, _ = compose(embedder, facts(case["older"], case["newer"]))
    assert ("earlier" in markdown) is _expected(case), markdown


@pytest.mark.parametrize("case", CASES, ids=[f"{c['category']}-{i}" for i, c in enumerate(CASES)])
def test_a_delta_shows_an_update_as_current_with_earlier(embedder: MiniLMEmbedder, case: dict[str, Any]) -> None:
    old = facts(case["older"])
    markdown, _, _ = delta(embedder, old, facts(case["newer"], first_day=60, prefix="n"))
    assert ("earlier" in markdown) is _expected(case), markdown
