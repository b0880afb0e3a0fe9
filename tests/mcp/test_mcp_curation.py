"""The curation MCP tools over streamable HTTP, single-bank (/mcp/{bank}): blocks, a hand edit, an added block, pins,
a removed block, and review before publish (draft, reject, approve) — the HTTP API's shapes (docs/curation.md)."""

from __future__ import annotations

import asyncio

from mcp.client import Client
from test_mcp_http import call, call_error, wait_op

from mindbank.mcp import TOOL_NAMES


def test_curation_tools(server: str) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp/b") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert {"get_mental_model_blocks", "edit_mental_model_block", "approve_mental_model_draft"} <= listed
            assert "reject_mental_model_draft" in TOOL_NAMES
            await call(client, "retain", {"content": "Alice: I started training for the Berlin marathon.",
                                          "tags": ["user:alice"]})  # fmt: skip
            made = await call(client, "create_mental_model", {"name": "Alice", "source_query": "What is Alice doing?",
                              "mental_model_id": "a", "tags": ["user:alice"], "tags_match": "any"})  # fmt: skip
            assert (await wait_op(client, {}, made["operation_id"]))["status"] == "completed"
            view = await call(client, "get_mental_model_blocks", {"mental_model_id": "a"})
            block = view["sections"][-1]["blocks"][0]["id"]
            edited = await call(client, "edit_mental_model_block", {"mental_model_id": "a", "block_id": block,
                                                                   "text": "Alice runs at dawn.", "pinned": True})  # fmt: skip
            mark = next(b for s in edited["sections"] for b in s["blocks"] if b["id"] == block)
            assert mark["origin"] == "person" and mark["author"] == "admin" and mark["pinned"] is True
            added = await call(client, "add_mental_model_block", {"mental_model_id": "a", "text": "Ask about Berlin.",
                                                                 "heading": "To do"})  # fmt: skip
            todo = next(s["id"] for s in added["sections"] if s["heading"] == "To do")
            pinned = await call(client, "pin_mental_model_section", {"mental_model_id": "a", "section_id": todo})
            assert next(s for s in pinned["sections"] if s["id"] == todo)["pinned"] is True
            gone = await call(
                client, "delete_mental_model_block", {"mental_model_id": "a", "block_id": added["block_id"]}
            )
            assert added["block_id"] not in {b["id"] for s in gone["sections"] for b in s["blocks"]}
            assert "give text and/or pinned" in await call_error(
                client, "edit_mental_model_block", {"mental_model_id": "a", "block_id": block}
            )
            assert "block_id" in await call_error(
                client, "edit_mental_model_block", {"mental_model_id": "a", "block_id": "nope", "text": "x"}
            )
            # review before publish
            await call(client, "update_mental_model", {"mental_model_id": "a", "trigger": {"review": True}})
            published = (await call(client, "get_mental_model", {"mental_model_id": "a"}))["content"]
            await call(client, "retain", {"content": "Alice: I ran a half marathon in Porto.", "tags": ["user:alice"]})
            op = await call(client, "refresh_mental_model", {"mental_model_id": "a"})
            assert (await wait_op(client, {}, op["operation_id"]))["status"] == "completed"
            draft = await call(client, "get_mental_model_draft", {"mental_model_id": "a"})
            assert draft["diff"] and draft["published_content"] == published
            rejected = await call(client, "reject_mental_model_draft", {"mental_model_id": "a", "reason": "later"})
            assert rejected["content"] == published
            op = await call(client, "refresh_mental_model", {"mental_model_id": "a"})
            assert (await wait_op(client, {}, op["operation_id"]))["status"] == "completed"
            draft = await call(client, "get_mental_model_draft", {"mental_model_id": "a"})
            approved = await call(client, "approve_mental_model_draft", {"mental_model_id": "a",
                                                                        "draft_id": draft["draft_id"]})  # fmt: skip
            assert approved["content"] == draft["content"]

    asyncio.run(scenario())
