"""A delta that evicts an old block says so, end to end through HTTP on both stores: a narrow model with a small
``max_tokens`` in delta mode takes in later facts that answer it better, the editor evicts a block an earlier
refresh quoted to make room, and the trace and the dry run list each memory that left the document (still in
scope, cited by no block kept) with the reason, beside the new facts left out."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

BANK = "evicted"
START = datetime(2024, 6, 1, 18, 0, tzinfo=UTC)
QUESTION = "How is Priya's climbing going?"

FIRST: list[tuple[str, str]] = [
    ("Priya", "I joined the climbing gym downtown last month and go climbing twice a week after my night shifts."),
    (
        "Priya",
        "At the climbing gym I mostly boulder on the easy grey problems for now, my forearms burn after an hour.",
    ),
    ("Priya", "My climbing shoes pinch a lot, so I rent a bigger pair at the climbing gym every time I go."),
    ("Priya", "I watched a climbing film about Yosemite and now I dream of climbing outdoors on real granite one day."),
    ("Priya", "My friend Lena from the ward climbs with me on Tuesdays and spots me on the bouldering wall."),
    ("Priya", "I bought a chalk bag with little cacti on it for climbing, it was a gift to myself after payday."),
    ("Priya", "Climbing helps me sleep after night shifts, I feel calm and tired in a good way when I get home."),
    ("Priya", "The climbing gym has a stretching corner where I warm up my fingers and shoulders before I climb."),
    ("Tomas", "I sold my first twelve mugs at the pottery studio market near the station."),
]
LATER: list[tuple[str, str]] = [
    ("Priya", "Climbing news: I sent my first V4 boulder problem at the climbing gym, after three weeks of tries."),
    ("Priya", "My climbing coach says my climbing footwork improved so much that I can start lead climbing in July."),
    (
        "Priya",
        "I entered the climbing gym's bouldering competition for beginners and finished third of forty climbers.",
    ),
    (
        "Priya",
        "My climbing is going great: I climb grades now that scared me in spring, and I climb three times a week.",
    ),
]


def _items(turns: list[tuple[str, str]], first: int) -> list[dict[str, Any]]:
    return [
        {
            "content": f"{speaker}: {text}",
            "timestamp": (START + timedelta(days=first, minutes=i)).isoformat(),
            "context": "climbing",
        }
        for i, (speaker, text) in enumerate(turns)
    ]


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_delta_lists_the_facts_it_evicted_with_the_reason(served: Callable[..., Any]) -> None:
    s = served()
    path = f"/v1/default/banks/{BANK}"
    _ok(s.http.post(f"{path}/memories", json={"items": _items(FIRST, 0)}))
    s.mb.run_pending()
    body = {"name": "climbing", "source_query": QUESTION, "max_tokens": 256,
            "trigger": {"mode": "delta", "keep_trace": True}}  # fmt: skip
    model_id = _ok(s.http.post(f"{path}/mental-models", json=body))["mental_model_id"]
    s.mb.run_pending()
    before = _ok(s.http.get(f"{path}/mental-models/{model_id}"))
    cited_before = set(_cited(before["content"]))
    assert cited_before, before["content"]

    _ok(s.http.post(f"{path}/memories", json={"items": _items(LATER, 30)}))
    s.mb.run_pending()
    dry = _ok(s.http.post(f"{path}/mental-models/{model_id}/dry-run-refresh"))
    assert dry["effective_mode"] == "delta"
    _ok(s.http.post(f"{path}/mental-models/{model_id}/refresh"))
    s.mb.run_pending()
    after = _ok(s.http.get(f"{path}/mental-models/{model_id}"))
    assert after["reflect_response"]["trace"]["effective_mode"] == "delta"
    cited_after = set(_cited(after["content"]))
    assert cited_after - cited_before, after["content"]  # the later facts came in
    gone = cited_before - cited_after
    assert gone, (before["content"], after["content"])  # and made an old block go
    trace = after["reflect_response"]["trace"]
    for left_out, preview in ((dry["left_out"], dry["preview_content"]), (trace["left_out"], after["content"])):
        reasons = {e["id"]: e["reason"] for e in left_out}
        assert gone <= set(reasons), left_out
        assert {e["id"] for e in left_out[: len(gone)]} == gone  # what the document lost comes first
        for memory_id in gone:
            assert reasons[memory_id].startswith("evicted: over max_tokens, less relevant to the question"), left_out
            assert f"[mem:{memory_id}]" not in preview
        # a memory the document still cites is never listed as evicted
        assert not [e for e in left_out if e["reason"].startswith("evicted") and f"[mem:{e['id']}]" in preview]
        texts = {e["id"]: e["text"] for e in left_out}
        assert all(texts[i] for i in gone)


def _cited(content: str) -> list[str]:
    return re.findall(r"\[mem:([^\]]+)\]", content)
