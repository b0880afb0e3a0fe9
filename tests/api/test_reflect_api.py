"""``POST /reflect``: the reference's request/response shapes, the extractive answer, validation (422 writing
nothing), unknown bank, and LLM failures mapped to 502/503."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import settle
from fastapi.testclient import TestClient

from mindbank.providers.llm.base import LLMTransientError
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, tool_reply

BASE = "/v1/default/banks"
FACTS = [
    {"content": "Dana: I am restoring a 1970s sailing boat with my brother.", "tags": ["user:dana"]},
    {"content": "Dana: The boat needs a new mast before summer.", "tags": ["user:dana"]},
    {"content": "Eli: I am learning to play the cello.", "tags": ["user:eli"]},
]


@pytest.fixture
def filled(client: TestClient) -> TestClient:
    assert client.post(f"{BASE}/b/memories", json={"items": FACTS}).status_code == 200
    settle(client)
    return client


def test_wire_shape_and_extractive_answer(filled: TestClient) -> None:
    response = filled.post(f"{BASE}/b/reflect", json={"query": "What is Dana restoring?", "budget": "low"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"text", "based_on", "structured_output", "structured_output_error", "usage", "trace"}
    assert body["text"].startswith("_Extractive answer (no LLM configured)")
    assert "sailing boat" in body["text"] and "[mem:" in body["text"]
    assert body["based_on"] is None and body["trace"] is None and body["structured_output"] is None
    assert body["usage"] == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "cached_tokens": 0,
                             "thoughts_tokens": 0}  # fmt: skip


def test_include_facts_and_tool_calls(filled: TestClient) -> None:
    body = filled.post(
        f"{BASE}/b/reflect",
        json={"query": "What is Dana restoring?", "include": {"facts": {}, "tool_calls": {"output": False}},
              "tags": ["user:dana"], "tags_match": "any_strict"},
    ).json()  # fmt: skip
    memories = body["based_on"]["memories"]
    assert memories and all(m["tags"] == ["user:dana"] for m in memories)
    assert {"id", "text", "type", "context", "occurred_start", "mentioned_at"} <= set(memories[0])
    assert body["based_on"]["mental_models"] == [] and body["based_on"]["directives"] == []
    calls = body["trace"]["tool_calls"]
    assert [c["tool"] for c in calls] == ["search_observations", "recall"]
    assert all(c["output"] is None and c["iteration"] >= 1 and "duration_ms" in c for c in calls)
    assert body["trace"]["llm_calls"] == [] and body["trace"]["engine"] == "extractive"


def test_tag_groups_scope_the_answer(filled: TestClient) -> None:
    groups = [{"tags": ["user:eli"], "match": "any_strict"}]
    body = filled.post(f"{BASE}/b/reflect", json={"query": "What is going on?", "tag_groups": groups,
                                                  "include": {"facts": {}}}).json()  # fmt: skip
    assert {m["tags"][0] for m in body["based_on"]["memories"]} == {"user:eli"}


def test_mental_models_answer_first_when_fresh(filled: TestClient, mindbank: MindBank) -> None:
    created = filled.post(
        f"{BASE}/b/mental-models",
        json={"name": "Dana's projects", "source_query": "What is Dana restoring?", "tags": ["user:dana"]},
    ).json()
    mid = created["mental_model_id"]
    assert mindbank.wait_for("b", created["operation_id"], timeout=30).status == "completed"
    body = filled.post(f"{BASE}/b/reflect", json={"query": "What is Dana restoring?", "include": {"facts": {}}}).json()
    assert "From the mental model **Dana's projects** (fresh)" in body["text"]
    assert [m["id"] for m in body["based_on"]["mental_models"]] == [mid]
    excluded = filled.post(
        f"{BASE}/b/reflect", json={"query": "What is Dana restoring?", "exclude_mental_model_ids": [mid]}
    ).json()
    assert "mental model" not in excluded["text"]


def test_response_schema_needs_an_llm(filled: TestClient) -> None:
    schema = {"type": "object", "properties": {"project": {"type": "string"}}}
    body = filled.post(f"{BASE}/b/reflect", json={"query": "What is Dana restoring?", "response_schema": schema}).json()
    assert body["structured_output"] is None and "MINDBANK_LLM_PROVIDER" in body["structured_output_error"]


BAD: list[tuple[dict[str, Any], str]] = [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": "q", "budget": "huge"}, "budget"),
    ({"query": "q", "tags": ["a"], "tag_groups": [{"tags": ["a"]}]}, "body"),
    ({"query": "q", "tag_groups": [{"tags": ["a"], "match": "sometimes"}]}, "tag_groups"),
    ({"query": "q", "tag_groups": [{"tags": ["a"], "resolve": "fuzzy"}]}, "tag_groups"),
    ({"query": "q", "fact_types": []}, "fact_types"),
    ({"query": "q", "fact_types": ["opinion"]}, "fact_types"),
    ({"query": "q", "response_schema": {"type": "array"}}, "response_schema"),
    ({"query": "q", "response_schema": {"type": "object", "properties": {}}}, "response_schema"),
    ({"query": "q", "tags_match": "some"}, "tags_match"),
    ({"query": "q", "max_tokens": 0}, "max_tokens"),
]


@pytest.mark.parametrize(("body", "field"), BAD)
def test_bad_requests_are_422_and_write_nothing(
    filled: TestClient, mindbank: MindBank, body: dict[str, Any], field: str
) -> None:
    mindbank.worker.stop()  # nothing may run in the background while we compare dumps
    before = mindbank.store.dump()  # type: ignore[attr-defined]
    response = filled.post(f"{BASE}/b/reflect", json=body)
    assert response.status_code == 422, response.text
    assert any(field in [str(p) for p in d["loc"]] for d in response.json()["detail"]), response.text
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]


def test_unknown_bank_is_404(client: TestClient) -> None:
    response = client.post(f"{BASE}/nobody/reflect", json={"query": "anything?"})
    assert response.status_code == 404 and response.json() == {"detail": "Bank 'nobody' not found"}


def test_llm_failures_map_to_502_and_503(filled: TestClient, mindbank: MindBank) -> None:
    mindbank.llms["reflect"] = ScriptedLLM(default=tool_reply("recall", query="boat"))  # never calls done
    never_done = filled.post(f"{BASE}/b/reflect", json={"query": "What is Dana restoring?"})
    assert never_done.status_code == 502 and "no answer" in never_done.json()["detail"]
    mindbank.llms["reflect"] = ScriptedLLM(default=LLMTransientError("RateLimitError: 429", status=429))
    assert filled.post(f"{BASE}/b/reflect", json={"query": "What is Dana restoring?"}).status_code == 503
