"""Issue 13 over HTTP on both stores: the same text retained again is one fact with a mention count (a memory write
that stales models in scope, recorded once even when a queued retain is rerun after a crash); an unchanged document
re-retained changes nothing, new tags or metadata alone update it in place; facts retained one call at a time
still consolidate into an observation."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Served

from mindbank.engine.retain import parts

BASE = "/v1/default/banks/b"
REX = {"content": "Rex is my dog.", "tags": ["user:ann"], "timestamp": "2025-01-01T00:00:00+00:00"}


def retain(s: Served, *items: dict[str, Any], async_: bool = False) -> dict[str, Any]:
    r = s.http.post(f"{BASE}/memories", json={"items": list(items), "async": async_})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def facts(s: Served, **params: Any) -> list[dict[str, Any]]:
    page = s.http.get(f"{BASE}/memories/list", params={"type": "world", "limit": 100, **params}).json()
    return page["items"]  # type: ignore[no-any-return]


def model(s: Served, tags: list[str]) -> dict[str, Any]:
    created = s.http.post(f"{BASE}/mental-models", json={"name": "Ann", "source_query": "What about Ann's dog?",
                                                         "tags": tags, "id": "ann"})  # fmt: skip
    assert created.status_code == 200, created.text
    s.mb.run_pending()
    return s.http.get(f"{BASE}/mental-models/ann").json()  # type: ignore[no-any-return]


def stamp(s: Served) -> str:
    return s.http.get(f"{BASE}/stats").json()["last_memory_write_at"]  # type: ignore[no-any-return]


def test_the_same_text_again_is_one_fact_mentioned_twice_and_a_write(served: Callable[..., Served]) -> None:
    s = served()
    first = retain(s, REX)
    assert model(s, ["user:ann"])["is_stale"] is False
    before = stamp(s)
    again = retain(s, {**REX, "content": "rex is  my DOG.", "timestamp": "2025-02-01T00:00:00+00:00"})
    assert again["success"] is True
    (fact,) = facts(s)
    assert fact["text"] == "Rex is my dog." and fact["mention_count"] == 2
    assert fact["last_mentioned_at"].startswith("2025-02-01") and fact["mentioned_at"].startswith("2025-01-01")
    assert fact["updated_at"] > fact["created_at"] and stamp(s) > before
    assert s.http.get(f"{BASE}/mental-models/ann").json()["is_stale"] is True
    # the same text under other tags is another fact; its single mention reads as such
    retain(s, {**REX, "tags": ["user:bo"]})
    other = facts(s, tags=["user:bo"], tags_match="all_strict")
    assert [f["mention_count"] for f in other] == [1] and other[0]["last_mentioned_at"] == other[0]["mentioned_at"]
    assert s.http.get(f"{BASE}/memories/{fact['id']}").json()["mention_count"] == 2
    hits = s.http.post(f"{BASE}/memories/recall", json={"query": "Rex dog", "tags": ["user:ann"]}).json()["results"]
    assert hits[0]["id"] == fact["id"] and hits[0]["mention_count"] == 2
    documents = s.http.get(f"{BASE}/documents").json()
    assert documents["total"] == 2  # the repeat left no empty document behind
    assert first["success"] is True


class Crash(BaseException):
    """A worker dying mid-operation: not an error the worker handles, the operation stays claimed."""


@pytest.mark.parametrize("when", ["after_commit", "before_commit"])
def test_a_queued_retain_rerun_after_a_crash_records_each_repeat_once(
    served: Callable[..., Served], monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    s = served(worker_lease_seconds=0.3, enable_auto_consolidation=False)
    retain(s, REX)
    monkeypatch.setattr(parts, "PART_FACTS", 1)  # one fact per part: one transaction each
    items = [{"content": "Ann walks Rex.", "tags": ["user:ann"]}, REX, {"content": "Ann feeds Rex.",
             "tags": ["user:ann"]}, REX]  # fmt: skip
    op_id = retain(s, *items, async_=True)["operation_id"]
    real = s.mb.store.write_documents
    calls = {"n": 0}

    def crashing(bank_id: str, documents: Any, **options: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the part holding the first repeat
            if when == "before_commit":
                raise Crash()
            real(bank_id, documents, **options)  # committed, then the process dies
            raise Crash()
        return real(bank_id, documents, **options)

    monkeypatch.setattr(s.mb.store, "write_documents", crashing)
    with pytest.raises(Crash):
        s.mb.run_pending()
    monkeypatch.setattr(s.mb.store, "write_documents", real)
    time.sleep(0.4)  # the dead worker's lease runs out
    s.mb.run_pending()
    done = s.mb.get_operation("b", op_id)
    assert done.status == "completed"
    rex = [f for f in facts(s) if f["text"] == "Rex is my dog."]
    assert [f["mention_count"] for f in rex] == [3]  # the first retain, and two repeats: each once
    assert sorted(f["text"] for f in facts(s)) == ["Ann feeds Rex.", "Ann walks Rex.", "Rex is my dog."]
    assert done.result == {"items_count": 4, "unit_ids_count": 4}


@pytest.mark.parametrize("async_", [False, True], ids=["sync", "queued"])
def test_an_unchanged_document_re_retained_changes_nothing(served: Callable[..., Served], async_: bool) -> None:
    s = served()
    doc = {"content": "Ann: Rex is my dog. He is three years old and loves the beach.", "document_id": "d1",
           "tags": ["user:ann"], "metadata": {"dia_id": "D1:1"}, "timestamp": "2025-01-01T00:00:00+00:00"}  # fmt: skip
    retain(s, doc)
    assert model(s, ["user:ann"])["is_stale"] is False
    ids = [f["id"] for f in facts(s, document_id="d1")]
    history = s.http.get(f"{BASE}/documents/d1/history").json()
    before = stamp(s)
    consolidations = s.mb.list_operations("b", operation_type="consolidation")[1]
    for again in (doc, {k: v for k, v in doc.items() if k != "timestamp"}):  # no timestamp: the stored one stays
        retain(s, again, async_=async_)
        s.mb.run_pending()
        assert [f["id"] for f in facts(s, document_id="d1")] == ids
        assert s.mb.list_operations("b", operation_type="consolidation")[1] == consolidations  # nothing to consolidate
        assert stamp(s) == before
        assert s.http.get(f"{BASE}/documents/d1/history").json() == history
        assert s.http.get(f"{BASE}/mental-models/ann").json()["is_stale"] is False
    # new metadata and tags alone: the same facts, updated in place (a memory write)
    retain(s, {**doc, "metadata": {"dia_id": "D1:2"}, "tags": ["user:ann", "pets"]}, async_=async_)
    s.mb.run_pending()
    updated = facts(s, document_id="d1")
    assert [f["id"] for f in updated] == ids
    assert all(f["metadata"] == {"dia_id": "D1:2"} and f["tags"] == ["pets", "user:ann"] for f in updated)
    assert stamp(s) > before
    assert s.http.get(f"{BASE}/documents/d1").json()["tags"] == ["pets", "user:ann"]
    assert s.http.get(f"{BASE}/documents/d1/history").json()["items"][0]["kind"] == "update"
    assert s.http.get(f"{BASE}/mental-models/ann").json()["is_stale"] is True  # a memory write in its scope
    # new content: replaced as before (new ids)
    retain(s, {**doc, "content": "Ann: Rex is my dog. He is four now."}, async_=async_)
    s.mb.run_pending()
    assert set(f["id"] for f in facts(s, document_id="d1")).isdisjoint(ids)


def test_facts_retained_one_call_at_a_time_form_an_observation(served: Callable[..., Served]) -> None:
    s = served()
    # one statement said ten ways, one retain (and its consolidation) at a time
    openers = ["", "So, ", "Well, ", "Anyway, ", "Also, ", "Oh, ", "Right, ", "Okay, ", "Yes, ", "Indeed, "]
    for opener in openers:
        retain(s, {"content": f"{opener}Priya joined the data team to work on the ingestion pipelines."})
        s.mb.run_pending()  # the consolidation each retain queues
    page = s.http.get(f"{BASE}/memories/list", params={"type": "observation"}).json()
    assert page["total"] == 1
    (observation,) = page["items"]
    assert observation["proof_count"] == 10 and len(observation["source_memory_ids"]) == 10
    assert observation["text"] == "Priya joined the data team to work on the ingestion pipelines."
