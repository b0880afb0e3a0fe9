"""LLM request tracing: off by default, stored per operation when on (readable over HTTP, reflect included),
purged after the retention period, never holding a credential."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from llm_helpers import QUERY, make_model
from test_agent import obedient
from test_llm_synthesis import writer

from mindbank.config import Settings
from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import utcnow
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.llm.base import ChatRequest, ChatResult, ManagedLLM
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.service.tracing import LLMTracer
from mindbank.store.open import open_store
from mindbank.testing import ScriptedLLM


class ScriptedProvider:
    """A Provider answering from a ScriptedLLM, so calls pass through ManagedLLM and its observers like real ones."""

    provider, model = "scripted", "scripted-1"

    def __init__(self, llm: ScriptedLLM) -> None:
        self.llm = llm

    def complete(self, request: ChatRequest) -> ChatResult:
        return self.llm.chat(request.messages, tools=request.tools, tool_choice=request.tool_choice,
                             response_schema=request.response_schema, scope=request.scope)  # fmt: skip


@pytest.fixture
def traced(llm_settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Callable[..., MindBank]]:
    """``traced(**settings)``: a MindBank whose refresh and reflect LLMs are observed by the tracer, as open() does."""
    opened: list[MindBank] = []

    def make(**changes: Any) -> MindBank:
        settings = replace(llm_settings, **changes)
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        tracer = LLMTracer(
            store, enabled=settings.llm_trace_enabled, retention_hours=settings.llm_trace_retention_hours
        )
        llms = {
            "refresh": ManagedLLM(ScriptedProvider(ScriptedLLM(default=writer)), observers=[tracer]),
            "reflect": ManagedLLM(ScriptedProvider(ScriptedLLM(default=obedient())), observers=[tracer]),
        }
        opened.append(MindBank(store=store, embedder=embedder, settings=settings, llms=llms))
        return opened[-1]

    yield make
    for mb in opened:
        mb.close()


def refresh_op_id(mb: MindBank) -> str:
    (op,) = [o for o in mb.list_operations("b")[0] if o.operation_type == "refresh_mental_model"]
    return op.id


def test_tracing_is_off_by_default(traced: Callable[..., MindBank]) -> None:
    mb = traced()
    assert "[mem:" in make_model(mb).content
    assert mb.llm_requests("b", refresh_op_id(mb)) == []
    assert mb.store.dump()["llm_requests"] == []  # type: ignore[attr-defined]


def test_traces_are_readable_per_operation_and_purged(traced: Callable[..., MindBank]) -> None:
    mb = traced(llm_trace_enabled=True, llm_trace_retention_hours=1.0)
    make_model(mb)
    op_id = refresh_op_id(mb)
    with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as client:
        body = client.get(f"/v1/default/banks/b/operations/{op_id}/llm-requests").json()
        assert client.get("/v1/default/banks/b/operations/nope/llm-requests").status_code == 404
        reflected = client.post("/v1/default/banks/b/reflect", json={"query": QUERY, "include": {"tool_calls": {}}})
        request_id = reflected.json()["trace"]["request_id"]
        reflect_rows = client.get(f"/v1/default/banks/b/operations/{request_id}/llm-requests").json()["items"]
    (item,) = body["items"]
    assert body["operation_id"] == op_id and body["tracing_enabled"] is True
    assert (item["scope"], item["provider"], item["attempt"], item["error"]) == ("agent_1", "scripted", 1, None)
    assert item["request"]["tool_choice"] == "required" and "done" in item["request"]["tools"]
    assert QUERY in json.dumps(item["request"]["messages"]) and item["response"]["tool_calls"][0]["name"] == "done"
    assert item["usage"] == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    assert request_id.startswith("reflect-") and reflect_rows[0]["scope"] == "agent_1"

    old = LLMRequestRecord(
        id="old", bank_id="b", operation_id=op_id, scope="x", provider="p", model="m", attempt=1, request={},
        response=None, error=None, input_tokens=0, output_tokens=0, duration_ms=0,
        created_at=utcnow() - timedelta(hours=2),
    )  # fmt: skip
    mb.store.record_llm_request(old)
    LLMTracer(mb.store, enabled=True, retention_hours=1.0)._maybe_purge()
    assert [r.id for r in mb.llm_requests("b", op_id)] == [item["id"]]
