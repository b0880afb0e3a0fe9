"""Directives and the bank's mission in the LLM engine, through the real OpenAI SDK against the fake server: active,
in-scope directives (highest priority first) go into the reflect agent's and the refresh's prompts, full and delta;
inactive and out-of-scope ones do not. The extractive engine stores them and follows none. Traced calls are
readable at the reference's ``/llm-requests`` paths, and the LLM metrics move."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fake_servers import Reply, Seen, openai_reply, serving
from fastapi.testclient import TestClient
from llm_helpers import BOAT, QUERY, make_model, retain
from prometheus_client.parser import text_string_to_metric_families
from test_refresh_over_http import WIRES, document_writer

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.llm.base import ManagedLLM
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.service.tracing import LLMTracer
from mindbank.store.open import open_store

OPENAI = WIRES[0]


def obedient(seen: Seen) -> Reply:
    """The agent's server side: call the forced tool, else ``done``; delta edits: no operations."""
    body = seen.body
    if body.get("response_format", {}).get("json_schema", {}).get("name") == "delta_operations":
        return openai_reply(json.dumps({"operations": []}))
    forced = (body.get("tool_choice") or {}).get("function", {}).get("name") if isinstance(
        body.get("tool_choice"), dict) else None  # fmt: skip
    if forced and forced != "done":
        return openai_reply(tool_calls=[(forced, {"query": QUERY, "reason": "forced"})])
    if any(t["function"]["name"] == "done" and "document" in json.dumps(t["function"]["parameters"])
           for t in body.get("tools", [])):  # fmt: skip
        return document_writer(OPENAI)(seen)
    return openai_reply(tool_calls=[("done", {"answer": "Dana restores a boat."})])


def system_prompts(seen: list[Seen]) -> list[str]:
    return [m["content"] for s in seen for m in s.body["messages"] if m["role"] == "system"]


def llm_bank(open_bank: Callable[..., MindBank], url: str, **observers: Any) -> MindBank:
    provider = OpenAIProvider(model="fake-gpt", api_key="sk-fake", base_url=url + "/v1", timeout=5)
    llm = ManagedLLM(provider, backoff_seconds=0.01, **observers)
    return open_bank(reflect=llm, refresh=llm)


def directives(mb: MindBank) -> None:
    mb.put_bank("b", mission="Keep Dana's projects on track.")
    mb.create_directive("b", name="language", content="Write in French.", priority=1)
    mb.create_directive("b", name="units", content="Use metric units.", priority=9, tags=["user:dana"])
    mb.create_directive("b", name="bob", content="Mention Bob's bakery.", tags=["user:bob"])
    mb.create_directive("b", name="off", content="Shout.", is_active=False)


def test_reflect_follows_active_in_scope_directives(open_bank: Callable[..., MindBank]) -> None:
    with serving(obedient) as server:
        mb = llm_bank(open_bank, server.url)
        retain(mb, "Dana: I am restoring a sailing boat.")
        directives(mb)
        answer = mb.reflect("b", QUERY, tags=["user:dana"], include_facts=True)
        unscoped = len(server.seen)
        mb.reflect("b", QUERY)
    prompts = system_prompts(server.seen[:unscoped])
    assert prompts and all("1. units: Use metric units.\n2. language: Write in French." in p for p in prompts)
    assert all("Keep Dana's projects on track." in p for p in prompts)
    assert not any("Bob's bakery" in p or "Shout." in p for p in system_prompts(server.seen))
    assert [d["name"] for d in answer["based_on"]["directives"]] == ["units", "language"]
    later = system_prompts(server.seen[unscoped:])
    assert all("Write in French." in p and "metric units" not in p for p in later)  # untagged request: global only


def test_refresh_prompts_carry_the_directives_full_and_delta(open_bank: Callable[..., MindBank]) -> None:
    with serving(obedient) as server:
        mb = llm_bank(open_bank, server.url)
        retain(mb, *BOAT)
        directives(mb)
        make_model(mb, trigger={"mode": "delta"})  # first refresh: full
        full = len(server.seen)
        retain(mb, "Dana: The boat got a new mast today.")
        mb.refresh_mental_model("b", "dana")
        mb.run_pending()
    assert all("Use metric units." in p and "Write in French." in p for p in system_prompts(server.seen[:full]))
    delta = [s for s in server.seen[full:] if s.body.get("response_format")]
    assert delta and all("Use metric units." in p for p in system_prompts(delta))
    assert not any("Bob's bakery" in p for p in system_prompts(server.seen))


def test_the_extractive_engine_stores_directives_and_follows_none(mindbank: MindBank) -> None:
    retain(mindbank, "Dana: I am restoring a sailing boat.")
    directives(mindbank)
    answer = mindbank.reflect("b", QUERY, include_facts=True)
    assert answer["based_on"]["directives"] == [] and answer["usage"]["total_tokens"] == 0
    assert mindbank.list_directives("b")[1] == 3 and mindbank.list_directives("b", active_only=False)[1] == 4


def test_llm_request_log_and_metrics(llm_settings: Settings, embedder: MiniLMEmbedder) -> None:
    settings = replace(llm_settings, llm_trace_enabled=True, llm_price_input_per_million=3.0,
                       llm_price_output_per_million=15.0)  # fmt: skip
    store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
    tracer = LLMTracer(store, enabled=True, retention_hours=1)
    with serving(obedient) as server:
        provider = OpenAIProvider(model="fake-gpt", api_key="sk-fake", base_url=server.url + "/v1", timeout=5)
        mb = MindBank(store=store, embedder=embedder, settings=settings,
                      llms={"reflect": ManagedLLM(provider, observers=[tracer])})  # fmt: skip
        try:
            retain(mb, "Dana: I am restoring a sailing boat.")
            mb.reflect("b", QUERY)
            with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as c:
                log = c.get("/v1/default/banks/b/llm-requests").json()
                reflects = c.get("/v1/default/banks/b/llm-requests", params={"operation": "reflect"}).json()
                refreshes = c.get("/v1/default/banks/b/llm-requests", params={"operation": "refresh"}).json()
                stats = c.get("/v1/default/banks/b/llm-requests/stats", params={"period": "1d"}).json()
                metrics = c.get("/metrics").text
        finally:
            mb.close()
    calls = len(server.seen)
    assert log["total"] == calls == reflects["total"] and refreshes["total"] == 0
    entry = log["items"][0]
    assert entry["operation"] == "reflect" and entry["status"] == "success" and entry["trace_id"].startswith("reflect-")
    assert entry["total_tokens"] == 18 and entry["provider"] == "openai" and entry["input"]["messages"]
    assert stats["trunc"] == "hour" and sum(b["total"] for b in stats["buckets"]) == calls
    assert sum(b["tokens"]["input"] for b in stats["buckets"]) == 11 * calls
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(metrics) for s in f.samples}  # fmt: skip
    tokens = ("mindbank_llm_tokens_total", (("kind", "input"), ("model", "fake-gpt"), ("provider", "openai")))
    assert samples[tokens] == 11 * calls
    # each call's tokens at the configured prices: 11 in at $3, 7 out at $15 per million
    assert abs(samples[("mindbank_llm_cost_usd_total", ())] - calls * (11 * 3.0 + 7 * 15.0) / 1e6) < 1e-9
