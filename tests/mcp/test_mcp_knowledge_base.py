"""The knowledge-base MCP tools over streamable HTTP, single-bank (/mcp/{bank}): tree, folders, pages, page,
search, node update (rename, move, move to the root, page settings) and delete, export — the HTTP API's shapes."""

from __future__ import annotations

import asyncio

from mcp.client import Client
from test_mcp_http import call, call_error, wait_op

from mindbank.mcp import TOOL_NAMES


def test_knowledge_base_tools(server: str) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp/b") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            kb_tools = {n for n in TOOL_NAMES if "knowledge" in n}
            assert kb_tools == {
                "get_knowledge_base_tree", "search_knowledge_base", "get_knowledge_page", "create_knowledge_folder",
                "create_knowledge_page", "update_knowledge_node", "delete_knowledge_node", "export_knowledge_base",
            } and kb_tools <= listed  # fmt: skip
            await call(client, "retain", {"content": "Alice: I started training for the Berlin marathon.",
                                          "tags": ["user:alice"]})  # fmt: skip
            people = await call(client, "create_knowledge_folder", {"name": "People"})
            assert people["kind"] == "folder"
            made = await call(client, "create_knowledge_page", {
                "name": "Alice", "source_query": "What is Alice training for?", "parent_id": people["id"],
                "tags": ["user:alice"], "trigger": {"fact_types": ["world"]},
            })  # fmt: skip
            assert (await wait_op(client, {}, made["operation_id"]))["status"] == "completed"

            tree = await call(client, "get_knowledge_base_tree", {})
            page = tree["roots"][0]["children"][0]
            assert page["name"] == "Alice" and page["is_stale"] is False and page["trigger"]["mode"] == "delta"
            assert (await call(client, "get_knowledge_base_tree", {"tags": ["user:bob"], "tags_match": "all_strict"}))[
                "roots"
            ] == []
            body = await call(client, "get_knowledge_page", {"page_id": made["page_id"]})
            assert "Berlin marathon" in body["body"] and body["markdown"].startswith("---")
            found = await call(client, "search_knowledge_base", {"q": "marathon"})
            assert found["results"][0]["id"] == made["page_id"]

            moved = await call(client, "update_knowledge_node", {"node_id": made["page_id"], "move_to_root": True,
                                                                 "trigger": {"mode": "full"}})  # fmt: skip
            assert moved["parent_id"] is None and moved["trigger"]["mode"] == "full"
            assert moved["trigger"]["fact_types"] == ["world"]  # merged, not reset
            back = await call(client, "update_knowledge_node", {"node_id": made["page_id"], "parent_id": people["id"]})
            assert back["parent_id"] == people["id"]
            error = await call_error(client, "update_knowledge_node", {"node_id": people["id"],
                                                                       "parent_id": made["page_id"]})  # fmt: skip
            assert "is a page" in error
            both = await call_error(client, "update_knowledge_node", {"node_id": people["id"], "parent_id": "x",
                                                                      "move_to_root": True})  # fmt: skip
            assert "not both" in both
            exported = await call(client, "export_knowledge_base", {})
            assert {f["path"] for f in exported["files"]} == {"index.md", "people/alice.md", "log.md"}

            deleted = await call(client, "delete_knowledge_node", {"node_id": people["id"]})
            assert deleted["deleted_pages"] == 1 and deleted["deleted_folders"] == 1
            assert "not found" in await call_error(client, "get_knowledge_page", {"page_id": made["page_id"]})

    asyncio.run(scenario())


def test_every_tool_that_writes_nothing_is_open_to_read_only_keys() -> None:
    """A family's READS (what a read-only API key may call, and each tool's readOnlyHint) names exactly its tools
    that only read: the ones that list, get, search, export, recall, reflect or dry-run."""
    from mindbank.mcp.tools import FAMILIES

    reading = ("list_", "get_", "search_", "export_", "dry_run_", "recall", "reflect")
    for family in FAMILIES:
        assert set(family.READS) <= set(family.TOOLS), family.__name__
        assert {t for t in family.TOOLS if t.startswith(reading)} == set(family.READS), family.__name__
