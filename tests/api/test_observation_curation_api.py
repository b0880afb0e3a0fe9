"""The reference's observation endpoints on both stores: an observation's history (``GET /memories/{id}/history``),
deleting the observations drawn from a memory, every observation, or a bank's memories (by type), and the bank's
observation scopes — with their staleness and consolidation consequences, and bad input refused naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import Served

BANK = "/v1/default/banks/b"


def retain(s: Served, *texts: str, tags: tuple[str, ...] = ("user:xavier",)) -> list[str]:
    """Each text retained and consolidated on its own; the fact ids, in order."""
    ids: list[str] = []
    for text in texts:
        r = s.http.post(f"{BANK}/memories", json={"items": [{"content": text, "tags": list(tags)}]})
        assert r.status_code == 200, r.text
        s.mb.worker.drain()
        ids += [m["id"] for m in get(s, "/memories/list", type="world")["items"] if m["text"] == text]
    return ids


def get(s: Served, path: str, **params: Any) -> Any:
    r = s.http.get(f"{BANK}{path}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def observations(s: Served) -> list[dict[str, Any]]:
    return list(get(s, "/memories/list", type="observation")["items"])


def observation_model(s: Served) -> str:
    body = {"name": "Xavier", "source_query": "Where does Xavier live?", "tags": ["user:xavier"],
            "trigger": {"fact_types": ["observation"]}}  # fmt: skip
    created = s.http.post(f"{BANK}/mental-models", json=body).json()
    s.mb.worker.drain()
    return str(created["mental_model_id"])


def test_an_observation_history_lists_each_change_with_its_facts(served: Callable[..., Served]) -> None:
    s = served()
    paris, berlin = retain(s, "Xavier: I live in Paris with my partner.", "Xavier: I moved to Berlin with my partner.")
    (obs,) = observations(s)
    (change,) = get(s, f"/memories/{obs['id']}/history")
    assert change["previous_text"] == "Xavier: I live in Paris with my partner."
    assert change["text"] == obs["text"] and "Berlin" in change["text"]
    assert change["previous_source_memory_ids"] == [paris] and change["source_memory_ids"] == [paris, berlin]
    assert change["source_facts_added"] == [{"id": berlin, "text": "Xavier: I moved to Berlin with my partner."}]
    assert change["source_facts_removed"] == [] and change["changed_at"] == obs["updated_at"]

    assert s.http.delete(f"{BANK}/memories/{berlin}").status_code == 200
    s.mb.worker.drain()  # the consolidation the delete queued retells the observation from what is left
    (obs,) = observations(s)  # restated as a new observation, which carries the history on
    newest, older = get(s, f"/memories/{obs['id']}/history")
    assert newest["previous_text"] == change["text"] and newest["text"] == "Xavier: I live in Paris with my partner."
    assert newest["source_facts_removed"] == [{"id": berlin, "text": None}]  # the fact is gone: no text
    assert older["previous_text"] == change["previous_text"]

    assert get(s, f"/memories/{paris}/history") == []  # a fact has no observation history
    assert s.http.get(f"{BANK}/memories/nope/history").status_code == 404
    assert s.http.get("/v1/default/banks/nobody/memories/x/history").status_code == 404


def test_clearing_a_memory_observations_stales_citing_models_and_reconsolidates(served: Callable[..., Served]) -> None:
    s = served()
    (paris,) = retain(s, "Xavier: I live in Paris with my partner.")
    retain(s, "Xavier: I started learning the cello at the Berlin music school last year.")
    model_id = observation_model(s)
    assert get(s, f"/mental-models/{model_id}")["is_stale"] is False
    kept = sorted(o["text"] for o in observations(s))
    paris_obs = next(o for o in observations(s) if "Paris" in o["text"])
    assert get(s, f"/memories/{paris}/observations") == {"memory_id": paris, "items": [paris_obs], "total": 1}

    r = s.http.delete(f"{BANK}/memories/{paris}/observations")
    assert r.status_code == 200 and r.json() == {"deleted_count": 1}
    assert s.http.get(f"{BANK}/memories/{paris_obs['id']}").status_code == 404
    assert get(s, f"/memories/{paris}")["text"] == "Xavier: I live in Paris with my partner."  # the memory stays
    detail = get(s, f"/mental-models/{model_id}")
    assert detail["is_stale"] is True and detail["staleness_reason"]["kind"] == "cited_memory_gone"
    assert detail["staleness_reason"]["memory_ids"] == [paris_obs["id"]]
    s.mb.worker.drain()  # the consolidation it queued builds the memory's observation again
    assert sorted(o["text"] for o in observations(s)) == kept and len(kept) == 2

    before = s.mb.store.dump()  # type: ignore[attr-defined]
    assert s.http.delete(f"{BANK}/memories/nope/observations").status_code == 404
    assert s.http.get(f"{BANK}/memories/nope/observations").status_code == 404
    assert s.http.delete("/v1/default/banks/nobody/memories/x/observations").status_code == 404
    assert s.mb.store.dump() == before  # type: ignore[attr-defined]


def test_clear_observations_then_consolidation_rebuilds_them(served: Callable[..., Served]) -> None:
    s = served()
    retain(
        s,
        "Xavier: I live in Paris with my partner.",
        "Xavier: I started learning the cello at the Berlin music school last year.",
    )
    assert len(observations(s)) == 2
    r = s.http.delete(f"{BANK}/observations")
    assert r.status_code == 200
    assert r.json() == {"success": True, "message": "Deleted 2 observations from bank 'b'", "deleted_count": 2}
    assert observations(s) == []
    assert get(s, "/stats")["pending_consolidation"] == 2  # every fact is back in consolidation's queue
    s.mb.worker.drain()
    assert len(observations(s)) == 2
    assert s.http.delete("/v1/default/banks/nobody/observations").status_code == 404


def test_clear_bank_memories_by_type_or_all(served: Callable[..., Served]) -> None:
    s = served()
    retain(
        s,
        "Xavier: I live in Paris with my partner.",
        "Xavier: I started learning the cello at the Berlin music school last year.",
    )
    before = s.mb.store.dump()  # type: ignore[attr-defined]
    r = s.http.delete(f"{BANK}/memories", params={"type": "opinion"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "type"]
    assert s.mb.store.dump() == before  # type: ignore[attr-defined]

    r = s.http.delete(f"{BANK}/memories", params={"type": "observation"})
    assert r.status_code == 200 and r.json()["deleted_count"] == 2
    s.mb.worker.drain()  # the facts are consolidated again
    r = s.http.delete(f"{BANK}/memories", params={"type": "world"})
    assert r.status_code == 200 and r.json()["deleted_count"] == 2
    s.mb.worker.drain()  # consolidation detaches the deleted facts: observations left with no source go
    assert get(s, "/memories/list")["total"] == 0

    retain(s, "Xavier: I live in Paris with my partner.")
    r = s.http.delete(f"{BANK}/memories")
    assert r.status_code == 200 and r.json()["deleted_count"] == 2  # the fact and its observation
    assert get(s, "/memories/list")["total"] == 0 and get(s, "/documents")["total"] == 0
    assert get(s, "/profile")["bank_id"] == "b"  # the bank stays
    assert s.http.delete("/v1/default/banks/nobody/memories").status_code == 404


def test_observation_scopes_page_and_refuse_bad_limits(served: Callable[..., Served]) -> None:
    s = served()
    retain(
        s,
        "Xavier: I live in Paris with my partner.",
        "Xavier: I started learning the cello at the Berlin music school last year.",
    )
    retain(s, "Yara: I moved to Lisbon with my sister last spring.", tags=("user:yara", "garden"))
    assert get(s, "/observations/scopes") == {
        "scopes": [{"tags": ["user:xavier"], "count": 2}, {"tags": ["garden", "user:yara"], "count": 1}],
        "total": 2, "limit": 100, "offset": 0,
    }  # fmt: skip
    assert get(s, "/observations/scopes", limit=1, offset=1)["scopes"] == [
        {"tags": ["garden", "user:yara"], "count": 1}
    ]
    for field, value in (("limit", 1001), ("limit", -1), ("offset", -1), ("limit", "x")):
        r = s.http.get(f"{BANK}/observations/scopes", params={field: value})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", field], r.text
    assert s.http.get("/v1/default/banks/nobody/observations/scopes").status_code == 404
