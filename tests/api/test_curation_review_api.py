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


def test_review_keeps_the_published_content_until_approved(served: Callable[..., Served]) -> None:
    s = served()
    events: list[Any] = []
    s.mb.events.subscribe(events.append)
    for fact in FACTS[:2]:
        _retain(s, fact)
    _create(s, review=True)
    model = _get(s)
    assert model["content"] == "" and model["refresh_status"]["draft"]["draft_id"]
    assert s.http.post(f"{BASE}/mental-models/m/draft/approve").status_code == 200
    published = _get(s)
    assert published["content"] and "draft" not in published["refresh_status"]
    drafts = []
    for fact in FACTS[2:5]:  # three automatic refreshes: each a draft replacing the last, nothing published
        _retain(s, fact)
        model = _get(s)
        assert model["content"] == published["content"]
        assert model["last_refreshed_at"] == published["last_refreshed_at"]
        assert model["last_memory_seen_at"] == published["last_memory_seen_at"] and model["is_stale"] is True
        draft = s.http.get(f"{BASE}/mental-models/m/draft").json()
        assert draft["replaced_draft_id"] == (drafts[-1]["draft_id"] if drafts else None)
        assert draft["diff"].startswith("--- published") and draft["published_content"] == published["content"]
        drafts.append(draft)
    ready = [e for e in events if e.type == "mental_model.draft_ready"]
    assert len(ready) == 4 and ready[-1].data["draft"]["draft_id"] == drafts[-1]["draft_id"]
    # while the draft waits, triggers fire only for writes newer than its watermark
    assert s.mb.jobs.refresh_after_consolidation("b") == []
    # deciding an older draft is a conflict; approving the newest publishes exactly it
    r = s.http.post(f"{BASE}/mental-models/m/draft/approve", json={"draft_id": drafts[0]["draft_id"]})
    assert r.status_code == 409 and s.http.get(f"{BASE}/mental-models/m").json()["content"] == published["content"]
    r = s.http.post(f"{BASE}/mental-models/m/draft/approve", json={"draft_id": drafts[-1]["draft_id"]})
    assert r.status_code == 200 and r.json()["content"] == drafts[-1]["content"]
    approved = _get(s)
    assert approved["last_refreshed_at"] != published["last_refreshed_at"] and approved["is_stale"] is False
    assert s.http.get(f"{BASE}/mental-models/m/history").json()[0]["previous_content"] == published["content"]
    assert s.http.get(f"{BASE}/mental-models/m/draft").status_code == 404
    assert s.http.post(f"{BASE}/mental-models/m/draft/approve").status_code == 404
    # reject: the published model stays as it was, the rejection is on record with its reason
    _retain(s, FACTS[5])
    before = _get(s)
    r = s.http.post(f"{BASE}/mental-models/m/draft/reject", json={"reason": "not about Bob"})
    assert r.status_code == 200 and r.json()["content"] == approved["content"]
    after = _get(s)
    assert {k: after[k] for k in ("content", "last_refreshed_at", "last_memory_seen_at")} == {
        k: before[k] for k in ("content", "last_refreshed_at", "last_memory_seen_at")
    }
    rejected = s.http.get(f"{BASE}/mental-models/m/history").json()[0]
    assert rejected["kind"] == "draft_rejected" and rejected["reason"] == "not about Bob"
    assert s.mb.jobs.refresh_after_consolidation("b") == []  # the rejected draft's facts do not come back by themselves
    # bad bodies are named and change nothing
    for body, field in (({"draft_id": 5}, "draft_id"), ({"bogus": 1}, "bogus")):
        dump = s.dump()
        r = s.http.post(f"{BASE}/mental-models/m/draft/reject", json=body)
        assert r.status_code == 422 and field in r.text and s.dump() == dump
    r = s.http.patch(f"{BASE}/mental-models/m", json={"trigger": {"review": "yes"}})
    assert r.status_code == 422 and "review" in r.text
