"""Recall implements every field of the reference's ``RecallRequest``, on both stores: score floors on the scores
mindbank computes, the temporal window as a boost, tag groups, prefer_observations, chunks, source facts, trace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import Served

BASE = "/v1/default/banks/b"
MEMORIES = [
    {"content": "Alice flew to Paris for a conference.", "timestamp": "2024-03-10T09:00:00Z", "tags": ["user:alice"]},
    {"content": "Alice flew to Rome to see her sister.", "timestamp": "2024-06-12T09:00:00Z", "tags": ["user:alice"]},
    {"content": "Bob flew to Oslo for a ski trip.", "timestamp": "2024-06-14T09:00:00Z", "tags": ["user:bob"]},
    {"content": "Alice adores green tea with honey.", "timestamp": "2024-01-05T09:00:00Z", "document_id": "t1"},
    {"content": "Alice really adores green tea with honey.", "timestamp": "2024-01-06T09:00:00Z", "document_id": "t2"},
]
# what hindsight-client 1.1.0 sends for recall("b", "q", min_scores=..., temporal_window=..., include_chunks=True)
REFERENCE_CLIENT_BODY = {
    "query": "Where did Alice fly?", "budget": "mid", "max_tokens": 4096, "trace": False,
    "include": {"chunks": {"max_tokens": 8192}, "entities": None, "source_facts": None}, "tags_match": "any",
    "min_scores": {"semantic": 0.0, "keyword": None, "reranker": None, "final": None},
    "temporal_window": {"start": "2024-06-01T00:00:00+00:00", "end": "2024-06-30T00:00:00+00:00"},
    "types": None, "prefer_observations": None, "query_timestamp": None, "tags": None, "tag_groups": None,
}  # fmt: skip


def recall(s: Served, **body: Any) -> dict[str, Any]:
    r = s.http.post(f"{BASE}/memories/recall", json=body)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def texts(result: dict[str, Any]) -> list[str]:
    return [r["text"] for r in result["results"]]


def test_recall_request_fields(served: Callable[..., Served]) -> None:
    s = served()
    assert s.http.post(f"{BASE}/memories", json={"items": MEMORIES}).status_code == 200
    s.mb.run_pending()  # consolidation: the two tea facts become one observation
    query = "Where did Alice fly?"

    plain = recall(s, query=query)
    assert len(plain["results"]) >= 3 and plain["trace"] is None and plain["chunks"] is None

    # temporal_window ranks memories dated inside it higher; it does not filter
    june = {"start": "2024-06-01T00:00:00Z", "end": "2024-06-30T23:59:59Z"}
    boosted = recall(s, query=query, temporal_window=june)
    assert texts(boosted)[0] == "Alice flew to Rome to see her sister."
    assert "Alice flew to Paris for a conference." in texts(boosted)
    paris = next(r for r in boosted["results"] if "Paris" in r["text"])
    rome = next(r for r in boosted["results"] if "Rome" in r["text"])
    rome_plain = next(r for r in plain["results"] if "Rome" in r["text"])
    assert (
        rome["scores"]["final"] > rome_plain["scores"]["final"] and rome["scores"]["final"] > paris["scores"]["final"]
    )
    window_only = recall(s, query="zebra", temporal_window=june)  # no text match: the window alone surfaces them
    assert {"Alice flew to Rome to see her sister.", "Bob flew to Oslo for a ski trip."} <= set(texts(window_only))

    # min_scores: final drops results below it; semantic prunes the dense candidates (a null stays null)
    top = plain["results"][0]["scores"]["final"]
    # the best fact and the observation that restates it tie: every result left says what the best one says
    assert set(texts(recall(s, query=query, min_scores={"final": top}))) == {plain["results"][0]["text"]}
    assert recall(s, query=query, min_scores={"final": 5.0})["results"] == []
    floor = 0.3
    for r in recall(s, query=query, min_scores={"semantic": floor})["results"]:
        assert r["scores"]["semantic"] is None or r["scores"]["semantic"] >= floor
    for r in recall(s, query=query, min_scores={"keyword": 0.5})["results"]:
        assert r["scores"]["keyword"] is None or r["scores"]["keyword"] >= 0.5

    # tag groups (AND-ed with tags), budget, trace
    only_bob = recall(s, query=query, tag_groups=[{"tags": ["user:bob"], "match": "any_strict"}])
    # Bob's one fact, and the observation consolidation formed from it
    assert set(texts(only_bob)) == {"Bob flew to Oslo for a ski trip."}
    assert {r["type"] for r in only_bob["results"]} == {"world", "observation"}
    not_bob = recall(s, query=query, tag_groups=[{"not": {"tags": ["user:bob"], "match": "any_strict"}}])
    assert "Bob flew to Oslo for a ski trip." not in texts(not_bob)
    traced = recall(s, query=query, trace=True, budget="low")
    assert traced["trace"]["num_results"] == len(traced["results"]) and traced["trace"]["query"] == query

    # chunks: the chunk of each result, keyed by chunk id
    with_chunks = recall(s, query=query, include={"chunks": {"max_tokens": 4}})
    # (an observation has no chunk: the first fact's)
    first_fact = next(r for r in with_chunks["results"] if r["type"] != "observation")
    chunk = with_chunks["chunks"][first_fact["chunk_id"]]
    assert chunk["truncated"] is True and chunk["chunk_index"] == 0 and chunk["text"].startswith("Alice flew")

    # observations: prefer_observations drops the facts an observation was built from; source_facts lists them
    both = ["world", "experience", "observation"]
    raw = recall(s, query="What does Alice drink?", types=both, include={"source_facts": {}})
    observations = [r for r in raw["results"] if r["type"] == "observation"]
    assert observations, raw
    sources = set(observations[0]["source_fact_ids"])
    assert sources and sources <= set(raw["source_facts"]) and raw["source_facts_truncated"] is False
    assert all(f["scores"] is None for f in raw["source_facts"].values())
    preferred = recall(s, query="What does Alice drink?", types=both, prefer_observations=True)
    assert not sources & {r["id"] for r in preferred["results"]}
    assert sources & {r["id"] for r in raw["results"]}

    # the reference's own client sends every field, nulls included
    assert recall(s, **REFERENCE_CLIENT_BODY)["chunks"]


def test_recall_refusals(served: Callable[..., Served]) -> None:
    s = served()
    s.http.post(f"{BASE}/memories", json={"items": MEMORIES[:1]})
    for body, field in (
        ({"min_scores": {"reranker": 0.2}}, "reranker"),
        ({"min_scores": {"final": "high"}}, "final"),
        ({"min_scores": {"semantic": 0.2, "other": 1}}, "other"),
        ({"temporal_window": {"start": "2024-07-01T00:00:00Z", "end": "2024-06-01T00:00:00Z"}}, "temporal_window"),
        ({"temporal_window": {"start": "2024-07-01T00:00:00Z"}}, "end"),
        ({"tag_groups": [{"tags": ["a"], "resolve": "fuzzy"}]}, "tag_groups"),
        ({"include": {"entities": {"max_tokens": 0}}}, "max_tokens"),
        ({"filters": {"tag": "a"}}, "filters"),
    ):
        r = s.http.post(f"{BASE}/memories/recall", json={"query": "Paris", **body})
        assert r.status_code == 422, (body, r.text)
        assert any(field in [str(p) for p in e["loc"]] for e in r.json()["detail"]), (body, r.text)
