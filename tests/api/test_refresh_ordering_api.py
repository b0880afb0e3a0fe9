"""A refresh runs after the consolidation its bank queued before it, on both stores, with the worker's two slots
running: a model created (or refreshed) right after a retain reads the observations that retain's consolidation
writes and is fresh when its refresh ends; a ``refresh_after_consolidation`` model created that way is refreshed
once, not twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.conftest import Served

BASE = "/v1/default/banks/b"
OBSERVATIONS_ONLY = {"fact_types": ["observation"]}  # the model reads nothing the consolidation has not written


def retain(s: Served, *texts: str) -> None:
    items = [{"content": text, "tags": ["user:ana"]} for text in texts]
    r = s.http.post(f"{BASE}/memories", json={"items": items})
    assert r.status_code == 200, r.text


def finished(s: Served, operation_id: str) -> dict[str, Any]:
    op = s.mb.wait_for("b", operation_id, timeout=60)
    assert op.status == "completed", op.error
    return dict(op.result or {})


def model(s: Served, model_id: str) -> dict[str, Any]:
    r = s.http.get(f"{BASE}/mental-models/{model_id}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def running(served: Callable[..., Served]) -> Served:
    s = served(worker_slots=2)  # two slots: a refresh could otherwise run alongside the consolidation
    s.mb.start_worker()
    return s


def test_a_model_created_right_after_a_retain_is_fresh_and_reads_its_observations(
    served: Callable[..., Served],
) -> None:
    s = running(served)
    for n, (text, words) in enumerate([
        ("Ana: I started training for the Lisbon half marathon in October.", "Lisbon half marathon"),
        ("Ana: My sister and I are restoring an old fishing boat in Porto.", "fishing boat"),
        ("Ana: I am learning to play the Portuguese guitar with a teacher.", "Portuguese guitar"),
    ]):  # fmt: skip
        retain(s, text)
        body = {"name": f"Ana {n}", "id": f"ana-{n}", "source_query": "What is Ana doing?", "tags": ["user:ana"],
                "trigger": OBSERVATIONS_ONLY}  # fmt: skip
        created = s.http.post(f"{BASE}/mental-models", json=body)  # no wait for the consolidation in between
        assert created.status_code == 200, created.text
        result = finished(s, created.json()["operation_id"])
        assert result["outcome"] == "content_written" and result["facts_used"] >= 1
        got = model(s, f"ana-{n}")
        assert got["is_stale"] is False and got["staleness_reason"] is None, got
        assert words in got["content"]


def test_a_refresh_asked_for_right_after_a_retain_reads_its_observations(served: Callable[..., Served]) -> None:
    s = running(served)
    retain(s, "Ana: I started training for the Lisbon half marathon in October.")
    body = {"name": "Ana", "id": "ana", "source_query": "What is Ana doing?", "tags": ["user:ana"],
            "trigger": OBSERVATIONS_ONLY}  # fmt: skip
    finished(s, s.http.post(f"{BASE}/mental-models", json=body).json()["operation_id"])
    for text, words in [
        ("Ana: My sister and I are restoring an old fishing boat in Porto.", "fishing boat"),
        ("Ana: I am learning to play the Portuguese guitar with a teacher.", "Portuguese guitar"),
    ]:
        retain(s, text)
        refreshed = s.http.post(f"{BASE}/mental-models/ana/refresh", json={"mode": "full"})
        assert refreshed.status_code == 200, refreshed.text
        finished(s, refreshed.json()["operation_id"])
        got = model(s, "ana")
        assert got["is_stale"] is False and words in got["content"], got


def test_a_refresh_after_consolidation_model_created_right_after_a_retain_is_refreshed_once(
    served: Callable[..., Served],
) -> None:
    s = running(served)
    retain(s, "Ana: I started training for the Lisbon half marathon in October.")
    body = {"name": "Ana", "id": "ana", "source_query": "What is Ana doing?", "tags": ["user:ana"],
            "trigger": {**OBSERVATIONS_ONLY, "refresh_after_consolidation": True}}  # fmt: skip
    created = s.http.post(f"{BASE}/mental-models", json=body).json()
    finished(s, created["operation_id"])
    # the consolidation ended before the refresh began: its automatic refresh folded into the queued first one
    refreshes, total = s.mb.store.list_operations(  # type: ignore[attr-defined]
        "b", status=None, operation_type="refresh_mental_model", limit=10, offset=0
    )
    assert total == 1 and [op.id for op in refreshes] == [created["operation_id"]]
    got = model(s, "ana")
    assert got["is_stale"] is False and "Lisbon half marathon" in got["content"]


def test_a_model_created_right_after_a_queued_retain_reads_its_facts_observations(
    served: Callable[..., Served],
) -> None:
    s = running(served)
    items = [{"content": "Ana: My sister and I are restoring an old fishing boat in Porto.", "tags": ["user:ana"]}]
    queued = s.http.post(f"{BASE}/memories", json={"items": items, "async": True})
    assert queued.status_code == 200 and queued.json()["operation_id"], queued.text
    body = {"name": "Ana", "id": "ana", "source_query": "What is Ana doing?", "tags": ["user:ana"],
            "trigger": OBSERVATIONS_ONLY}  # fmt: skip
    created = s.http.post(f"{BASE}/mental-models", json=body)  # the retain may not even have started
    finished(s, created.json()["operation_id"])
    assert finished(s, queued.json()["operation_id"]) is not None
    got = model(s, "ana")
    assert got["is_stale"] is False and "fishing boat" in got["content"], got
