"""Retain and recall over HTTP: shapes, filters, replace/append, async, and rejected input."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


@pytest.fixture
def settings(tmp_path: Any) -> Settings:
    """No automatic consolidation: these tests read the facts a retain writes; the observations consolidation forms
    from them have their own tests (test_observations_api.py)."""
    return Settings(
        database_url=str(tmp_path / "mindbank.db"), worker_poll_seconds=0.02, enable_auto_consolidation=False
    )


def retain(client: TestClient, bank: str, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    r = client.post(f"{BASE}/{bank}/memories", json={"items": items, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def recall(client: TestClient, bank: str, query: str, **extra: Any) -> list[dict[str, Any]]:
    r = client.post(f"{BASE}/{bank}/memories/recall", json={"query": query, **extra})
    assert r.status_code == 200, r.text
    return r.json()["results"]


ITEMS = [
    {
        "content": "Alice moved to Paris in 2021. She works as a data engineer at Acme.",
        "context": "onboarding chat",
        "timestamp": "2026-03-01T10:00:00Z",
        "tags": ["user:alice", "team:data"],
        "metadata": {"source": "chat", "turn": "1"},
    },
    {
        "content": "Bob prefers green tea over coffee and runs every morning.",
        "tags": ["user:bob"],
        "document_id": "bob",
    },
    {"content": "The data team ships a release every second Thursday.", "tags": ["team:data"]},
    {"content": "The office closes early on Fridays."},
]


def test_retain_response_shape_and_recall_result_shape(client: TestClient) -> None:
    body = retain(client, "t", ITEMS)
    assert body == {
        "success": True,
        "bank_id": "t",
        "items_count": 4,
        "async": False,
        "operation_id": None,
        "operation_ids": None,
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    }
    results = recall(client, "t", "Where does Alice live?")
    top = results[0]
    assert "Paris" in top["text"]
    assert set(top) >= {
        "id", "text", "type", "entities", "context", "occurred_start", "occurred_end", "mentioned_at",
        "document_id", "metadata", "chunk_id", "tags", "source_fact_ids", "scores", "attachments",
    }  # fmt: skip
    assert top["type"] == "world"
    assert top["tags"] == ["team:data", "user:alice"]
    assert top["metadata"] == {"source": "chat", "turn": "1"}
    assert top["context"] == "onboarding chat"
    assert top["mentioned_at"].startswith("2026-03-01T10:00:00")
    assert top["chunk_id"] and top["document_id"]
    assert set(top["scores"]) == {"final", "reranker", "semantic", "keyword"}


@pytest.mark.parametrize(
    ("tags", "mode", "expected"),
    [
        (["user:alice"], "any", {"alice", "office"}),
        (["user:alice"], "any_strict", {"alice"}),
        (["team:data", "user:alice"], "all", {"alice", "office"}),
        (["team:data"], "all_strict", {"alice", "release"}),
        (["team:data"], "exact", {"release"}),
        ([], "exact", {"office"}),
    ],
)
def test_recall_tag_modes(client: TestClient, tags: list[str], mode: str, expected: set[str]) -> None:
    retain(client, "t", ITEMS)
    results = recall(client, "t", "what happens", tags=tags, tags_match=mode)
    keys = {"Alice": "alice", "Bob": "bob", "release": "release", "office": "office"}
    found = {v for r in results for k, v in keys.items() if k in r["text"]}
    assert found == expected


def test_recall_types_filter_and_token_budget(client: TestClient) -> None:
    retain(client, "t", ITEMS)
    assert recall(client, "t", "Alice", types=["observation"]) == []
    assert len(recall(client, "t", "Alice", types=["world"])) == 4
    small = recall(client, "t", "Alice Paris", max_tokens=5)
    assert len(small) == 1  # the first hit is always returned, the budget stops the rest


def test_retain_replaces_document_by_default_and_appends_on_request(client: TestClient) -> None:
    retain(client, "t", [{"content": "Bob likes chess.", "document_id": "doc1"}])
    retain(client, "t", [{"content": "Bob likes go.", "document_id": "doc1"}])
    texts = [r["text"] for r in recall(client, "t", "What does Bob like?")]
    assert texts == ["Bob likes go."]
    retain(client, "t", [{"content": "Bob also likes poker.", "document_id": "doc1", "update_mode": "append"}])
    texts = sorted(r["text"] for r in recall(client, "t", "What does Bob like?"))
    assert texts == ["Bob also likes poker.", "Bob likes go."]


def test_content_is_split_into_turn_chunks_and_facts_keep_their_chunk(client: TestClient) -> None:
    retain(
        client,
        "t",
        [{"content": "Ann: I adopted a cat named Miso.\nBen: I am learning the cello.", "document_id": "d"}],
    )
    results = recall(client, "t", "pets and music")
    assert sorted(r["text"] for r in results) == ["Ann: I adopted a cat named Miso.", "Ben: I am learning the cello."]
    assert len({r["chunk_id"] for r in results}) == 2
    assert {r["document_id"] for r in results} == {"d"}


def test_async_retain_queues_an_operation_that_completes(client: TestClient, mindbank: MindBank) -> None:
    body = retain(client, "t", [{"content": "Carol plays chess every Sunday."}], **{"async": True})
    assert body["async"] is True and body["operation_id"]
    op = mindbank.wait_for("t", body["operation_id"])
    assert op.status == "completed"
    r = client.get(f"{BASE}/t/operations/{body['operation_id']}")
    assert r.status_code == 200
    assert r.json()["operation_type"] == "batch_retain"
    assert r.json()["status"] == "completed"
    assert "chess" in recall(client, "t", "Who plays chess?")[0]["text"]


def test_recall_on_unknown_bank_is_404(client: TestClient) -> None:
    r = client.post(f"{BASE}/no-such-bank/memories/recall", json={"query": "x"})
    assert r.status_code == 404
    assert r.json() == {"detail": "Bank 'no-such-bank' not found"}
