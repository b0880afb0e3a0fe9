"""Every ``include`` option of recall keeps to the request's tag filter, on both stores.

A source fact is read by id from an observation's citations, so without a check it would escape the tag filter that
chose the observation: a fact tagged ``["private:hr", "team:a"]`` must not come back to ``tags=["team:a"]``,
``tags_match="exact"`` because an observation tagged exactly ``["team:a"]`` cites it. Chunks come only from the
results' own documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import Served

from mindbank.domain.records import NewMemory

BASE = "/v1/default/banks/b"
PRIVATE = "Dana's salary review is scheduled for March."
PUBLIC = "Dana leads the platform team's March planning."
OTHER = "Evan prefers tea over coffee."


def _setup(s: Served) -> tuple[str, str, str]:
    """Three facts (one private to HR, one for team a, one untagged) and an observation tagged ``["team:a"]`` that
    cites the first two; returns ``(private id, public id, observation id)``."""
    items = [
        {"content": PRIVATE, "tags": ["private:hr", "team:a"], "document_id": "d1"},
        {"content": PUBLIC, "tags": ["team:a"], "document_id": "d2"},
        {"content": OTHER, "document_id": "d3"},
    ]
    assert s.http.post(f"{BASE}/memories", json={"items": items}).status_code == 200
    listed = s.http.get(f"{BASE}/memories/list").json()["items"]
    ids = {m["text"]: m["id"] for m in listed}
    text = "Dana has the platform team planning and a review in March."
    observation = NewMemory(
        text=text, fact_type="observation", embedding=s.mb.embedder.embed([text])[0], tags=("team:a",),
        context=None, metadata={}, document_id=None, chunk_id=None, occurred_start=None, occurred_end=None,
        mentioned_at=None, source_memory_ids=(ids[PRIVATE], ids[PUBLIC]), proof_count=2,
    )  # fmt: skip
    (obs_id,) = s.mb.store.write_consolidation(  # type: ignore[attr-defined]
        "b", creates=[observation], updates=[], consolidated_ids=[ids[PRIVATE], ids[PUBLIC]]
    )
    return ids[PRIVATE], ids[PUBLIC], obs_id


def _recall(s: Served, **body: Any) -> dict[str, Any]:
    r = s.http.post(f"{BASE}/memories/recall", json={"query": "What is Dana doing in March?", **body})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_source_facts_keep_to_the_tag_filter(served: Callable[..., Served]) -> None:
    s = served()
    private, public, obs = _setup(s)
    include = {"source_facts": {}}
    exact = _recall(s, tags=["team:a"], tags_match="exact", types=["observation"], include=include)
    assert [r["id"] for r in exact["results"]] == [obs]
    assert set(exact["source_facts"]) == {public}  # the observation cites both; only the fact in scope comes back
    assert exact["source_facts_truncated"] is False
    # a mode the private fact passes gets both
    anyof = _recall(s, tags=["team:a"], tags_match="any", types=["observation"], include=include)
    assert set(anyof["source_facts"]) == {private, public}
    # tag groups are applied to source facts too
    groups = [{"not": {"tags": ["private:hr"], "match": "any_strict"}}]
    grouped = _recall(s, tag_groups=groups, types=["observation"], include=include)
    assert [r["id"] for r in grouped["results"]] == [obs] and set(grouped["source_facts"]) == {public}
    # no tag filter: every cited fact
    assert set(_recall(s, types=["observation"], include=include)["source_facts"]) == {private, public}


def test_chunks_and_entities_come_from_the_results(served: Callable[..., Served]) -> None:
    s = served()
    _setup(s)
    body = _recall(s, tags=["team:a"], tags_match="exact", include={"chunks": {}, "entities": {}})
    results = body["results"]
    assert results and all(r["tags"] == ["team:a"] for r in results)
    chunk_ids = {r["chunk_id"] for r in results if r["chunk_id"]}
    assert set(body["chunks"]) == chunk_ids
    assert all(PRIVATE not in c["text"] and OTHER not in c["text"] for c in body["chunks"].values())
    # entities: each result lists the names its own text mentions; the map holds exactly those
    named = {name for r in results for name in r["entities"]}
    assert "Dana" in named and "Evan" not in named and set(body["entities"]) == named
    dana = body["entities"]["Dana"]
    assert dana["canonical_name"] == "Dana" and dana["observations"] == [] and dana["entity_id"]
    again = _recall(s, tags=["team:a"], tags_match="exact")  # entities are on by default, like the reference's
    assert again["entities"]["Dana"]["entity_id"] == dana["entity_id"]
    # nothing asked: nothing beside the results
    bare = _recall(s, tags=["team:a"], tags_match="exact", include={"entities": None})
    assert bare["chunks"] is None and bare["source_facts"] is None and bare["entities"] is None
    assert all(r["entities"] is None for r in bare["results"])
