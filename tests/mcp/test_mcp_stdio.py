"""MCP over stdio: the official MCP client launches ``mindbank mcp`` as a subprocess and drives it."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.service.facade import MindBank


def _server(db: Path, *extra: str) -> StdioServerParameters:
    env = {"MINDBANK_WORKER_POLL_SECONDS": "0.02", "PYTHONPATH": os.pathsep.join(sys.path)}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mindbank.cli", "mcp", "--database", str(db), *extra], env=env
    )


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _wait(client: Client, args: dict[str, Any], operation_id: str) -> None:
    deadline = time.monotonic() + 60
    while (op := await _call(client, "get_operation", {**args, "operation_id": operation_id}))["status"] not in (
        "completed", "failed", "cancelled",
    ):  # fmt: skip
        assert time.monotonic() < deadline, op
        await asyncio.sleep(0.05)
    assert op["status"] == "completed", op


def test_stdio_multi_bank_flow(tmp_path: Path) -> None:
    db = tmp_path / "stdio.db"

    async def scenario() -> None:
        async with Client(_server(db), read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"create_mental_model", "retain", "refresh_mental_model", "dry_run_refresh_mental_model",
                    "get_mental_model_history", "list_banks"} <= names  # fmt: skip
            b = {"bank_id": "s"}
            created = await _call(client, "create_mental_model", {**b, "name": "Dana", "mental_model_id": "dana",
                                                                  "source_query": "What does Dana cook?",
                                                                  "tags": ["user:dana"]})  # fmt: skip
            await _wait(client, b, created["operation_id"])
            await _call(client, "retain", {**b, "content": "Dana: I cook a spicy lentil soup every Sunday.",
                                           "tags": ["user:dana"]})  # fmt: skip
            dry = await _call(client, "dry_run_refresh_mental_model", {**b, "mental_model_id": "dana"})
            assert dry["would_persist"] is True and "lentil" in dry["preview_content"]
            queued = await _call(client, "refresh_mental_model", {**b, "mental_model_id": "dana"})
            await _wait(client, b, queued["operation_id"])
            model = await _call(client, "get_mental_model", {**b, "mental_model_id": "dana"})
            assert "lentil soup" in model["content"] and model["is_stale"] is False
            history = await _call(client, "get_mental_model_history", {**b, "mental_model_id": "dana"})
            assert history["total"] >= 1

    asyncio.run(scenario())


def test_stdio_single_bank(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "one.db"
    mb = MindBank.open(Settings(database_url=str(db)), embedder=embedder)
    mb.retain("only", [RetainItem(content="Eve: my favourite tea is a smoky lapsang souchong.")])
    mb.close()

    async def scenario() -> None:
        async with Client(_server(db, "--bank", "only"), read_timeout_seconds=60) as client:
            tools = (await client.list_tools()).tools
            assert all("bank_id" not in t.input_schema.get("properties", {}) for t in tools)
            hits = await _call(client, "recall", {"query": "Which tea does Eve like?"})
            assert "lapsang" in hits["results"][0]["text"]

    asyncio.run(scenario())
