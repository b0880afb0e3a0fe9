"""The MCP ``recall`` tool returns each result's chunk and, when asked, the chunks said just before and after it."""

from __future__ import annotations

import asyncio

from mcp.client import Client
from test_mcp_http import call

TURNS = [
    "Ann: How was the weekend?",
    "Ann: Did you finish the lighthouse jigsaw puzzle?",
    "Bo: Yes, twice a week we work on it.",
]


def test_recall_returns_the_chunks_around_a_result(server: str) -> None:
    async def scenario() -> None:
        async with Client(f"{server}/mcp") as client:
            b = {"bank_id": "chunks"}
            for i, text in enumerate(TURNS):
                await call(client, "retain", {**b, "content": text, "context": "chat 1",
                                              "timestamp": f"2026-03-01T10:0{i}:00Z"})  # fmt: skip
            query = {**b, "query": "lighthouse jigsaw puzzle", "limit": 1}
            plain = await call(client, "recall", query)
            assert [r["text"] for r in plain["results"]] == [TURNS[1]] and "chunks" not in plain
            own = await call(client, "recall", {**query, "include_chunks": True})
            assert [c["text"] for c in own["chunks"].values()] == [TURNS[1]]
            around = await call(client, "recall", {**query, "chunk_neighbours": True})
            sides = [(c["text"], c.get("side")) for c in around["chunks"].values()]
            assert sides == [(TURNS[1], None), (TURNS[0], "before"), (TURNS[2], "after")]
            assert [r["text"] for r in around["results"]] == [TURNS[1]]

    asyncio.run(scenario())
