"""Documents, chunks and document history over HTTP; deleting a document makes the models citing it stale."""

from __future__ import annotations

from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks/b"


def retain(client: TestClient, *items: dict) -> None:  # type: ignore[type-arg]
    assert client.post(f"{BASE}/memories", json={"items": list(items)}).status_code == 200


def test_list_get_chunks_history_and_search(client: TestClient) -> None:
    retain(client, {"content": "Alice: I run marathons.\nBob: I bake bread.", "document_id": "chat-1",
                    "tags": ["team"], "context": "standup", "metadata": {"channel": "#general"}})  # fmt: skip
    retain(client, {"content": "Quarterly report: revenue grew.", "document_id": "report-2024"})
    page = client.get(f"{BASE}/documents").json()
    assert page["total"] == 2 and page["total_is_estimate"] is False
    assert [d["id"] for d in page["items"]] == ["report-2024", "chat-1"]
    chat = page["items"][1]
    assert (
        chat["memory_unit_count"] == 2
        and chat["tags"] == ["team"]
        and chat["document_metadata"] == {"channel": "#general"}
    )
    assert chat["retain_params"] == {"context": "standup"} and "original_text" not in chat
    found = client.get(f"{BASE}/documents", params={"q": "REPORT"}).json()
    assert [(d["id"], d["matched_fields"]) for d in found["items"]] == [("report-2024", ["id", "original_text"])]
    tagged = client.get(f"{BASE}/documents", params={"tags": ["team"]}).json()
    assert [d["id"] for d in tagged["items"]] == ["chat-1"]
    assert client.get(f"{BASE}/documents", params={"limit": 1, "offset": 1}).json()["items"][0]["id"] == "chat-1"
    doc = client.get(f"{BASE}/documents/chat-1").json()
    assert doc["original_text"].startswith("Alice:") and doc["nodes_by_fact_type"] == {"world": 2}
    chunks = client.get(f"{BASE}/documents/chat-1/chunks").json()
    assert chunks["total"] == 2 and [c["chunk_index"] for c in chunks["items"]] == [0, 1]
    assert client.get(f"/v1/default/chunks/{chunks['items'][0]['chunk_id']}").json()["chunk_text"].startswith("Alice")
    history = client.get(f"{BASE}/documents/chat-1/history").json()
    assert history["total"] == 1 and history["items"][0]["kind"] == "retain"
    assert history["items"][0]["facts_added"] == 2
    assert client.get(f"{BASE}/documents/nope").status_code == 404
    assert client.get(f"{BASE}/documents/nope/chunks").status_code == 404
    assert client.get("/v1/default/banks/ghost/documents").status_code == 404
    assert client.get(f"{BASE}/documents", params={"time_field": "mentioned_at"}).status_code == 422
    assert client.get("/v1/default/chunks/nope").status_code == 404


def test_retag_and_delete_document_make_citing_models_stale(client: TestClient, mindbank: MindBank) -> None:
    retain(client, {"content": "Alice: I started training for the Berlin marathon.", "document_id": "d1",
                    "tags": ["user:alice"]},
           {"content": "Alice: I also love sourdough.", "document_id": "d2", "tags": ["user:alice"]})  # fmt: skip
    created = client.post(f"{BASE}/mental-models", json={
        "name": "Alice", "source_query": "What is Alice doing?", "tags": ["user:alice"], "id": "alice"}).json()  # fmt: skip
    assert mindbank.wait_for("b", created["operation_id"], timeout=30).status == "completed"
    assert client.get(f"{BASE}/mental-models/alice").json()["is_stale"] is False
    r = client.patch(f"{BASE}/documents/d2", json={"tags": ["user:bob"]})  # an uncited fact leaves the scope
    assert r.status_code == 200 and r.json() == {"success": True}
    assert client.get(f"{BASE}/documents/d2").json()["tags"] == ["user:bob"]
    listed = client.get(f"{BASE}/memories/list", params={"tags": ["user:bob"], "tags_match": "all_strict"}).json()
    assert [m["document_id"] for m in listed["items"]] == ["d2"]
    assert client.get(f"{BASE}/mental-models/alice").json()["is_stale"] is False
    client.patch(f"{BASE}/documents/d1", json={"tags": ["user:bob"]})  # the cited fact leaves the scope
    assert client.get(f"{BASE}/mental-models/alice").json()["is_stale"] is True
    assert client.get(f"{BASE}/documents/d1/history").json()["items"][0]["kind"] == "retag"
    assert client.patch(f"{BASE}/documents/d2", json={"observation_scopes": "per_tag"}).status_code == 422
    client.patch(f"{BASE}/documents/d1", json={"tags": ["user:alice"]})  # and comes back
    refreshed = client.post(f"{BASE}/mental-models/alice/refresh", json={"mode": "full"}).json()
    assert mindbank.wait_for("b", refreshed["operation_id"], timeout=30).status == "completed"
    model = client.get(f"{BASE}/mental-models/alice").json()
    assert model["is_stale"] is False and "Berlin marathon" in model["content"]
    r = client.delete(f"{BASE}/documents/d1")
    assert r.status_code == 200 and r.json()["memory_units_deleted"] == 1 and r.json()["document_id"] == "d1"
    assert client.get(f"{BASE}/documents/d1").status_code == 404
    assert client.get(f"{BASE}/memories/list", params={"document_id": "d1"}).json()["total"] == 0
    assert client.get(f"{BASE}/mental-models/alice").json()["is_stale"] is True  # a cited memory is gone
    assert client.delete(f"{BASE}/documents/d1").status_code == 404


def test_reprocess_document(client: TestClient, mindbank: MindBank) -> None:
    retain(client, {"content": "Alice: I run marathons.", "document_id": "d1", "tags": ["x"],
                    "timestamp": "2026-03-01T10:00:00Z"})  # fmt: skip
    before = {m["id"] for m in client.get(f"{BASE}/memories/list").json()["items"]}
    r = client.post(f"{BASE}/documents/d1/reprocess")
    assert r.status_code == 200 and r.json()["success"] is True and r.json()["items_count"] == 1
    op = mindbank.wait_for("b", r.json()["operation_id"], timeout=30)
    assert op.status == "completed" and op.operation_type == "reprocess_document"
    after = client.get(f"{BASE}/memories/list").json()["items"]
    assert len(after) == 1 and after[0]["id"] not in before and after[0]["tags"] == ["x"]
    assert after[0]["occurred_start"].startswith("2026-03-01T10:00:00")
    events = client.get(f"{BASE}/documents/d1/history").json()["items"]
    assert events[0]["kind"] == "reprocess" and events[0]["operation_id"] == op.id
    assert events[0]["facts_added"] == 1 and events[0]["facts_removed"] == 1
    assert client.post(f"{BASE}/documents/nope/reprocess").status_code == 404
