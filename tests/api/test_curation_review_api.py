"""A revert that holds, and review before publish, over HTTP on both stores (docs/curation.md). Automatic refreshes
come from the real trigger: ``refresh_after_consolidation`` models refreshed after the consolidation each retain
queues, drained with ``run_pending``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.conftest import Served

BASE = "/v1/default/banks/b"
FACTS = [
    "Bob teaches chemistry at the high school.",
    "Bob collects vintage fountain pens.",
    "Bob plays bass in a jazz trio on Fridays.",
    "Bob is renovating an old farmhouse.",
    "Bob volunteers at the food bank on Saturdays.",
    "Bob keeps bees in his garden.",
    "Bob started learning Japanese this year.",
    "Bob's daughter is studying marine biology.",
]


def _retain(s: Served, text: str) -> None:
    r = s.http.post(f"{BASE}/memories", json={"items": [{"content": text, "tags": ["user:bob"]}]})
    assert r.status_code == 200, r.text
    s.mb.run_pending()  # the retain's consolidation, and the automatic refresh it triggers


def _create(s: Served, **trigger: Any) -> None:
    body = {"id": "m", "name": "Bob", "source_query": "What is Bob's life like?", "tags": ["user:bob"],
            "trigger": {"tags_match": "any", "refresh_after_consolidation": True, **trigger}}  # fmt: skip
    assert s.http.post(f"{BASE}/mental-models", json=body).status_code == 200
    s.mb.run_pending()


def _get(s: Served) -> dict[str, Any]:
    return s.http.get(f"{BASE}/mental-models/m").json()  # type: ignore[no-any-return]


def test_a_revert_holds_until_a_new_write_then_deltas_on_top(served: Callable[..., Served]) -> None:
    s = served()
    for fact in FACTS[:3]:
        _retain(s, fact)
    _create(s)
    first = _get(s)["content"]
    for fact in FACTS[3:5]:
        _retain(s, fact)
    assert _get(s)["content"] != first  # the automatic trigger refreshed it
    version = next(e for e in s.http.get(f"{BASE}/mental-models/m/history").json() if e["previous_content"] == first)
    r = s.http.post(f"{BASE}/mental-models/m/revert", json={"history_id": version["id"]})
    assert r.status_code == 200 and r.json()["content"] == first
    model = _get(s)
    assert model["is_stale"] is True and model["refresh_status"]["hold"]["reason"] == "reverted"
    # the automatic triggers (after consolidation, cron) fire for stale models: the revert holds
    assert s.mb.jobs.refresh_after_consolidation("b") == []
    s.mb.run_pending()
    assert _get(s)["content"] == first
    before = s.http.get(f"{BASE}/mental-models/m/blocks").json()
    # the first new in-scope write: a delta on top of the restored version, over everything since its watermark
    _retain(s, FACTS[5])
    model = _get(s)
    assert model["reflect_response"]["effective_mode"] == "delta", model["reflect_response"]
    assert model["content"] != first and "hold" not in model["refresh_status"]
    after = {b["id"] for sec in s.http.get(f"{BASE}/mental-models/m/blocks").json()["sections"] for b in sec["blocks"]}
    kept = [b["id"] for sec in before["sections"] for b in sec["blocks"] if b["id"] in after]
    assert kept, "the delta rewrote the restored version instead of editing it"


def test_a_model_without_a_revert_refreshes_automatically(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, FACTS[0])
    _create(s)
    first = _get(s)["content"]
    _retain(s, FACTS[1])
    model = _get(s)
    assert model["content"] != first and "hold" not in model["refresh_status"]
