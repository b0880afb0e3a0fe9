"""Bank templates over HTTP: ``GET /export``, ``POST /import`` (with ``dry_run``) and the manifest's JSON Schema."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


def test_a_template_moves_a_banks_setup_to_another_bank(client: TestClient, mindbank: MindBank) -> None:
    client.put(f"{BASE}/src", json={"mission": "Help the running club", "disposition_empathy": 5})
    client.patch(
        f"{BASE}/src/config", json={"updates": {"recall_max_tokens": 1024, "refresh_relevance_threshold": 0.3}}
    )
    client.post(f"{BASE}/src/directives", json={"name": "Be kind", "content": "Answer kindly.", "priority": 3})
    client.post(f"{BASE}/src/mental-models", json={"name": "Alice", "source_query": "What is Alice training for?",
                                                   "tags": ["user:alice"], "id": "alice",
                                                   "trigger": {"refresh_after_consolidation": True}})  # fmt: skip
    manifest = client.get(f"{BASE}/src/export").json()
    assert manifest["version"] == "1"
    assert manifest["directives"] == [{"name": "Be kind", "content": "Answer kindly.", "priority": 3, "is_active": True,
                                       "tags": []}]  # fmt: skip
    assert manifest["bank"] == {"reflect_mission": "Help the running club", "disposition_skepticism": 3,
                                "disposition_literalism": 3, "disposition_empathy": 5, "recall_max_tokens": 1024,
                                "refresh_relevance_threshold": 0.3}  # fmt: skip
    (model,) = manifest["mental_models"]
    assert model["id"] == "alice" and model["trigger"]["refresh_after_consolidation"] is True

    before = mindbank.store.dump()  # type: ignore[attr-defined]
    dry = client.post(f"{BASE}/dst/import", params={"dry_run": True}, json=manifest).json()
    assert dry["dry_run"] is True and dry["mental_models_created"] == ["alice"] and dry["config_applied"] is False
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]

    result = client.post(f"{BASE}/dst/import", json=manifest).json()
    assert result["config_applied"] is True and result["mental_models_created"] == ["alice"]
    assert len(result["operation_ids"]) == 1 and result["directives_created"] == ["Be kind"]
    assert client.get(f"{BASE}/dst/export").json() == manifest
    profile = client.get(BASE).json()["banks"]
    assert {b["bank_id"]: b["mission"] for b in profile}["dst"] == "Help the running club"

    # importing again updates the model (matched by id) and queues nothing
    manifest["mental_models"][0]["name"] = "Alice (v2)"
    manifest["directives"][0]["content"] = "Answer very kindly."
    again = client.post(f"{BASE}/dst/import", json=manifest).json()
    assert again["mental_models_updated"] == ["alice"] and again["operation_ids"] == []
    assert again["directives_updated"] == ["Be kind"]
    (directive,) = client.get(f"{BASE}/dst/directives").json()["items"]
    assert directive["content"] == "Answer very kindly."
    assert client.get(f"{BASE}/dst/mental-models/alice").json()["name"] == "Alice (v2)"
    deadline = time.monotonic() + 30
    while (
        client.get(f"{BASE}/dst/operations", params={"status": "pending"}).json()["total"]
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)


def test_a_bad_template_is_a_422_naming_the_field_and_writes_nothing(client: TestClient, mindbank: MindBank) -> None:
    before = mindbank.store.dump()  # type: ignore[attr-defined]
    cases = [
        ({"version": "2"}, "version"),
        ({"version": "1", "mental_models": [{"id": "Bad Id", "name": "n", "source_query": "q"}]}, "mental_models.0.id"),
        ({"version": "1", "mental_models": [{"id": "m", "name": "n", "source_query": "q", "max_tokens": 10}]},
         "mental_models.0.max_tokens"),
        ({"version": "1", "bank": {"disposition_empathy": 9}}, "bank.disposition_empathy"),
        ({"version": "1", "bank": {"recal_max_tokens": 5}}, "bank"),
        ({"version": "1", "directives": [{"name": "kind", "content": "  "}]}, "directives.0.content"),
    ]  # fmt: skip
    for manifest, field in cases:
        r = client.post(f"{BASE}/b/import", json=manifest)
        assert r.status_code == 422, manifest
        assert r.json()["detail"][0]["loc"] == ["body", field], r.json()
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]
    assert client.get(f"{BASE}/ghost/export").status_code == 404


def test_reference_settings_are_accepted_and_reported_as_ignored(client: TestClient) -> None:
    manifest = {"version": "1", "bank": {"retain_mission": "Extract issues", "enable_observations": True,
                                         "reflect_mission": "Support"}}  # fmt: skip
    result = client.post(f"{BASE}/b/import", json=manifest).json()
    assert result["config_applied"] is True and result["config_ignored"] == ["enable_observations", "retain_mission"]
    assert client.get(f"{BASE}/b/export").json()["bank"] == {"reflect_mission": "Support"}
    schema = client.get("/v1/bank-template-schema").json()
    assert schema["title"] == "BankTemplate" and "mental_models" in schema["properties"]
