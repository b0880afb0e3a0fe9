"""MCP over streamable HTTP, driven by the official MCP client against a live server: /mcp and /mcp/{bank_id}."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import httpx
import pytest
from mcp.client import Client

from mindbank.domain.trigger import MentalModelTrigger, MentalModelTriggerPatch
from mindbank.mcp import TOOL_NAMES, build_server, parse_enabled_tools
from mindbank.server import create_app
from mindbank.service.facade import MindBank


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client, tool: str, args: dict[str, Any]) -> str:
    """Call a tool that must fail; its error text."""
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text  # type: ignore[union-attr]


async def wait_op(client: Client, args: dict[str, Any], operation_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        op = await call(client, "get_operation", {**args, "operation_id": operation_id})
        if op["status"] in ("completed", "failed", "cancelled"):
            return op
        assert time.monotonic() < deadline, op
        await asyncio.sleep(0.05)


def test_multi_bank_flow(server: str, mindbank: MindBank) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            reflect = ["reflect"] if callable(getattr(mindbank, "reflect", None)) else []
            assert set(tools) == set(TOOL_NAMES) - ({"reflect"} - set(reflect))
            assert "bank_id" in tools["get_mental_model"].input_schema["required"]
            assert "bank_id" not in tools["list_banks"].input_schema.get("properties", {})

            b = {"bank_id": "b"}
            stored = await call(client, "retain", {**b, "content": "Alice: I started training for the Berlin marathon.",
                                                   "tags": ["user:alice"], "timestamp": "2026-03-01T10:00:00Z"})  # fmt: skip
            assert stored["status"] == "stored" and stored["memory_ids"]
            await call(client, "retain", {**b, "content": "Bob: I bake sourdough bread.", "tags": ["user:bob"]})

            created = await call(client, "create_mental_model", {
                **b, "name": "Alice", "source_query": "What is Alice training for?", "mental_model_id": "alice",
                "tags": ["user:alice"], "tags_match": "any", "trigger": {"keep_trace": True, "refresh_cron": "0 3 * * *"},
            })  # fmt: skip
            assert created["status"] == "created" and created["mental_model_id"] == "alice"
            assert (await wait_op(client, b, created["operation_id"]))["status"] == "completed"

            model = await call(client, "get_mental_model", {**b, "mental_model_id": "alice"})
            assert "marathon" in model["content"] and "sourdough" not in model["content"]
            assert model["trigger"]["tags_match"] == "any" and model["trigger"]["keep_trace"] is True
            assert model["is_stale"] is False
            meta = await call(client, "get_mental_model", {**b, "mental_model_id": "alice", "detail": "metadata"})
            assert meta["content"] is None and meta["name"] == "Alice"

            await call(
                client, "retain", {**b, "content": "Alice: I finished the marathon in 3:58.", "tags": ["user:alice"]}
            )
            listed = await call(client, "list_mental_models", b)
            assert (
                listed["total"] == 1
                and listed["items"][0]["is_stale"] is True
                and listed["items"][0]["content"] is None
            )
            with_content = await call(client, "list_mental_models", {**b, "detail": "content"})
            assert "marathon" in with_content["items"][0]["content"]

            dry = await call(client, "dry_run_refresh_mental_model", {**b, "mental_model_id": "alice"})
            assert dry["would_persist"] is True and "3:58" in dry["preview_content"] and "3:58" in dry["diff"]
            assert "3:58" not in (await call(client, "get_mental_model", {**b, "mental_model_id": "alice"}))["content"]

            queued = await call(client, "refresh_mental_model", {**b, "mental_model_id": "alice"})
            assert queued["status"] == "queued"
            assert (await wait_op(client, b, queued["operation_id"]))["status"] == "completed"
            assert "3:58" in (await call(client, "get_mental_model", {**b, "mental_model_id": "alice"}))["content"]

            history = await call(client, "get_mental_model_history", {**b, "mental_model_id": "alice"})
            assert history["total"] >= 1 and "marathon" in history["items"][0]["previous_content"]

            updated = await call(client, "update_mental_model", {**b, "mental_model_id": "alice", "name": "Alice (runner)",
                                                                 "trigger": {"mode": "delta"}})  # fmt: skip
            assert updated["name"] == "Alice (runner)" and updated["trigger"]["mode"] == "delta"
            assert updated["trigger"]["keep_trace"] is True and updated["trigger"]["refresh_cron"] == "0 3 * * *"
            # the reference's merge rule: stating refresh_after_consolidation drops the unstated cron
            switched = await call(client, "update_mental_model", {**b, "mental_model_id": "alice",
                                                                  "trigger_refresh_after_consolidation": True})  # fmt: skip
            assert (
                switched["trigger"]["refresh_after_consolidation"] is True
                and switched["trigger"]["refresh_cron"] is None
            )

            if reflect:
                answer = await call(
                    client, "reflect", {**b, "query": "What is Alice training for?", "include_facts": True}
                )
                assert "marathon" in answer["text"]
            recall = await call(client, "recall", {**b, "query": "What did Alice finish?"})
            assert "3:58" in recall["results"][0]["text"]
            assert "Alice" in recall["results"][0]["entities"]  # the names each result's text mentions
            tags = await call(client, "list_tags", b)
            assert {t["tag"]: t["count"] for t in tags["items"]}["user:alice"] >= 2  # facts, and observations so far
            stats = await call(client, "get_bank_stats", b)
            assert stats["bank_id"] == "b" and stats["total_nodes"] >= 3
            ops = await call(client, "list_operations", {**b, "operation_type": "refresh_mental_model"})
            assert ops["total"] == 2 and {o["status"] for o in ops["operations"]} == {"completed"}
            banks = await call(client, "list_banks", {})
            assert [x["bank_id"] for x in banks["banks"]] == ["b"]

            cleared = await call(client, "clear_mental_model", {**b, "mental_model_id": "alice"})
            assert cleared["status"] == "cleared"
            assert (await call(client, "get_mental_model", {**b, "mental_model_id": "alice"}))["content"] == ""
            deleted = await call(client, "delete_mental_model", {**b, "mental_model_id": "alice"})
            assert deleted == {"status": "deleted", "mental_model_id": "alice"}
            assert "not found" in await call_error(client, "get_mental_model", {**b, "mental_model_id": "alice"})

    asyncio.run(scenario())


def test_tool_errors_carry_the_reason(server: str) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp") as client:
            b = {"bank_id": "b"}
            base = {**b, "name": "M", "source_query": "What?"}
            text = await call_error(
                client, "create_mental_model", {**base, "tags_match": "any", "trigger": {"tags_match": "all"}}
            )
            assert "tags_match" in text
            text = await call_error(client, "create_mental_model", {**base, "trigger": {"refresh_cron": "0 3 * * *",
                                                                                        "refresh_after_consolidation": True}})  # fmt: skip
            assert "mutually exclusive" in text
            assert "cron" in await call_error(
                client, "create_mental_model", {**base, "trigger": {"refresh_cron": "often"}}
            )
            assert "bogus" in await call_error(client, "create_mental_model", {**base, "trigger": {"bogus": 1}})
            assert "fact_types" in await call_error(
                client, "create_mental_model", {**base, "trigger": {"fact_types": []}}
            )
            assert "max_tokens" in await call_error(client, "create_mental_model", {**base, "max_tokens": 100})
            assert "id" in await call_error(client, "create_mental_model", {**base, "mental_model_id": "Bad Id"})
            created = await call(client, "create_mental_model", {**base, "mental_model_id": "m"})
            assert "already exists" in await call_error(client, "create_mental_model", {**base, "mental_model_id": "m"})
            # a patch that breaks a rule after the merge is refused, and the stored trigger is unchanged
            await call(
                client, "update_mental_model", {**b, "mental_model_id": "m", "trigger": {"refresh_cron": "0 3 * * *"}}
            )
            text = await call_error(client, "update_mental_model", {**b, "mental_model_id": "m",
                                                                    "trigger": {"refresh_after_consolidation": True,
                                                                                "refresh_cron": "0 4 * * *"}})  # fmt: skip
            assert "mutually exclusive" in text
            model = await call(client, "get_mental_model", {**b, "mental_model_id": "m"})
            assert model["trigger"]["refresh_cron"] == "0 3 * * *"
            assert created["operation_id"]
            assert "not found" in await call_error(client, "get_operation", {**b, "operation_id": "nope"})
            assert "isoformat" in await call_error(client, "retain", {**b, "content": "x", "timestamp": "yesterday"})

    asyncio.run(scenario())


def test_single_bank_endpoint_uses_the_url_bank(server: str, mindbank: MindBank) -> None:
    async def scenario() -> None:
        # legacy initialize handshake, as today's desktop MCP clients speak it
        async with Client(f"{server}/mcp/team-a", mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "list_banks" not in tools
            assert all("bank_id" not in t.input_schema.get("properties", {}) for t in tools.values())
            await call(
                client, "retain", {"content": "Carol: the product launch is on Friday, I am excited.", "tags": ["team"]}
            )
            created = await call(
                client,
                "create_mental_model",
                {"name": "Launch", "source_query": "What did Carol say about the product launch?"},
            )
            assert (await wait_op(client, {}, created["operation_id"]))["status"] == "completed"
            model = await call(client, "get_mental_model", {"mental_model_id": created["mental_model_id"]})
            assert "Friday" in model["content"]
        async with Client(f"{server}/mcp/team-b") as other:
            assert (await call(other, "list_mental_models", {}))["total"] == 0

    asyncio.run(scenario())
    assert [b.bank_id for b, _ in mindbank.list_banks()] == ["team-a"]


def test_enabled_tools_filter_and_disable(mindbank: MindBank, live) -> None:  # type: ignore[no-untyped-def]
    mindbank.settings = replace(mindbank.settings, mcp_enabled_tools="recall, get_mental_model")

    async def scenario(url: str) -> None:
        async with Client(f"{url}/mcp") as client:
            assert {t.name for t in (await client.list_tools()).tools} == {"recall", "get_mental_model"}
            result = await client.call_tool("retain", {"bank_id": "b", "content": "x"})
            assert result.is_error

    with live(mindbank) as url:
        asyncio.run(scenario(url))

    mindbank.settings = replace(mindbank.settings, mcp_enabled_tools="recall,nonsense")
    with pytest.raises(ValueError, match="nonsense"):
        create_app(mindbank)

    mindbank.settings = replace(mindbank.settings, mcp_enabled=False, mcp_enabled_tools="")
    with live(mindbank) as url:
        assert httpx.post(f"{url}/mcp", json={}).status_code == 404
        assert httpx.get(f"{url}/health").status_code == 200


def test_parse_enabled_tools() -> None:
    assert parse_enabled_tools("") is None and parse_enabled_tools(" , ") is None
    assert parse_enabled_tools("recall,retain") == {"recall", "retain"}
    with pytest.raises(ValueError, match="recal"):
        parse_enabled_tools("recal")


def test_trigger_input_covers_every_http_trigger_field(mindbank: MindBank) -> None:
    """Parity with the HTTP trigger, as the reference pins it: every field, all optional, no extras."""
    http_fields = set(MentalModelTrigger.model_fields)
    assert set(MentalModelTriggerPatch.model_fields) == http_fields

    async def scenario() -> None:
        async with Client(build_server(mindbank)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("create_mental_model", "update_mental_model"):
                schema = tools[name].input_schema
                trigger = schema["$defs"]["MentalModelTriggerPatch"]
                assert set(trigger["properties"]) == http_fields
                assert not trigger.get("required") and trigger["additionalProperties"] is False
                assert {"tags_match", "trigger_refresh_after_consolidation"} <= set(schema["properties"])

    asyncio.run(scenario())
