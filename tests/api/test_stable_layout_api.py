"""A full refresh keeps the current document's layout (``engine/synthesis/layout.py``), end to end through HTTP on
both stores: after one more relevant fact the sections that were there keep their order and headings, every block
that was there is still there word for word, and the history diff is one block (plus the heading it lands under)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_answer_first_api import BANK, SESSIONS, _items, _ok, conversation_model

from mindbank.domain.document import parse_markdown, render_markdown

LATER = [("Deborah", "I signed up for a pottery course at the art school, my first class is on Monday evening.")]


@pytest.mark.parametrize("query", ["What is going on in their lives?", "What pets do they have, and what happened?"])
def test_a_full_refresh_adding_one_fact_changes_one_block(served: Callable[..., Any], query: str) -> None:
    s = served()
    http, path = s.http, f"/v1/default/banks/{BANK}"
    created = conversation_model(s, query, "full")
    model_path = f"{path}/mental-models/{created['mental_model_id']}"
    before = parse_markdown(_ok(http.get(model_path))["content"])
    extra = LATER if "lives" in query else [("Jolene", "Luna finally came out from under the bed and sat on my lap.")]
    _ok(http.post(f"{path}/memories", json={"items": _items(extra, len(SESSIONS))}))
    s.mb.run_pending()
    _ok(http.post(f"{model_path}/refresh"))
    s.mb.run_pending()
    after = parse_markdown(_ok(http.get(model_path))["content"])
    old_blocks = {b.id: b.text for sec in before.sections for b in sec.blocks}
    new_blocks = {b.id: b.text for sec in after.sections for b in sec.blocks}
    assert set(old_blocks.items()) <= set(new_blocks.items())
    assert len(new_blocks) - len(old_blocks) == 1
    old_headings = [sec.heading for sec in before.sections]
    new_headings = [sec.heading for sec in after.sections]
    assert [h for h in new_headings if h in old_headings] == old_headings  # same order, none lost
    assert len(new_headings) - len(old_headings) <= 1
    # each old block is still under its old heading
    where_before = {b.id: sec.heading for sec in before.sections for b in sec.blocks}
    where_after = {b.id: sec.heading for sec in after.sections for b in sec.blocks}
    assert all(where_after[i] == heading for i, heading in where_before.items()), (
        render_markdown(before),
        render_markdown(after),
    )
