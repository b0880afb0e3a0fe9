"""The observation tools over MCP (streamable HTTP, the official client): an observation's history, the bank's
observation scopes, clearing the observations of a memory, and ``clear_memories``."""

from __future__ import annotations

import asyncio

from mcp.client import Client
from test_mcp_http import call, call_error

from mindbank.service.facade import MindBank


def test_observation_tools(idle_server: str, mindbank: MindBank) -> None:
    async def scenario() -> None:
        async with Client(f"{idle_server}/mcp/b") as client:
            (paris,) = (await call(client, "retain", {"content": "Xavier: I live in Paris with my partner."}))[
                "memory_ids"
            ]
            mindbank.run_pending()
            await call(client, "retain", {"content": "Xavier: I moved to Berlin with my partner."})
            mindbank.run_pending()
            scopes = await call(client, "list_observation_scopes", {})
            assert scopes == {"scopes": [{"tags": [], "count": 1}], "total": 1, "limit": 100, "offset": 0}
            (observation,) = mindbank.list_memories("b", types=["observation"])[0]
            history = await call(client, "get_observation_history", {"memory_id": observation.id})
            (change,) = history["items"]
            assert change["previous_text"] == "Xavier: I live in Paris with my partner."
            assert (await call(client, "get_observation_history", {"memory_id": paris}))["items"] == []
            assert "not found" in await call_error(client, "get_observation_history", {"memory_id": "nope"})
            assert await call(client, "clear_memory_observations", {"memory_id": paris}) == {"deleted_count": 1}
            assert await call(client, "clear_memories", {"type": "world"}) == {"success": True, "deleted_count": 2}
            assert "type" in await call_error(client, "clear_memories", {"type": "opinion"})
            assert await call(client, "clear_memories", {}) == {"success": True, "deleted_count": 0}

    asyncio.run(scenario())
