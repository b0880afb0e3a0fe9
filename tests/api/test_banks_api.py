"""Banks, config, stats, tags, memories and operations endpoints."""

from __future__ import annotations

from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


def retain(client: TestClient, bank: str, *items: dict) -> None:  # type: ignore[type-arg]
    assert client.post(f"{BASE}/{bank}/memories", json={"items": list(items)}).status_code == 200


def test_bank_lifecycle(client: TestClient, mindbank: MindBank) -> None:
    r = client.put(f"{BASE}/team", json={"name": "Team", "mission": "Remember the team", "disposition_empathy": 5})
    assert r.status_code == 200
    assert r.json() == {
        "bank_id": "team", "name": "Team", "mission": "Remember the team",
        "disposition": {"skepticism": 3, "literalism": 3, "empathy": 5}, "background": None,
    }  # fmt: skip
    retain(client, "team", {"content": "Dana ships the release on Thursday."})
    client.post(f"{BASE}/team/mental-models", json={"name": "n", "source_query": "q"})
    banks = client.get(BASE).json()
    assert banks["total"] == 1 and banks["banks"][0]["bank_id"] == "team" and banks["banks"][0]["fact_count"] == 1
    assert client.patch(f"{BASE}/team", json={"name": "Team 2"}).json()["name"] == "Team 2"
    assert client.patch(f"{BASE}/ghost", json={"name": "x"}).status_code == 404
    r = client.delete(f"{BASE}/team")
    assert r.status_code == 200 and r.json()["deleted_count"] == 1
    assert client.get(BASE).json()["total"] == 0
    assert client.get(f"{BASE}/team/mental-models").json()["total"] == 0
    assert client.post(f"{BASE}/team/memories/recall", json={"query": "release"}).status_code == 404
    assert client.delete(f"{BASE}/team").status_code == 404
    assert mindbank.store.count_memories("team") == 0


def test_config_overrides_and_precedence(client: TestClient, mindbank: MindBank) -> None:
    retain(client, "b", {"content": "x"})
    body = client.get(f"{BASE}/b/config").json()
    assert body["overrides"] == {} and body["config"]["recall_max_tokens"] == 2048
    r = client.patch(f"{BASE}/b/config", json={"updates": {"recall_max_tokens": 512, "recall_include_chunks": False}})
    assert r.status_code == 200 and r.json()["config"]["recall_max_tokens"] == 512
    assert r.json()["overrides"] == {"recall_max_tokens": 512, "recall_include_chunks": False}
    assert mindbank.resolved_setting("b", "recall_max_tokens") == 512
    assert mindbank.resolved_setting("b", "recall_max_tokens", {"recall_max_tokens": 100}) == 100
    assert mindbank.resolved_setting("b", "mental_model_min_refresh_interval_seconds") == 0
    for bad in ({"nope": 1}, {"recall_max_tokens": "many"}, {"recall_include_chunks": 3}, {"recall_max_tokens": -5}):
        r = client.patch(f"{BASE}/b/config", json={"updates": bad})
        assert r.status_code == 422 and next(iter(bad)) in str(r.json())
    assert client.get(f"{BASE}/b/config").json()["overrides"]["recall_max_tokens"] == 512
    client.patch(f"{BASE}/b/config", json={"updates": {"recall_max_tokens": None}})
    assert client.get(f"{BASE}/b/config").json()["config"]["recall_max_tokens"] == 2048
    assert client.get(f"{BASE}/ghost/config").status_code == 404


def test_stats_are_live(client: TestClient, mindbank: MindBank) -> None:
    mindbank.worker.stop()
    retain(client, "b", {"content": "One fact."}, {"content": "Another fact.", "document_id": "d2"})
    stats = client.get(f"{BASE}/b/stats").json()
    assert stats["total_nodes"] == 2 and stats["nodes_by_fact_type"] == {"world": 2}
    assert stats["total_documents"] == 2 and stats["pending_consolidation"] == 2
    assert stats["pending_operations"] == 1  # the queued consolidation
    mindbank.run_pending()
    assert client.get(f"{BASE}/b/stats").json()["pending_consolidation"] == 0
    first = stats["last_memory_write_at"]
    retain(client, "b", {"content": "A third fact."})
    again = client.get(f"{BASE}/b/stats").json()
    assert again["last_memory_write_at"] > first and again["total_nodes"] == 3
    client.post(f"{BASE}/b/mental-models", json={"name": "n", "source_query": "q"})
    assert client.get(f"{BASE}/ghost/stats").status_code == 404


