"""``Client.recall`` asks for each result's chunk and, with ``chunk_neighbours``, the chunks around it."""

from __future__ import annotations

from mindbank.client import Client

TURNS = [
    "Ann: How was the weekend?",
    "Ann: Did you finish the lighthouse jigsaw puzzle?",
    "Bo: Yes, twice a week we work on it.",
]


def test_recall_with_chunks_and_their_neighbours(server: str) -> None:
    with Client(server) as c:
        items = [
            {"content": t, "context": "chat 1", "timestamp": f"2026-03-01T10:0{i}:00Z"} for i, t in enumerate(TURNS)
        ]
        c.retain("chunks", items=items)
        plain = c.recall("chunks", "lighthouse jigsaw puzzle", max_tokens=1)
        assert [r.text for r in plain.results] == [TURNS[1]] and plain.chunks is None
        own = c.recall("chunks", "lighthouse jigsaw puzzle", max_tokens=1, include_chunks=True, max_chunk_tokens=100)
        assert [ch["text"] for ch in own.chunks.values()] == [TURNS[1]]
        around = c.recall("chunks", "lighthouse jigsaw puzzle", max_tokens=1, chunk_neighbours=True)
        sides = [(ch["text"], ch.get("side")) for ch in around.chunks.values()]
        assert sides == [(TURNS[1], None), (TURNS[0], "before"), (TURNS[2], "after")]
