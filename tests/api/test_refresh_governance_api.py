"""Refresh governance over HTTP (issue 14): budgets as bank overrides and trigger fields (bad values are 4xx naming
the field, nothing written), and the spend and governance state on the model, the bank stats and the operation."""

from __future__ import annotations

from fastapi.testclient import TestClient

from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


def test_budgets_are_bank_overrides_and_trigger_fields(client: TestClient, mindbank: MindBank) -> None:
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "Alice: I run.", "tags": ["user:alice"]}]})
    updates = {"refresh_model_daily_token_budget": 1000, "refresh_bank_daily_token_budget": 5000}
    r = client.patch(f"{BASE}/b/config", json={"updates": updates})
    assert r.status_code == 200 and r.json()["overrides"] == updates
    for bad in ({"refresh_bank_daily_token_budget": -1}, {"refresh_model_daily_token_budget": "many"}):
        before = mindbank.store.dump()  # type: ignore[attr-defined]
        r = client.patch(f"{BASE}/b/config", json={"updates": bad})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "updates", next(iter(bad))]
        assert mindbank.store.dump() == before  # type: ignore[attr-defined]
    body = {"name": "A", "source_query": "What does Alice do?", "tags": ["user:alice"], "id": "a",
            "trigger": {"daily_token_budget": 300}}  # fmt: skip
    op_id = client.post(f"{BASE}/b/mental-models", json=body).json()["operation_id"]
    assert mindbank.wait_for("b", op_id).status == "completed"
    model = client.get(f"{BASE}/b/mental-models/a").json()
    assert model["trigger"]["daily_token_budget"] == 300
    assert model["refresh_status"]["daily_token_budget"] == 300  # the trigger beats the bank override
    r = client.patch(f"{BASE}/b/mental-models/a", json={"trigger": {"daily_token_budget": -3}})
    assert r.status_code == 422 and "daily_token_budget" in str(r.json())
    r = client.patch(f"{BASE}/b/mental-models/a", json={"trigger": {"daily_token_budget": None}})
    assert r.status_code == 200 and r.json()["refresh_status"]["daily_token_budget"] == 1000  # the bank's again


def test_spend_and_governance_are_visible(client: TestClient, mindbank: MindBank) -> None:
    client.post(f"{BASE}/b/memories", json={"items": [{"content": "Alice: I run.", "tags": ["user:alice"]}]})
    body = {"name": "A", "source_query": "What does Alice do?", "tags": ["user:alice"], "id": "a"}
    op_id = client.post(f"{BASE}/b/mental-models", json=body).json()["operation_id"]
    assert mindbank.wait_for("b", op_id).status == "completed"
    status = client.get(f"{BASE}/b/mental-models/a").json()["refresh_status"]
    assert status["consecutive_failures"] == 0 and status["breaker_open"] is False
    assert status["carried_over"] == [] and status["reanchor"] is None and status["last_refusal"] is None
    total = status["spend"]["total"]
    assert total["refreshes"] == 1 and total["llm_calls"] == 0 and total["cost"] is None  # extractive, no prices
    listed = client.get(f"{BASE}/b/mental-models").json()["items"][0]
    assert listed["refresh_status"]["spend"] == status["spend"]
    stats = client.get(f"{BASE}/b/stats").json()
    assert stats["refresh_spend"]["total"]["refreshes"] == 1 and stats["failing_models"] == 0
    assert stats["bank_breaker_open"] is False and stats["refresh_budget"]["bank_daily_tokens"] is None
    result = client.get(f"{BASE}/b/operations/{op_id}").json()["result_metadata"]
    assert result["spend"]["refreshes"] == 1 and result["spend"]["total_tokens"] == 0