def test_tags_from_memories_and_mental_models_with_wildcards(client: TestClient) -> None:
    retain(
        client, "b",
        {"content": "a", "tags": ["user:alice", "team:data"]}, {"content": "b", "tags": ["user:bob"]},
        {"content": "c", "tags": ["user:alice"]},
    )  # fmt: skip
    client.post(f"{BASE}/b/mental-models", json={"name": "n", "source_query": "q", "tags": ["vip", "user:alice"]})
    body = client.get(f"{BASE}/b/tags").json()
    assert body["items"] == [{"tag": "user:alice", "count": 2}, {"tag": "team:data", "count": 1},
                             {"tag": "user:bob", "count": 1}]  # fmt: skip
    assert body["total"] == 3
    users = client.get(f"{BASE}/b/tags", params={"q": "USER:*", "limit": 1}).json()
    assert users["items"] == [{"tag": "user:alice", "count": 2}] and users["total"] == 2
    mm = client.get(f"{BASE}/b/tags", params={"source": "mental_models"}).json()
    assert {i["tag"] for i in mm["items"]} == {"vip", "user:alice"}
    assert client.get(f"{BASE}/b/tags", params={"source": "documents"}).status_code == 422


def test_memories_list_get_delete(client: TestClient, mindbank: MindBank) -> None:
    retain(
        client, "b",
        {"content": "Alice: I adopted a cat.", "tags": ["user:alice"]}, {"content": "Bob: I bought a bike.", "tags": ["user:bob"]},
        {"content": "The office is closed on Friday."},
    )  # fmt: skip
    body = client.get(f"{BASE}/b/memories/list").json()
    assert body["total"] == 3 and len(body["items"]) == 3
    alice = client.get(f"{BASE}/b/memories/list", params={"tags": ["user:alice"], "tags_match": "any_strict"}).json()
    assert [m["text"] for m in alice["items"]] == ["Alice: I adopted a cat."]
    assert client.get(f"{BASE}/b/memories/list", params={"q": "BIKE"}).json()["total"] == 1
    assert client.get(f"{BASE}/b/memories/list", params={"type": "observation"}).json()["total"] == 0
    page = client.get(f"{BASE}/b/memories/list", params={"limit": 2, "offset": 2}).json()
    assert page["total"] == 3 and len(page["items"]) == 1
    memory_id = alice["items"][0]["id"]
    got = client.get(f"{BASE}/b/memories/{memory_id}").json()
    assert got["text"] == "Alice: I adopted a cat." and got["tags"] == ["user:alice"]
    assert client.delete(f"{BASE}/b/memories/{memory_id}").status_code == 200
    assert client.get(f"{BASE}/b/memories/{memory_id}").status_code == 404
    assert client.delete(f"{BASE}/b/memories/{memory_id}").status_code == 404
    hits = client.post(f"{BASE}/b/memories/recall", json={"query": "cat adopted"}).json()["results"]
    assert memory_id not in {h["id"] for h in hits}
    assert client.get(f"{BASE}/ghost/memories/list").status_code == 404


def test_deleting_a_cited_memory_makes_the_model_stale_until_refreshed(client: TestClient, mindbank: MindBank) -> None:
    retain(
        client, "b",
        {"content": "Alice: I am restoring an old sailing boat in the harbour.", "tags": ["user:alice"]},
        {"content": "Alice: I volunteer at the animal shelter walking dogs.", "tags": ["user:alice"]},
    )  # fmt: skip
    op = client.post(f"{BASE}/b/mental-models", json={"id": "alice", "name": "A", "source_query": "What does Alice do?",
                                                     "tags": ["user:alice"]}).json()["operation_id"]  # fmt: skip
    mindbank.wait_for("b", op)
    model = client.get(f"{BASE}/b/mental-models/alice").json()
    cited = model["reflect_response"]["based_on"]["world"][0]["id"]
    client.delete(f"{BASE}/b/memories/{cited}")
    assert client.get(f"{BASE}/b/mental-models/alice").json()["is_stale"] is True
    assert client.get(f"{BASE}/b/mental-models").json()["items"][0]["is_stale"] is True
    op = client.post(f"{BASE}/b/mental-models/alice/refresh").json()["operation_id"]
    mindbank.wait_for("b", op)
    fresh = client.get(f"{BASE}/b/mental-models/alice").json()
    assert fresh["is_stale"] is False and cited not in fresh["content"]


def test_operations_list_filter_and_cancel(client: TestClient, mindbank: MindBank) -> None:
    mindbank.worker.stop()  # keep operations pending
    retain(client, "b", {"content": "x"})
    a = client.post(f"{BASE}/b/mental-models", json={"name": "a", "source_query": "q"}).json()["operation_id"]
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "y"}], "async": True})
    body = client.get(f"{BASE}/b/operations").json()
    assert body["total"] == 3 and body["limit"] == 20 and {o["status"] for o in body["operations"]} == {"pending"}
    kinds = sorted(o["operation_type"] for o in body["operations"])
    assert kinds == ["batch_retain", "consolidation", "refresh_mental_model"]
    refreshes = client.get(f"{BASE}/b/operations", params={"type": "refresh_mental_model"}).json()
    assert [o["id"] for o in refreshes["operations"]] == [a]
    r = client.delete(f"{BASE}/b/operations/{a}")
    assert r.json() == {"success": True, "message": f"Operation '{a}' cancelled", "operation_id": a}
    assert client.get(f"{BASE}/b/operations/{a}").json()["status"] == "cancelled"
    assert client.delete(f"{BASE}/b/operations/{a}").status_code == 409
    assert client.get(f"{BASE}/b/operations", params={"status": "cancelled"}).json()["total"] == 1
    assert client.delete(f"{BASE}/b/operations/nope").status_code == 404
    mindbank.run_pending()
    assert client.get(f"{BASE}/b/operations/{a}").json()["status"] == "cancelled"  # it never ran


