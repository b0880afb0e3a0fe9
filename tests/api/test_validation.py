"""Bad input to the three POST endpoints: 422 naming the field, and nothing written (DB dump compared)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"

BAD_RETAIN: list[tuple[Any, str]] = [
    ({}, "items"),
    ({"items": []}, "items"),
    ({"items": "text"}, "items"),
    ({"items": [{"context": "no content"}]}, "content"),
    ({"items": [{"content": 42}]}, "content"),
    ({"items": [{"content": "   "}]}, "content"),
    ({"items": [{"content": "ok", "tags": "not-a-list"}]}, "tags"),
    ({"items": [{"content": "ok", "timestamp": "yesterday-ish"}]}, "timestamp"),
    ({"items": [{"content": "ok", "metadata": {"n": {"nested": 1}}}]}, "metadata"),
    ({"items": [{"content": "ok", "update_mode": "merge"}]}, "update_mode"),
    ({"items": [{"content": "ok"}], "async": "maybe"}, "async"),
]
BAD_RECALL: list[tuple[Any, str]] = [
    ({"budget": "mid"}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": 7}, "query"),
    ({"query": "x", "tags_match": "some"}, "tags_match"),
    ({"query": "x", "types": ["opinion"]}, "types"),
    ({"query": "x", "max_tokens": "lots"}, "max_tokens"),
    ({"query": "x", "tags": "user:a"}, "tags"),
]
BAD_CREATE: list[tuple[Any, str]] = [
    ({"name": "no query"}, "source_query"),
    ({"source_query": "q?"}, "name"),
    ({"name": " ", "source_query": "q?"}, "name"),
    ({"name": "n", "source_query": ""}, "source_query"),
    ({"name": "n", "source_query": "q?", "id": "Bad_Id"}, "id"),
    ({"name": "n", "source_query": "q?", "max_tokens": 100}, "max_tokens"),
    ({"name": "n", "source_query": "q?", "max_tokens": 9000}, "max_tokens"),
    ({"name": "n", "source_query": "q?", "tags": [1, {}]}, "tags"),
    ({"name": "n", "source_query": "q?", "trigger": {"tags_match": "some"}}, "tags_match"),
    ({"name": "n", "source_query": "q?", "trigger": {"fact_types": []}}, "fact_types"),
    ({"name": "n", "source_query": "q?", "trigger": {"mode": "partial"}}, "mode"),
    ({"name": "n", "source_query": "q?", "trigger": {"unknown_knob": 1}}, "unknown_knob"),
    ({"name": "n", "source_query": "q?", "trigger": {"refresh_cron": "daily"}}, "refresh_cron"),
    ({"name": "n", "source_query": "q?", "trigger": {"daily_token_budget": -1}}, "daily_token_budget"),
    ({"name": "n", "source_query": "q?", "trigger": {"daily_token_budget": "lots"}}, "daily_token_budget"),
    (
        {
            "name": "n",
            "source_query": "q?",
            "trigger": {"refresh_cron": "0 3 * * *", "refresh_after_consolidation": True},
        },
        "trigger",
    ),
]


def _assert_422_names(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    locs = [tuple(str(p) for p in e["loc"]) for e in response.json()["detail"]]
    assert any(field in loc for loc in locs), f"{field!r} not named in {locs}"


@pytest.mark.parametrize(("body", "field"), BAD_RETAIN)
def test_rejected_retain_writes_nothing_and_creates_no_bank(
    client: TestClient, mindbank: MindBank, body: Any, field: str
) -> None:
    before = mindbank.store.dump()
    _assert_422_names(client.post(f"{BASE}/fresh/memories", json=body), field)
    assert mindbank.store.dump() == before
    assert not mindbank.store.bank_exists("fresh")


@pytest.mark.parametrize(("body", "field"), BAD_RECALL)
def test_rejected_recall_names_the_field(client: TestClient, mindbank: MindBank, body: Any, field: str) -> None:
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "Alice likes tea."}]})
    mindbank.worker.stop()  # settle the background consolidation the retain queued before comparing dumps
    mindbank.run_pending()
    before = mindbank.store.dump()
    _assert_422_names(client.post(f"{BASE}/b/memories/recall", json=body), field)
    assert mindbank.store.dump() == before


@pytest.mark.parametrize(("body", "field"), BAD_CREATE)
def test_rejected_create_writes_nothing(client: TestClient, mindbank: MindBank, body: Any, field: str) -> None:
    before = mindbank.store.dump()
    _assert_422_names(client.post(f"{BASE}/fresh/mental-models", json=body), field)
    assert mindbank.store.dump() == before
    assert not mindbank.store.bank_exists("fresh")


def test_malformed_json_is_422(client: TestClient) -> None:
    r = client.post(f"{BASE}/b/memories", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
