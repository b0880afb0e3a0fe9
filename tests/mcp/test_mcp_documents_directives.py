"""The document and directive tools over MCP (streamable HTTP, the official client)."""

from __future__ import annotations

import asyncio

from mcp.client import Client
from test_mcp_http import call, call_error

from mindbank.service.facade import MindBank


def test_document_and_directive_tools(server: str, mindbank: MindBank) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp/b") as client:
            await call(client, "retain", {"content": "Alice: I started training for the Berlin marathon.",
                                          "document_id": "chat-1", "tags": ["user:alice"]})  # fmt: skip
            await call(client, "retain", {"content": "Quarterly report: revenue grew.", "document_id": "report"})
            docs = await call(client, "list_documents", {})
            assert docs["total"] == 2 and {d["id"] for d in docs["items"]} == {"chat-1", "report"}
            assert [d["id"] for d in (await call(client, "list_documents", {"q": "revenue"}))["items"]] == ["report"]
            doc = await call(client, "get_document", {"document_id": "chat-1"})
            assert doc["original_text"].startswith("Alice") and doc["memory_unit_count"] == 1
            gone = await call(client, "delete_document", {"document_id": "report"})
            assert gone == {"success": True, "document_id": "report", "memory_units_deleted": 1}
            assert "not found" in await call_error(client, "get_document", {"document_id": "report"})

            made = await call(client, "create_directive", {"name": "tone", "content": "Be brief.", "priority": 3})
            assert made["priority"] == 3 and made["is_active"] is True
            listed = await call(client, "list_directives", {})
            assert listed["total"] == 1 and listed["items"][0]["id"] == made["id"]
            assert (await call(client, "delete_directive", {"directive_id": made["id"]}))["success"] is True
            assert (await call(client, "list_directives", {}))["total"] == 0
            assert "blank" in await call_error(client, "create_directive", {"name": "x", "content": "   "})

    asyncio.run(scenario())
    assert mindbank.store.get_document("b", "chat-1") is not None
