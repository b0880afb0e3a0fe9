"""What the control plane reads beyond the reference, on both stores: which models cite a memory
(``GET /memories/{id}/cited-by``), why a model is stale (``staleness_reason``: the kind on a list; since, count and
memory ids on a model's GET), per-model ``version`` numbers in ``/history``, and the memory list's time window."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from conftest import Served

BANK = "/v1/default/banks/b"


def retain(s: Served, *texts: str, tags: tuple[str, ...] = ("user:alice",)) -> None:
    items = [{"content": t, "tags": list(tags)} for t in texts]
    assert s.http.post(f"{BANK}/memories", json={"items": items}).status_code == 200
    s.mb.worker.drain()


def model(s: Served, name: str = "Alice") -> str:
    body = {"name": name, "source_query": "What is Alice training for?", "tags": ["user:alice"]}
    created = s.http.post(f"{BANK}/mental-models", json=body).json()
    s.mb.worker.drain()
    return str(created["mental_model_id"])


def refresh(s: Served, model_id: str) -> None:
    assert s.http.post(f"{BANK}/mental-models/{model_id}/refresh").status_code == 200
    s.mb.worker.drain()


def get(s: Served, path: str, **params: Any) -> Any:
    r = s.http.get(f"{BANK}{path}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_cited_by_names_the_models_citing_a_memory_and_survives_its_deletion(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Alice: I started training for the Berlin marathon.", "Alice: My coach says 40 km a week.")
    retain(s, "Bob: I bake sourdough.", tags=("user:bob",))
    model_id = model(s)
    memories = get(s, "/memories/list")["items"]
    content = get(s, f"/mental-models/{model_id}")["content"]
    cited = get(s, f"/memories/{content.split('[mem:', 1)[1].split(']', 1)[0]}")  # the first memory it cites
    bob = next(m for m in memories if "sourdough" in m["text"])

    answer = get(s, f"/memories/{cited['id']}/cited-by")
    assert answer["memory_id"] == cited["id"]
    assert [(m["id"], m["name"], m["is_stale"], m["staleness_reason"]) for m in answer["mental_models"]] == [
        (model_id, "Alice", False, None)
    ]
    assert get(s, f"/memories/{bob['id']}/cited-by")["mental_models"] == []

    assert s.http.delete(f"{BANK}/memories/{cited['id']}").status_code == 200
    after = get(s, f"/memories/{cited['id']}/cited-by")["mental_models"]
    assert [(m["id"], m["is_stale"], m["staleness_reason"]) for m in after] == [
        (model_id, True, {"kind": "cited_memory_gone"})
    ]
    detail = get(s, f"/mental-models/{model_id}")["staleness_reason"]
    assert detail["kind"] == "cited_memory_gone" and detail["count"] == 1 and detail["memory_ids"] == [cited["id"]]
    listed = get(s, "/mental-models")["items"][0]
    assert listed["staleness_reason"] == {"kind": "cited_memory_gone"}  # a list carries the kind only

    refresh(s, model_id)
    assert get(s, f"/mental-models/{model_id}")["staleness_reason"] is None
    assert s.http.get(f"{BANK}/memories/{cited['id']}/cited-by").status_code == 404  # gone and no longer cited
    assert s.http.get(f"{BANK}/memories/nope/cited-by").status_code == 404
    assert s.http.get("/v1/default/banks/none/memories/x/cited-by").status_code == 404


def test_staleness_reason_counts_in_scope_writes_since_the_watermark(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Alice: I started training for the Berlin marathon.")
    model_id = model(s)
    fresh = get(s, f"/mental-models/{model_id}")
    assert fresh["is_stale"] is False and fresh["staleness_reason"] is None
    retain(s, "Bob: unrelated.", tags=("user:bob",))
    assert get(s, f"/mental-models/{model_id}")["staleness_reason"] is None  # out of scope: still fresh
    retain(s, "Alice: I ran 30 km on Sunday.", "Alice: Next is Tokyo.")
    reason = get(s, f"/mental-models/{model_id}")["staleness_reason"]
    facts = get(s, "/memories/list", type="world")["items"]
    new_facts = {m["id"] for m in facts if m["text"].startswith("Alice") and "Berlin" not in m["text"]}
    # the two facts, and whatever consolidation wrote from them in the model's scope (observations)
    assert reason["kind"] == "in_scope_writes" and len(new_facts) == 2 and new_facts <= set(reason["memory_ids"])
    assert reason["count"] == len(reason["memory_ids"]) >= 2
    assert reason["since"] == fresh["last_memory_seen_at"]  # the watermark the writes are counted from


def test_history_numbers_versions_per_model(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Alice: I started training for the Berlin marathon.")
    first = model(s, "Alice")
    other = model(s, "Other")
    retain(s, "Alice: I ran 30 km on Sunday.")
    refresh(s, first)
    history = get(s, f"/mental-models/{first}/history")
    # newest first: the content the second refresh replaced is version 1, the empty start is version 0
    assert [e["version"] for e in history] == [1, 0]
    assert history[1]["previous_content"] == "" and history[0]["previous_content"]
    assert [e["version"] for e in get(s, f"/mental-models/{other}/history")] == [0]  # numbered per model


def test_memory_list_filters_by_when_written(served: Callable[..., Served]) -> None:
    s = served()
    retain(s, "Alice: first.")
    cut = get(s, "/memories/list", type="world")["items"][0]["updated_at"]
    time.sleep(0.01)
    retain(s, "Alice: second.")
    after = get(s, "/memories/list", type="world", written_after=cut)["items"]
    assert [m["text"] for m in after] == ["Alice: second."], [(m["text"], m["updated_at"], cut) for m in after]
    upto = get(s, "/memories/list", type="world", written_before=cut)["items"]
    assert [m["text"] for m in upto] == ["Alice: first."]
    bad = s.http.get(f"{BANK}/memories/list", params={"written_after": "yesterday"})
    assert bad.status_code == 422 and "written_after" in bad.text
