"""The two providers through the real SDKs against fake servers on 127.0.0.1: tool calls, JSON output, a 429 then
success, timeouts, malformed bodies, permanent errors (key never leaked), the concurrency cap."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fake_servers import Reply, Seen, anthropic_reply, error_reply, openai_reply, scripted, serving

from mindbank.errors import TransientError
from mindbank.providers.llm.anthropic_provider import AnthropicProvider
from mindbank.providers.llm.base import (
    CallRecord,
    ForceTool,
    LLMError,
    LLMTransientError,
    ManagedLLM,
    Provider,
    assistant,
    system,
    tool_result,
    tool_spec,
    user,
)
from mindbank.providers.llm.openai_provider import OpenAIProvider

KEY = "sk-test-secret-4242"
RECALL = tool_spec("recall", "Search facts.", {"type": "object", "properties": {"query": {"type": "string"}}})
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


@dataclass(frozen=True)
class Flavor:
    name: str
    build: Callable[..., Provider]
    reply: Callable[..., Reply]
    path: str


def _openai(url: str, timeout: float = 5.0) -> Provider:
    return OpenAIProvider(model="fake-gpt", api_key=KEY, base_url=url + "/v1", timeout=timeout)


def _anthropic(url: str, timeout: float = 5.0) -> Provider:
    return AnthropicProvider(model="fake-claude", api_key=KEY, base_url=url, timeout=timeout)


FLAVORS = [
    Flavor("openai", _openai, openai_reply, "/v1/chat/completions"),
    Flavor("anthropic", _anthropic, anthropic_reply, "/v1/messages"),
]


@pytest.fixture(params=FLAVORS, ids=lambda f: f.name)
def flavor(request: pytest.FixtureRequest) -> Flavor:
    return request.param  # type: ignore[no-any-return]


def managed(provider: Provider, **kwargs: Any) -> ManagedLLM:
    return ManagedLLM(provider, backoff_seconds=0.01, **kwargs)


def test_tool_calls_round_trip(flavor: Flavor) -> None:
    replies = scripted(flavor.reply(tool_calls=[("recall", {"query": "boat"})]), flavor.reply("Dana restores a boat."))
    with serving(replies) as server:
        llm = managed(flavor.build(server.url))
        messages = [system("be brief"), user("What is Dana doing?")]
        first = llm.chat(messages, tools=[RECALL], tool_choice=ForceTool("recall"))
        (call,) = first.tool_calls
        assert (call.name, call.arguments) == ("recall", {"query": "boat"})
        assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
        messages += [assistant(first.text, first.tool_calls), tool_result(call.id, "recall", '{"memories": []}')]
        second = llm.chat(messages, tools=[RECALL], tool_choice="required")
        assert second.text == "Dana restores a boat." and not second.tool_calls
    assert all(s.path == flavor.path for s in server.seen)
    body1, body2 = server.seen[0].body, server.seen[1].body
    if flavor.name == "openai":
        assert body1["tools"][0]["function"]["name"] == "recall"
        assert body1["tool_choice"] == {"type": "function", "function": {"name": "recall"}}
        assert body2["tool_choice"] == "required"
        replayed, answered = body2["messages"][-2], body2["messages"][-1]
        assert replayed["tool_calls"][0]["function"] == {"name": "recall", "arguments": '{"query": "boat"}'}
        assert answered == {"role": "tool", "tool_call_id": call.id, "content": '{"memories": []}'}
    else:
        assert body1["system"] == "be brief"
        assert body1["tools"][0]["name"] == "recall" and "input_schema" in body1["tools"][0]
        assert body1["tool_choice"] == {"type": "tool", "name": "recall"}
        assert body2["tool_choice"] == {"type": "any"}
        replayed, answered = body2["messages"][-2], body2["messages"][-1]
        assert replayed["content"][-1] == {
            "type": "tool_use",
            "id": call.id,
            "name": "recall",
            "input": {"query": "boat"},
        }
        assert answered["content"][0]["type"] == "tool_result" and answered["content"][0]["tool_use_id"] == call.id
    assert server.seen[0].headers.get("x-stainless-retry-count", "0") == "0"  # the SDK's own retries are off


def test_json_output(flavor: Flavor) -> None:
    if flavor.name == "openai":
        reply = flavor.reply('```json\n{"answer": 42}\n```')  # local models wrap JSON in fences
    else:
        reply = flavor.reply(tool_calls=[("extract", {"answer": 42})])
    with serving(scripted(reply)) as server:
        result = managed(flavor.build(server.url)).chat([user("6 x 7?")], response_schema=SCHEMA, schema_name="extract")
    assert result.parsed == {"answer": 42}
    body = server.seen[0].body
    if flavor.name == "openai":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert body["tools"][0]["input_schema"] == SCHEMA
        assert body["tool_choice"] == {"type": "tool", "name": "extract"}


def test_json_output_that_is_not_json_parses_to_none(flavor: Flavor) -> None:
    with serving(scripted(flavor.reply("forty-two, I think"))) as server:
        result = managed(flavor.build(server.url)).chat([user("6 x 7?")], response_schema=SCHEMA)
    assert result.parsed is None


def test_429_then_success_is_retried_and_recorded(flavor: Flavor) -> None:
    records: list[CallRecord] = []
    replies = scripted(error_reply(429, "slow down", **{"retry-after": "0"}), flavor.reply("ok"))
    with serving(replies) as server:
        llm = managed(flavor.build(server.url), max_retries=2, observers=[records.append])
        assert llm.chat([user("hi")]).text == "ok"
    assert len(server.seen) == 2
    assert [(r.attempt, r.error is None) for r in records] == [(1, False), (2, True)]
    assert "429" in (records[0].error or "")
    assert llm.calls == 1 and llm.usage_total.input_tokens > 0


def test_timeout_is_transient_and_retried_then_raised(flavor: Flavor) -> None:
    with serving(scripted(Reply(delay=1.0, body={}))) as server:
        llm = managed(flavor.build(server.url, timeout=0.2), max_retries=1)
        started = time.monotonic()
        with pytest.raises(LLMTransientError) as info:
            llm.chat([user("hi")])
        assert time.monotonic() - started < 3
    assert isinstance(info.value, TransientError)  # a refresh lets it through to the worker's retry
    assert len(server.seen) == 2


@pytest.mark.parametrize("reply", [Reply(raw=b"<html>gateway</html>"), Reply({"unexpected": True})])
def test_malformed_bodies_are_permanent_errors(flavor: Flavor, reply: Reply) -> None:
    with serving(scripted(reply)) as server, pytest.raises(LLMError) as info:
        managed(flavor.build(server.url), max_retries=3).chat([user("hi")])
    assert not isinstance(info.value, LLMTransientError)
    assert len(server.seen) == 1  # never retried


def test_5xx_is_transient_401_is_permanent_and_the_key_never_leaks(
    flavor: Flavor, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serving(scripted(error_reply(503))) as server, pytest.raises(LLMTransientError) as transient:
        managed(flavor.build(server.url), max_retries=1).chat([user("hi")])
    assert transient.value.status == 503 and len(server.seen) == 2
    with serving(scripted(error_reply(401, f"Incorrect API key provided: {KEY}"))) as server:
        llm = managed(flavor.build(server.url), max_retries=3)
        with pytest.raises(LLMError) as permanent:
            llm.chat([user("hi")])
    assert permanent.value.status == 401 and not isinstance(permanent.value, LLMTransientError)
    assert len(server.seen) == 1
    assert server.seen[0].headers.get("authorization", server.seen[0].headers.get("x-api-key", "")).endswith(KEY)
    assert KEY not in str(permanent.value) and KEY not in caplog.text
    assert KEY not in repr(llm) and KEY not in repr(llm.inner)


def test_concurrency_cap_bounds_requests_in_flight(flavor: Flavor) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(seen: Seen) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return flavor.reply("ok")

    with serving(slow) as server:
        llm = managed(flavor.build(server.url), semaphore=threading.BoundedSemaphore(2))
        threads = [threading.Thread(target=llm.chat, args=([user("hi")],)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(server.seen) == 6 and state["peak"] == 2


def test_json_object_structured_output_for_llama_cpp_python() -> None:
    """llama-cpp-python's server refuses ``json_schema`` and takes its own ``json_object`` form with the schema."""
    from mindbank.config import Settings
    from mindbank.providers.llm.factory import build_provider, resolve_llm_config

    with serving(scripted(openai_reply('{"answer": 42}'))) as server:
        settings = Settings(llm_provider="openai", llm_base_url=server.url + "/v1", llm_structured_output="json_object")
        config = resolve_llm_config(settings, "reflect")
        assert config is not None
        result = build_provider(config).complete(_schema_request())
    assert result.parsed == {"answer": 42}
    assert server.seen[0].body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    with pytest.raises(ValueError, match="MINDBANK_LLM_STRUCTURED_OUTPUT"):
        resolve_llm_config(Settings(llm_provider="openai", llm_structured_output="xml"), "reflect")


def _schema_request() -> Any:
    from mindbank.providers.llm.base import ChatRequest

    return ChatRequest(messages=[user("What is the answer?")], response_schema=SCHEMA, schema_name="answer")