def test_openapi_documents_every_route(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in [
        "/v1/default/banks", "/v1/default/banks/{bank_id}", "/v1/default/banks/{bank_id}/config",
        "/v1/default/banks/{bank_id}/stats", "/v1/default/banks/{bank_id}/tags", "/v1/default/banks/{bank_id}/memories",
        "/v1/default/banks/{bank_id}/memories/list", "/v1/default/banks/{bank_id}/memories/{memory_id}",
        "/v1/default/banks/{bank_id}/memories/recall", "/v1/default/banks/{bank_id}/mental-models",
        "/v1/default/banks/{bank_id}/mental-models/scope-preview",
        "/v1/default/banks/{bank_id}/mental-models/{mental_model_id}",
        "/v1/default/banks/{bank_id}/mental-models/{mental_model_id}/clear",
        "/v1/default/banks/{bank_id}/mental-models/{mental_model_id}/revert",
        "/v1/default/banks/{bank_id}/mental-models/{mental_model_id}/refresh",
        "/v1/default/banks/{bank_id}/mental-models/{mental_model_id}/history",
        "/v1/default/banks/{bank_id}/operations", "/v1/default/banks/{bank_id}/operations/{operation_id}",
    ]:  # fmt: skip
        assert path in paths, path


def test_consolidate_endpoint_coalesces_per_bank(client: TestClient, mindbank: MindBank) -> None:
    mindbank.worker.stop()
    retain(client, "b", {"content": "Eve: I adopted a rescue cat called Miso."},
           {"content": "Eve: I adopted a rescue cat named Miso.", "document_id": "d2"})  # fmt: skip
    first = client.post(f"{BASE}/b/consolidate").json()
    assert first["deduplicated"] is True  # the retain already queued one
    again = client.post(f"{BASE}/b/consolidate", json={"observation_scopes": "per_tag"}).json()
    assert again["operation_id"] == first["operation_id"]
    assert client.post(f"{BASE}/b/consolidate", json={"observation_scopes": "sideways"}).status_code == 422
    assert client.post(f"{BASE}/ghost/consolidate").status_code == 404
    mindbank.run_pending()
    assert client.get(f"{BASE}/b/operations/{first['operation_id']}").json()["status"] == "completed"
    stats = client.get(f"{BASE}/b/stats").json()
    assert stats["total_observations"] == 1 and stats["pending_consolidation"] == 0


def test_memory_edits_are_writes_that_move_staleness(client: TestClient, mindbank: MindBank) -> None:
    retain(client, "b", {"content": "Alice: I restore old sailing boats in the harbour.", "tags": ["user:alice"]},
           {"content": "Bob: I bake sourdough bread every weekend.", "tags": ["user:bob"]})  # fmt: skip
    op = client.post(f"{BASE}/b/mental-models", json={"id": "alice", "name": "A", "source_query": "What does Alice do?",
                                                     "tags": ["user:alice"]}).json()["operation_id"]  # fmt: skip
    mindbank.wait_for("b", op)
    bob = client.get(f"{BASE}/b/memories/list", params={"tags": ["user:bob"], "tags_match": "any_strict"}).json()
    bob_id = bob["items"][0]["id"]
    before = client.get(f"{BASE}/b/stats").json()["last_memory_write_at"]
    r = client.patch(f"{BASE}/b/memories/{bob_id}", json={"tags": ["user:alice"], "text": "Alice: I bake bread too."})
    assert (
        r.status_code == 200 and r.json()["tags"] == ["user:alice"] and r.json()["text"] == "Alice: I bake bread too."
    )
    assert r.json()["updated_at"] > before
    assert client.get(f"{BASE}/b/mental-models/alice").json()["is_stale"] is True  # moved into the model's scope
    hits = client.post(f"{BASE}/b/memories/recall", json={"query": "bake bread", "tags": ["user:alice"],
                                                           "tags_match": "all_strict"}).json()["results"]  # fmt: skip
    assert hits[0]["id"] == bob_id  # re-embedded and re-indexed (text and tags)
    assert client.patch(f"{BASE}/b/memories/{bob_id}", json={"text": "  "}).status_code == 422
    assert client.patch(f"{BASE}/b/memories/nope", json={"text": "x"}).status_code == 404
