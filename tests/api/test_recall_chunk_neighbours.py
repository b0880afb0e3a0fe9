"""``include.chunks.neighbours``: a recall result's chunk comes with the chunks said just before and after it, over
HTTP on both stores; neighbours keep to the request's tag filter and budget, and the response still validates
against the reference's ``RecallResponse`` schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Served
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

BASE = "/v1/default/banks/b"
OPENAPI = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hindsight-wire" / "openapi.json"
TURNS = [
    "Ann: Morning! How was the weekend?",
    "Bo: Quiet, mostly reading on the porch.",
    "Ann: Did you finish the lighthouse jigsaw puzzle?",
    "Bo: Yes, twice a week we work on it.",
    "Ann: Nice. Any plans for Friday?",
]


def _turns(tags: dict[int, list[str]] | None = None, context: str = "chat 1") -> list[dict[str, Any]]:
    """The five turns as items of one context, a minute apart, each its own document (as importers retain them)."""
    return [
        {"content": text, "context": context, "timestamp": f"2024-03-10T09:0{i}:00Z", "document_id": f"t{i}",
         "tags": (tags or {}).get(i, ["chat"])}
        for i, text in enumerate(TURNS)
    ]  # fmt: skip


def _recall(s: Served, **body: Any) -> dict[str, Any]:
    r = s.http.post(f"{BASE}/memories/recall", json={"query": "lighthouse jigsaw puzzle", "max_tokens": 1, **body})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _retain(s: Served, items: list[dict[str, Any]]) -> None:
    assert s.http.post(f"{BASE}/memories", json={"items": items}).status_code == 200


def _texts(chunks: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(c["text"], c.get("side")) for c in chunks.values()]


def test_a_turn_comes_with_the_turns_said_before_and_after_it(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, _turns())
    plain = _recall(s, include={"chunks": {}})
    assert _texts(plain["chunks"]) == [(TURNS[2], None)]  # one result (the budget), its own chunk only
    body = _recall(s, include={"chunks": {"neighbours": True}})
    assert [r["text"] for r in body["results"]] == [TURNS[2]]  # neighbours are context, never results
    assert _texts(body["chunks"]) == [(TURNS[2], None), (TURNS[1], "before"), (TURNS[3], "after")]
    own = body["results"][0]["chunk_id"]
    assert [c.get("neighbour_of") for c in body["chunks"].values()] == [None, own, own]


def test_neighbours_keep_to_the_tag_filter(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, _turns(tags={1: ["private"], 3: ["private"]}))
    body = _recall(s, tags=["chat"], tags_match="any_strict", include={"chunks": {"neighbours": True}})
    # the turns said just before and after are out of scope, so the nearest ones in scope stand in
    assert _texts(body["chunks"]) == [(TURNS[2], None), (TURNS[0], "before"), (TURNS[4], "after")]


def test_neighbours_stay_in_their_context_and_within_the_budget(served: Callable[..., Served]) -> None:
    s = served()
    items = [
        _turns()[2],
        {"content": "Bo: Something else entirely.", "context": "chat 2", "timestamp": "2024-03-10T09:01:00Z"},
        {"content": "Ann: A day later.", "context": "chat 1", "timestamp": "2024-03-11T09:00:00Z"},
    ]
    _retain(s, items)
    alone = _recall(s, include={"chunks": {"neighbours": True}})
    assert _texts(alone["chunks"]) == [(TURNS[2], None)]  # other context; more than an hour later
    _retain(s, _turns())
    tight = _recall(s, include={"chunks": {"max_tokens": 14, "neighbours": True}})
    chunks = list(tight["chunks"].values())
    assert chunks[0]["text"] == TURNS[2] and chunks[0]["truncated"] is False  # the result's own chunk comes first
    assert len(chunks) == 2 and chunks[1]["side"] == "before" and chunks[1]["truncated"] is True


def test_a_transcript_document_lends_its_adjacent_chunks(served: Callable[..., Served]) -> None:
    s = served()
    transcript = "\n".join(TURNS)  # one document, one chunk per speaker turn, all said at one moment
    _retain(s, [{"content": transcript, "context": "chat 1", "timestamp": "2024-03-10T09:00:00Z"}])
    body = _recall(s, include={"chunks": {"neighbours": True}})
    (hit,) = body["results"]
    assert "jigsaw" in hit["text"]
    chunks = list(body["chunks"].values())
    assert [(c["chunk_index"], c.get("side")) for c in chunks] == [(2, None), (1, "before"), (3, "after")]
    assert [c["text"] for c in chunks[1:]] == [TURNS[1], TURNS[3]]


def test_the_response_validates_against_the_reference_schema(served: Callable[..., Served]) -> None:
    if not OPENAPI.exists():
        pytest.skip("the reference's OpenAPI document (../shared/reference) is not available")
    registry = Registry().with_resource(
        "openapi.json", Resource.from_contents(json.loads(OPENAPI.read_text()), default_specification=DRAFT202012)
    )
    validator = Draft202012Validator({"$ref": "openapi.json#/components/schemas/RecallResponse"}, registry=registry)
    s = served()
    _retain(s, _turns())
    body = _recall(s, include={"chunks": {"neighbours": True}})
    assert [c.get("side") for c in body["chunks"].values()] == [None, "before", "after"]
    assert [e.message for e in validator.iter_errors(body)] == []
