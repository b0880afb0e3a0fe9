"""The rest of the mental-model API (issue 4): PATCH, DELETE, clear, revert, scope preview, coalescing, triggers."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


FACTS = ["world", "experience"]


def seed(client: TestClient, bank: str = "b") -> None:
    items = [
        {"content": "Alice: I started training for the Berlin marathon in September.", "tags": ["user:alice"]},
        {"content": "Alice: My marathon plan has four runs a week and a long run on Sundays.", "tags": ["user:alice"]},
        {"content": "Bob: I bake sourdough bread every weekend for the neighbours.", "tags": ["user:bob"]},
    ]
    assert client.post(f"{BASE}/{bank}/memories", json={"items": items}).status_code == 200


def create_ready(client: TestClient, mb: MindBank, model_id: str = "alice", **body: Any) -> dict[str, Any]:
    body = {
        "id": model_id,
        "name": "Alice",
        "source_query": "What is Alice training for?",
        "tags": ["user:alice"],
        **body,
    }
    r = client.post(f"{BASE}/b/mental-models", json=body)
    assert r.status_code == 200, r.text
    assert mb.wait_for("b", r.json()["operation_id"]).status == "completed"
    return client.get(f"{BASE}/b/mental-models/{model_id}").json()


def test_patch_merges_trigger_and_queues_no_refresh(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    create_ready(client, mindbank, trigger={"refresh_after_consolidation": True, "keep_trace": True})
    ops_before = client.get(f"{BASE}/b/operations").json()["total"]
    r = client.patch(f"{BASE}/b/mental-models/alice", json={"name": "Alice (renamed)", "trigger": {"mode": "delta"}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["name"] == "Alice (renamed)"
    assert body["trigger"]["mode"] == "delta" and body["trigger"]["keep_trace"] is True
    assert body["trigger"]["refresh_after_consolidation"] is True
    assert client.get(f"{BASE}/b/operations").json()["total"] == ops_before
    assert len(client.get(f"{BASE}/b/mental-models/alice/history").json()) == 1  # name-only change: no new row

    r = client.patch(f"{BASE}/b/mental-models/alice", json={"trigger": {"refresh_cron": "0 3 * * *"}})
    assert r.json()["trigger"]["refresh_cron"] == "0 3 * * *"
    assert r.json()["trigger"]["refresh_after_consolidation"] is False  # cron drops the unstated other trigger
    r = client.patch(f"{BASE}/b/mental-models/alice", json={"trigger": {"refresh_after_consolidation": True}})
    assert r.json()["trigger"]["refresh_cron"] is None and r.json()["trigger"]["refresh_after_consolidation"] is True

    before = client.get(f"{BASE}/b/mental-models/alice").json()
    bad = client.patch(
        f"{BASE}/b/mental-models/alice",
        json={"trigger": {"refresh_cron": "0 3 * * *", "refresh_after_consolidation": True}},
    )
    assert bad.status_code == 422 and "trigger" in str(bad.json())
    assert client.get(f"{BASE}/b/mental-models/alice").json() == before
    for body in ({"max_tokens": 10}, {"name": "  "}, {"trigger": {"nope": 1}}, {"trigger": {"refresh_cron": "x"}}):
        assert client.patch(f"{BASE}/b/mental-models/alice", json=body).status_code == 422, body
    assert client.get(f"{BASE}/b/mental-models/alice").json() == before
    assert client.patch(f"{BASE}/b/mental-models/ghost", json={"name": "x"}).status_code == 404


def test_delete_removes_model_and_history(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    create_ready(client, mindbank)
    assert client.delete(f"{BASE}/b/mental-models/alice").json() == {"status": "deleted"}
    assert client.get(f"{BASE}/b/mental-models/alice").status_code == 404
    assert client.delete(f"{BASE}/b/mental-models/alice").status_code == 404
    assert mindbank.store.list_history("b", "alice") == []


def test_clear_keeps_config_records_history_and_leaves_model_stale(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    before = create_ready(client, mindbank, trigger={"mode": "delta"})
    r = client.post(f"{BASE}/b/mental-models/alice/clear")
    assert r.status_code == 200
    cleared = r.json()
    assert cleared["content"] == "" and cleared["reflect_response"] is None
    assert cleared["trigger"] == before["trigger"] and cleared["source_query"] == before["source_query"]
    assert cleared["is_stale"] is True
    history = client.get(f"{BASE}/b/mental-models/alice/history").json()
    assert history[0]["previous_content"] == before["content"]
    op = client.post(f"{BASE}/b/mental-models/alice/refresh").json()["operation_id"]
    assert mindbank.wait_for("b", op).status == "completed"
    rebuilt = client.get(f"{BASE}/b/mental-models/alice").json()
    assert "marathon" in rebuilt["content"] and rebuilt["is_stale"] is False


def test_refresh_full_upgrades_a_pending_one_and_running_is_never_reused(mindbank: MindBank) -> None:
    model_id, first = mindbank.create_mental_model("b", name="n", source_query="q?")
    assert mindbank.refresh_mental_model("b", model_id, mode="full") == first
    assert mindbank.get_operation("b", first).payload["mode"] == "full"
    claimed = mindbank.store.claim_operation("w", 60)  # the queued refresh starts running
    assert claimed is not None and claimed.id == first
    second = mindbank.refresh_mental_model("b", model_id)
    assert second != first
    assert mindbank.refresh_mental_model("b", model_id) == second


def test_revert_restores_a_version_and_records_itself(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    first = create_ready(client, mindbank)
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "Alice: I ran a half marathon in 1:45 today.",
                                                       "tags": ["user:alice"]}]})  # fmt: skip
    op = client.post(f"{BASE}/b/mental-models/alice/refresh").json()["operation_id"]
    mindbank.wait_for("b", op)
    second = client.get(f"{BASE}/b/mental-models/alice").json()
    assert second["content"] != first["content"]
    history = client.get(f"{BASE}/b/mental-models/alice/history").json()
    version = next(h for h in history if h["previous_content"] == first["content"])
    r = client.post(f"{BASE}/b/mental-models/alice/revert", json={"history_id": version["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["content"] == first["content"]
    after = client.get(f"{BASE}/b/mental-models/alice/history").json()
    assert after[0]["previous_content"] == second["content"] and len(after) == len(history) + 1
    reverted = client.get(f"{BASE}/b/mental-models/alice").json()
    assert reverted["last_memory_seen_at"] == first["last_memory_seen_at"]  # the restored version's data position
    assert reverted["is_stale"] is True  # the half-marathon memory is newer than the restored content
    assert reverted["last_refreshed_at"] == second["last_refreshed_at"]  # a revert is not a refresh
    assert client.post(f"{BASE}/b/mental-models/alice/revert", json={"history_id": 99999}).status_code == 404
    assert client.post(f"{BASE}/b/mental-models/alice/revert", json={}).status_code == 422


def test_revert_of_a_failure_record_is_rejected(mindbank: MindBank) -> None:
    from dataclasses import replace

    model_id, _ = mindbank.create_mental_model("b", name="n", source_query="q?")
    model = mindbank.get_mental_model("b", model_id)
    mindbank.store.save_refresh(replace(model), history={"kind": "refresh_failed", "outcome": "x"}, history_cap=50)
    entry = mindbank.store.list_history("b", model_id)[0]
    from mindbank.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        mindbank.revert_mental_model("b", model_id, entry.id)


def test_scope_preview_and_warnings(client: TestClient, mindbank: MindBank) -> None:
    seed(client)
    r = client.post(f"{BASE}/b/mental-models/scope-preview", json={"tags": ["user:alice", "team"]})
    assert r.json()["total"] == 0 and r.json()["tags_match"] == "all_strict"
    r = client.post(
        f"{BASE}/b/mental-models/scope-preview",
        json={"tags": ["user:alice", "team"], "trigger": {"tags_match": "any", "fact_types": FACTS}},
    )  # the facts only: the running worker may have consolidated them into observations already
    assert r.json()["total"] == 2 and r.json()["by_fact_type"] == {"world": 2, "experience": 0, "observation": 0}
    groups = {"tag_groups": [{"or": [{"tags": ["user:alice"]}, {"tags": ["user:bob"]}]}], "fact_types": FACTS}
    assert client.post(f"{BASE}/b/mental-models/scope-preview", json={"trigger": groups}).json()["total"] == 3
    created = client.post(
        f"{BASE}/b/mental-models", json={"name": "x", "source_query": "y", "tags": ["user:alice", "team"]}
    ).json()
    assert created["warnings"] and "matches no memories" in created["warnings"][0]
    patched = client.patch(
        f"{BASE}/b/mental-models/{created['mental_model_id']}", json={"trigger": {"tags_match": "any"}}
    ).json()
    assert patched["warnings"] == []


@pytest.mark.parametrize(
    ("trigger", "ok"),
    [
        ({"refresh_cron": "*/15 * * * *"}, True),
        ({"refresh_cron": "0 25 * * *"}, False),
        ({"refresh_cron": "0 3 * * * *"}, False),
        ({"min_refresh_interval_seconds": 0}, True),
        ({"min_refresh_interval_seconds": -1}, False),
        ({"budget": "high", "full_refresh_cron": "0 4 * * 0"}, True),
        ({"budget": "huge"}, False),
        ({"tag_groups": [{"and": [{"tags": ["a"]}, {"not": {"tags": ["b"], "match": "any"}}]}]}, True),
        ({"tag_groups": [{"and": []}]}, False),
        ({"tag_groups": [{"tags": ["a"], "match": "some"}]}, False),
        ({"tag_groups": [{"tags": ["a"], "resolve": "fuzzy"}]}, False),
        (
            {"response_schema": {"type": "object", "properties": {"risk": {"type": "string"}}, "required": ["risk"]}},
            True,
        ),
        ({"response_schema": {"type": "object", "properties": {}}}, False),
        ({"response_schema": {"properties": {"x": {"type": "date"}}}}, False),
        ({"response_schema": {"properties": {"x": {"type": "string"}}, "required": ["y"]}}, False),
        (
            {"response_schema": {"properties": {"o": {"type": "object", "properties": {"n": {"type": "decimal"}}}}}},
            False,
        ),
        ({"fact_types": ["world", "observation"], "exclude_mental_model_ids": ["m1"], "include_chunks": False}, True),
        ({"recall_max_tokens": 0}, False),
        ({"reflect_search_observations_max_tokens": 100, "reflect_search_observations_include_entities": False}, True),
    ],
)
def test_trigger_fields_are_validated_and_stored(client: TestClient, trigger: dict[str, Any], ok: bool) -> None:
    r = client.post(f"{BASE}/b/mental-models", json={"name": "n", "source_query": "q", "trigger": trigger})
    assert (r.status_code == 200) is ok, r.text
    if ok:
        stored = client.get(f"{BASE}/b/mental-models/{r.json()['mental_model_id']}").json()["trigger"]
        for key, value in trigger.items():
            if key == "tag_groups":
                assert stored[key][0].keys() == value[0].keys()
            else:
                assert stored[key] == value


def test_dry_run_whose_engine_fails_is_a_502_and_writes_nothing(client: TestClient, mindbank: MindBank) -> None:
    from mindbank.engine.synthesis.port import SynthesisError
    from mindbank.testing import ScriptedSynthesizer

    seed(client)
    create_ready(client, mindbank)
    mindbank.refresher.synthesizer = ScriptedSynthesizer(compose_script=SynthesisError("no_answer", "no document"))
    before = client.get(f"{BASE}/b/mental-models/alice").json()
    r = client.post(f"{BASE}/b/mental-models/alice/dry-run-refresh")
    assert r.status_code == 502 and r.json()["detail"] == "dry run failed (no_answer): no document"
    assert client.get(f"{BASE}/b/mental-models/alice").json() == before
