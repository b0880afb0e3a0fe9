"""Curation over HTTP on both stores (docs/curation.md): hand edits of blocks by id, pins of blocks and sections,
kept byte-identical by refreshes full and delta while the rest changes; the deletion rule still wins; bad input is
a 4xx naming the field and writes nothing; a model without curation answers as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.conftest import Served

BASE = "/v1/default/banks/b"
FACTS = [
    "Alice works as a nurse at the city hospital.",
    "Alice runs five kilometres every morning before work.",
    "Alice is learning to play the cello on weekends.",
    "Alice adopted a grey cat named Pepper last spring.",
    "Alice prefers green tea to coffee.",
    "Alice is planning a trip to Lisbon in October.",
]
NEW_FACTS = [
    "Alice switched to night shifts at the hospital.",
    "Alice ran her first half marathon in Porto.",
    "Alice bought a second-hand cello from a teacher.",
    "Alice's cat Pepper learned to open doors.",
    "Alice started baking sourdough bread on Sundays.",
]


def _retain(s: Served, texts: list[str]) -> None:
    r = s.http.post(f"{BASE}/memories", json={"items": [{"content": t, "tags": ["user:alice"]} for t in texts]})
    assert r.status_code == 200, r.text


def _model(s: Served, **trigger: Any) -> dict[str, Any]:
    body = {"id": "a", "name": "Alice", "source_query": "What is Alice's life like?", "tags": ["user:alice"],
            "trigger": {"tags_match": "any", **trigger}}  # fmt: skip
    assert s.http.post(f"{BASE}/mental-models", json=body).status_code == 200
    s.mb.run_pending()
    return s.http.get(f"{BASE}/mental-models/a/blocks").json()


def _blocks(view: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(sec["id"], b) for sec in view["sections"] for b in sec["blocks"]]


def _refresh(s: Served, mode: str) -> dict[str, Any]:
    s.http.patch(f"{BASE}/mental-models/a", json={"trigger": {"mode": mode}})
    r = s.http.post(f"{BASE}/mental-models/a/refresh", json={"mode": "full"} if mode == "full" else {})
    assert r.status_code == 200
    s.mb.run_pending()
    return s.http.get(f"{BASE}/mental-models/a").json()


def test_edits_and_pins_survive_refreshes(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, FACTS)
    view = _model(s)
    blocks = _blocks(view)
    assert len(blocks) >= 3 and all("origin" not in b and "pinned" not in b for _, b in blocks)
    # a hand edit of one block: person-written, who and when, a history version
    target = blocks[-1][1]
    r = s.http.patch(f"{BASE}/mental-models/a/blocks/{target['id']}", json={"text": "Alice is *my* best friend."})
    assert r.status_code == 200, r.text
    edited = next(b for _, b in _blocks(r.json()) if b["id"] == target["id"])
    assert edited["origin"] == "person" and edited["author"] == "admin" and edited["edited_at"]
    assert edited["text"] == "Alice is *my* best friend." and r.json()["fixed_block_ids"] == [target["id"]]
    history = s.http.get(f"{BASE}/mental-models/a/history").json()
    assert history[0]["kind"] == "edit" and history[0]["edit"]["block_id"] == target["id"]
    assert "Alice is *my* best friend." in s.http.get(f"{BASE}/mental-models/a").json()["content"]
    # an added block in a new section, pinned whole
    r = s.http.post(f"{BASE}/mental-models/a/blocks", json={"text": "Call her on Fridays.", "heading": "Notes"})
    assert r.status_code == 200, r.text
    added = r.json()["block_id"]
    notes = next(sec for sec in r.json()["sections"] if any(b["id"] == added for b in sec["blocks"]))
    r = s.http.patch(f"{BASE}/mental-models/a/sections/{notes['id']}", json={"pinned": True})
    assert r.status_code == 200 and next(x for x in r.json()["sections"] if x["id"] == notes["id"])["pinned"]
    fixed_before = _fixed(r.json())
    contents = [s.http.get(f"{BASE}/mental-models/a").json()["content"]]
    for i, mode in enumerate(["delta", "full", "delta", "full", "delta"]):
        _retain(s, [NEW_FACTS[i]])
        model = _refresh(s, mode)
        assert model["reflect_response"]["outcome"] in ("content_written", "content_unchanged"), model
        now = s.http.get(f"{BASE}/mental-models/a/blocks").json()
        assert _fixed(now) == fixed_before, f"refresh {i} ({mode}) touched fixed content"
        contents.append(model["content"])
        assert "Alice is *my* best friend." in model["content"] and "Call her on Fridays." in model["content"]
    assert len(set(contents)) > 2  # the rest of the document changed
    # unpinning makes the section ordinary again
    r = s.http.patch(f"{BASE}/mental-models/a/sections/{notes['id']}", json={"pinned": False})
    assert "pinned" not in next(x for x in r.json()["sections"] if x["id"] == notes["id"])


def _fixed(view: dict[str, Any]) -> list[Any]:
    """The fixed content of a document view: pinned sections whole, and every fixed block with its section."""
    out: list[Any] = []
    for sec in view["sections"]:
        if sec.get("pinned"):
            out.append(sec)
        out += [(sec["id"], b) for b in sec["blocks"] if b["id"] in view["fixed_block_ids"] and not sec.get("pinned")]
    return out


def test_bad_input_is_named_and_writes_nothing(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, FACTS[:3])
    view = _model(s)
    first = _blocks(view)[0][1]["id"]
    cases = [
        ("patch", f"{BASE}/mental-models/a/blocks/nope", {"text": "x"}, "block_id"),
        ("patch", f"{BASE}/mental-models/a/blocks/{first}", {}, "body"),
        ("patch", f"{BASE}/mental-models/a/blocks/{first}", {"text": "   "}, "text"),
        ("patch", f"{BASE}/mental-models/a/blocks/{first}", {"text": "one\n\ntwo"}, "text"),
        ("patch", f"{BASE}/mental-models/a/blocks/{first}", {"pinned": "yes"}, "pinned"),
        ("post", f"{BASE}/mental-models/a/blocks", {"text": "x", "section_id": "nope"}, "section_id"),
        ("post", f"{BASE}/mental-models/a/blocks", {"text": "x"}, "section_id"),
        ("post", f"{BASE}/mental-models/a/blocks", {"text": "x", "bogus": 1}, "bogus"),
        ("patch", f"{BASE}/mental-models/a/sections/nope", {"pinned": True}, "section_id"),
        ("patch", f"{BASE}/mental-models/a/blocks/{first}", {"text": "word " * 3000}, "text"),
        ("patch", f"{BASE}/mental-models/a", {"content": "hand written"}, "content"),
    ]
    for method, url, body, field in cases:
        before = s.dump()
        r = getattr(s.http, method)(url, json=body)
        assert 400 <= r.status_code < 500, (url, body, r.status_code, r.text)
        assert field in r.text, (url, body, r.text)
        assert s.dump() == before
    assert s.http.get(f"{BASE}/mental-models/zzz/blocks").status_code == 404
    assert s.http.delete(f"{BASE}/mental-models/a/blocks/nope").status_code in (400, 404, 422)


def test_deletion_rule_wins_over_an_edited_block(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, FACTS[:4])
    view = _model(s)
    sid, block = next((sid, b) for sid, b in _blocks(view) if b["memory_ids"])
    quoted = block["memory_ids"][0]
    text = f"Keep this line. Alice said so [mem:{quoted}]."
    assert s.http.patch(f"{BASE}/mental-models/a/blocks/{block['id']}", json={"text": text}).status_code == 200
    assert s.http.delete(f"{BASE}/memories/{quoted}").status_code == 200
    model = _refresh(s, "delta")
    report = model["reflect_response"]["curation"]["retracted_quotes"]
    assert report == [{"block_id": block["id"], "section_id": sid, "memory_ids": [quoted], "removed": False}]
    after = next(b for _, b in _blocks(s.http.get(f"{BASE}/mental-models/a/blocks").json()) if b["id"] == block["id"])
    assert after["text"] == "Keep this line." and after["origin"] == "person"


def test_a_model_without_curation_answers_as_before(served: Callable[..., Served]) -> None:
    s = served()
    _retain(s, FACTS[:3])
    view = _model(s)
    assert view["fixed_block_ids"] == []
    model = s.http.get(f"{BASE}/mental-models/a").json()
    assert "curation" not in model["reflect_response"]
    stored = s.mb.store.get_mental_model("b", "a")
    assert stored is not None and stored.structured_document is not None
    assert all(set(b) == {"id", "text", "memory_ids"} for sec in stored.structured_document["sections"]
               for b in sec["blocks"])  # fmt: skip
