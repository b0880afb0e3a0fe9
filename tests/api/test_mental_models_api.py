"""Mental models over HTTP: create, background refresh, detail levels, list, staleness, refresh, history."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"
MM_KEYS = {
    "id", "bank_id", "name", "source_query", "content", "tags", "max_tokens", "trigger", "last_refreshed_at",
    "last_memory_seen_at", "last_refresh_failed_at", "last_full_refreshed_at", "created_at", "is_knowledge_page",
    "reflect_response", "is_stale", "refresh_status",  # refresh_status: beyond the reference (issue 14)
    "next_refresh_at", "next_full_refresh_at",  # beyond the reference: when the trigger's cron schedules fire next
    "staleness_reason",  # beyond the reference: why a model is stale (null when fresh)
}  # fmt: skip
TRIGGER_KEYS = {
    "budget", "mode", "refresh_after_consolidation", "refresh_cron", "full_refresh_cron",
    "min_refresh_interval_seconds", "fact_types", "exclude_mental_models", "exclude_mental_model_ids", "tags_match",
    "tag_groups", "include_chunks", "recall_max_tokens", "recall_chunks_max_tokens",
    "reflect_search_observations_max_tokens", "reflect_search_observations_include_entities", "response_schema",
    "keep_trace", "daily_token_budget", "review",  # daily_token_budget, review: beyond the reference
}  # fmt: skip

FACTS = [
    ("Alice: I started training for the Berlin marathon in September.", ["user:alice"]),
    ("Alice: My marathon training plan has four runs a week and a long run on Sundays.", ["user:alice"]),
    ("Alice: I am building a garden shed with my father, the roof is next.", ["user:alice"]),
    ("Bob: I am learning to bake sourdough bread and my starter is called Gerald.", ["user:bob"]),
    ("Bob: I bake sourdough bread every weekend for the neighbours.", ["user:bob"]),
]


def seed(client: TestClient, bank: str = "b") -> None:
    items = [{"content": text, "tags": tags} for text, tags in FACTS]
    assert client.post(f"{BASE}/{bank}/memories", json={"items": items}).status_code == 200


def create(client: TestClient, bank: str = "b", **body: Any) -> dict[str, str]:
    body = {"name": "Alice", "source_query": "What is Alice working on?", "tags": ["user:alice"], **body}
    r = client.post(f"{BASE}/{bank}/mental-models", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_create_runs_first_refresh_in_background_and_cites_existing_memories(
    client: TestClient, mindbank: MindBank
) -> None:
    seed(client)
    created = create(client)
    assert set(created) == {"mental_model_id", "operation_id", "warnings"} and created["warnings"] == []
    assert created["mental_model_id"].startswith("mm-")
    op = mindbank.wait_for("b", created["operation_id"])
    assert op.status == "completed", op.error
    r = client.get(f"{BASE}/b/operations/{created['operation_id']}")
    assert r.json()["operation_type"] == "refresh_mental_model"
    assert r.json()["details"]["outcome"] == "content_written"

    model = client.get(f"{BASE}/b/mental-models/{created['mental_model_id']}").json()
    assert set(model) == MM_KEYS
    assert set(model["trigger"]) == TRIGGER_KEYS
    assert "marathon" in model["content"]
    assert "sourdough" not in model["content"]  # all_strict scope: Bob's memories are out of scope
    cited = model["reflect_response"]["based_on"]["world"]
    assert cited and all(c["type"] == "world" for c in cited)
    ids = [c["id"] for c in cited]
    assert len(mindbank.store.get_memories("b", ids)) == len(ids)
    assert all(f"[mem:{i}]" in model["content"] for i in ids)
    assert model["is_stale"] is False, model["staleness_reason"]
    assert model["last_memory_seen_at"] is not None
    assert model["last_full_refreshed_at"] is not None


def test_custom_id_and_conflict(client: TestClient, mindbank: MindBank) -> None:
    created = create(client, id="alice-profile")
    assert created["mental_model_id"] == "alice-profile"
    r = client.post(f"{BASE}/b/mental-models", json={"id": "alice-profile", "name": "x", "source_query": "y"})
    assert r.status_code == 409
    models, total = mindbank.list_mental_models("b")
    assert total == 1 and models[0].name == "Alice"


def test_detail_levels_null_out_keys_outside_the_level(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    created = create(client)
    mindbank.wait_for("b", created["operation_id"])
    url = f"{BASE}/b/mental-models/{created['mental_model_id']}"
    meta = client.get(url, params={"detail": "metadata"}).json()
    content = client.get(url, params={"detail": "content"}).json()
    full = client.get(url).json()
    for body in (meta, content, full):
        assert set(body) == MM_KEYS
    assert meta["content"] is None and meta["source_query"] is None and meta["trigger"] is None
    assert meta["reflect_response"] is None and meta["name"] == "Alice"
    assert content["content"] and content["trigger"] and content["reflect_response"] is None
    assert full["reflect_response"]["outcome"] == "content_written"
    assert client.get(url, params={"detail": "everything"}).status_code == 422


def test_list_defaults_to_metadata_with_is_stale_and_orders_by_refresh_time(
    client: TestClient, mindbank: MindBank
) -> None:
    seed(client)
    a = create(client, id="a-model")
    mindbank.wait_for("b", a["operation_id"])
    b = create(client, id="b-model", name="Bob", source_query="What does Bob bake?", tags=["user:bob"])
    mindbank.wait_for("b", b["operation_id"])
    body = client.get(f"{BASE}/b/mental-models").json()
    assert body["total"] == 2 and body["limit"] == 100 and body["offset"] == 0
    assert [m["id"] for m in body["items"]] == ["b-model", "a-model"]
    assert all(m["content"] is None and m["is_stale"] is False for m in body["items"])
    tagged = client.get(f"{BASE}/b/mental-models", params={"tags": ["user:bob"], "detail": "content"}).json()
    assert [m["id"] for m in tagged["items"]] == ["b-model"] and "sourdough" in tagged["items"][0]["content"]
    page = client.get(f"{BASE}/b/mental-models", params={"limit": 1, "offset": 1}).json()
    assert [m["id"] for m in page["items"]] == ["a-model"] and page["total"] == 2
    assert client.get(f"{BASE}/b/mental-models", params={"limit": 0}).status_code == 422


def test_staleness_follows_the_models_scope(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    a = create(client, id="alice")
    b = create(client, id="bob", name="Bob", source_query="What does Bob bake?", tags=["user:bob"])
    u = create(client, id="everyone", name="All", source_query="What are people doing?", tags=[])
    for op in (a, b, u):
        mindbank.wait_for("b", op["operation_id"])

    def stale() -> dict[str, bool]:
        return {m["id"]: m["is_stale"] for m in client.get(f"{BASE}/b/mental-models").json()["items"]}

    assert stale() == {"alice": False, "bob": False, "everyone": False}
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "Bob bought a new oven.", "tags": ["user:bob"]}]})
    assert stale() == {"alice": False, "bob": True, "everyone": True}
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "The weather was grey."}]})
    assert stale() == {"alice": False, "bob": True, "everyone": True}  # untagged writes never stale tagged models
    assert client.get(f"{BASE}/b/mental-models/bob").json()["is_stale"] is True

    r = client.post(f"{BASE}/b/mental-models/bob/refresh")
    assert r.status_code == 200 and r.json()["status"] == "queued"
    assert mindbank.wait_for("b", r.json()["operation_id"]).status == "completed"
    bob = client.get(f"{BASE}/b/mental-models/bob").json()
    assert bob["is_stale"] is False and "oven" in bob["content"]
    history = client.get(f"{BASE}/b/mental-models/bob/history").json()
    assert len(history) == 2  # first refresh (from empty) and this one
    assert "sourdough" in history[0]["previous_content"] and history[1]["previous_content"] == ""
    assert isinstance(history[0]["id"], int) and history[0]["changed_at"]


def test_refresh_with_nothing_in_scope_keeps_content_and_advances_only_the_clock(
    client: TestClient, mindbank: MindBank
) -> None:
    created = create(client, tags=["user:nobody"])
    op = mindbank.wait_for("b", created["operation_id"])
    assert op.status == "completed" and op.result["outcome"] == "content_preserved_no_new_facts"
    model = client.get(f"{BASE}/b/mental-models/{created['mental_model_id']}").json()
    assert model["content"] == "" and model["last_memory_seen_at"] is None


def test_refresh_coalesces_while_pending(mindbank: MindBank) -> None:
    model_id, first = mindbank.create_mental_model("b", name="n", source_query="q?")
    assert mindbank.refresh_mental_model("b", model_id) == first  # not started yet: same operation
    mindbank.run_pending()
    second = mindbank.refresh_mental_model("b", model_id)
    assert second != first


def test_unknown_model_and_operation_are_404(client: TestClient) -> None:
    assert client.get(f"{BASE}/b/mental-models/nope").status_code == 404
    assert client.post(f"{BASE}/b/mental-models/nope/refresh").status_code == 404
    assert client.get(f"{BASE}/b/mental-models/nope/history").status_code == 404
    assert client.get(f"{BASE}/b/operations/nope").status_code == 404
