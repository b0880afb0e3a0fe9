"""Every request limit and every kind of bad input, on both stores: the status, the field named, nothing written.

The app runs with small limits (they are configuration: the test also shows the settings take effect); the last
tests use the defaults, where a 1 MB tag or document id and 2^63 offsets once gave PostgreSQL errors (500).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import Served

BASE = "/v1/default/banks"
SMALL = {
    "max_body_bytes": 50_000,
    "max_json_depth": 16,
    "max_items_per_request": 5,
    "max_content_chars": 1000,
    "max_query_chars": 200,
    "max_text_chars": 300,
    "max_tags_per_item": 3,
    "max_tag_chars": 20,
    "max_document_id_chars": 30,
    "max_bank_id_chars": 16,
    "max_metadata_entries": 3,
    "max_token_budget": 5000,
    "max_offset": 1000,
}


def item(**fields: Any) -> dict[str, Any]:
    return {"items": [{"content": "Alice likes tea.", **fields}]}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# (method, path, JSON body, expected status, a part of the loc (or detail) that names the problem)
CASES: list[tuple[str, str, Any, int, str]] = [
    ("POST", "/fresh/memories", {"items": [{"content": "x"}] * 6}, 422, "items"),
    ("POST", "/fresh/memories", item(content="y" * 1001), 422, "content"),
    ("POST", "/fresh/memories", item(content="a\x00b"), 422, "content"),
    ("POST", "/fresh/memories", item(tags=["a", "b", "c", "d"]), 422, "tags"),
    ("POST", "/fresh/memories", item(tags=["t" * 21]), 422, "tags"),
    ("POST", "/fresh/memories", item(tags=["two\nlines"]), 422, "tags"),
    ("POST", "/fresh/memories", item(document_id="d" * 31), 422, "document_id"),
    ("POST", "/fresh/memories", item(document_id="d\x00"), 422, "document_id"),
    ("POST", "/fresh/memories", item(metadata={"a": "1", "b": "2", "c": "3", "d": "4"}), 422, "metadata"),
    ("POST", "/fresh/memories", item(metadata={"k": "v" * 301}), 422, "metadata"),
    ("POST", "/fresh/memories", item(metadata={"k\x00": "v"}), 422, "metadata"),
    ("POST", "/fresh/memories", item(context="c" * 301), 422, "context"),
    ("POST", "/fresh/memories", item(context="c\x00"), 422, "context"),
    ("POST", "/fresh/memories", item(entities=nested(20)), 422, "body"),
    ("POST", "/fresh/memories", item(extra_field=1), 422, "extra_field"),
    ("POST", "/fresh/memories", {**item(), "document_tags": [2**64]}, 422, "document_tags"),
    ("POST", f"/{'b' * 17}/memories", item(), 422, "bank_id"),
    ("POST", "/team*/memories", item(), 422, "bank_id"),
    ("POST", "/fresh/memories", {"items": [{"content": "x" * 999}] * 5} | {"pad": "p" * 45_000}, 413, "bytes"),
    ("POST", "/fresh/mental-models", {"name": "n", "source_query": "q" * 201}, 422, "source_query"),
    ("POST", "/fresh/mental-models", {"name": "n\x00", "source_query": "q"}, 422, "name"),
    ("POST", "/fresh/mental-models", {"name": "n", "source_query": "q", "tags": ["a", "b", "c", "d"]}, 422, "tags"),
    (
        "POST",
        "/fresh/mental-models",
        {"name": "n", "source_query": "q", "trigger": {"recall_max_tokens": 10**20}},
        422,
        "recall_max_tokens",
    ),
    (
        "POST",
        "/fresh/mental-models",
        {"name": "n", "source_query": "q", "trigger": {"min_refresh_interval_seconds": 10**15}},
        422,
        "min_refresh_interval_seconds",
    ),
    (
        "POST",
        "/fresh/mental-models",
        {"name": "n", "source_query": "q", "trigger": {"refresh_cron": "0 3 * * *\x00"}},
        422,
        "refresh_cron",
    ),
    ("PUT", "/fresh", {"disposition": {"skepticism": 99, "bogus": 1}}, 422, "disposition"),
    ("PUT", "/fresh", {"name": "x", "enable_reranking": True}, 422, "enable_reranking"),
    ("PUT", "/fresh", {"mission": "m" * 301}, 422, "mission"),
]


def _named(response: Any, part: str) -> bool:
    body = response.json()
    if isinstance(body.get("detail"), str):
        return part in body["detail"]
    return any(part in [str(p) for p in e["loc"]] for e in body["detail"])


def test_refused_writes_name_the_field_and_write_nothing(served: Callable[..., Served]) -> None:
    """Every case of CASES on one server per store (a server per case would cost more than the cases)."""
    s = served(**SMALL)
    before = s.dump()
    wrong = []
    for method, path, body, status, field in CASES:
        r = s.http.request(
            method, f"{BASE}{path}", content=json.dumps(body), headers={"content-type": "application/json"}
        )
        if r.status_code != status or not _named(r, field):
            wrong.append(f"{method} {path} {json.dumps(body)[:80]}: {r.status_code} {r.text[:200]}")
    assert wrong == []
    assert s.dump() == before
    assert not s.mb.store.bank_exists("fresh")


def test_limits_on_reads_and_updates(served: Callable[..., Served]) -> None:
    s = served(**SMALL)
    assert s.http.post(f"{BASE}/b/memories", json=item()).status_code == 200
    s.mb.run_pending()
    memory_id = s.http.get(f"{BASE}/b/memories/list").json()["items"][0]["id"]
    before = s.dump()
    refused = [
        ("POST", "/b/memories/recall", {"query": "q" * 201}, "query"),
        ("POST", "/b/memories/recall", {"query": "tea", "max_tokens": 5001}, "max_tokens"),
        ("POST", "/b/memories/recall", {"query": "tea", "filters": {"user": "a"}}, "filters"),
        ("POST", "/b/memories/recall", {"query": "tea", "metadata": {"k": "v"}}, "metadata"),
        ("POST", "/b/memories/recall", {"query": "tea", "metadata": None}, "metadata"),
        ("POST", "/b/memories/recall", {"query": "tea", "min_scores": {"reranker": 0.5}}, "reranker"),
        ("POST", "/b/memories/recall", {"query": "tea", "include": {"chunks": {"max_tokens": 9, "x": 1}}}, "x"),
        ("POST", "/b/memories/recall", {"query": "tea", "tags": ["a", "b", "c", "d"]}, "tags"),
        ("POST", "/b/reflect", {"query": "tea", "max_tokens": 10**30}, "max_tokens"),
        ("POST", "/b/reflect", {"query": "tea", "include": {"facts": {"bogus": 1}}}, "bogus"),
        ("POST", "/b/reflect", {"query": "tea", "filters": {}}, "filters"),
        ("PATCH", f"/b/memories/{memory_id}", {"text": "t\x00"}, "text"),
        ("PATCH", f"/b/memories/{memory_id}", {"tags": ["t" * 21]}, "tags"),
        ("PATCH", f"/b/memories/{memory_id}", {"fact_type": "experience"}, "fact_type"),
        ("PATCH", "/b/config", {"updates": {"recall_max_tokens": 10**20}}, "recall_max_tokens"),
        ("PATCH", "/b/config", {"updates": {"mental_model_min_refresh_interval_seconds": 10**20}}, "seconds"),
    ]
    for method, path, body, field in refused:
        r = s.http.request(method, f"{BASE}{path}", json=body)
        assert r.status_code == 422, (path, body, r.text)
        assert _named(r, field) or field in r.text, (path, body, r.text)
    for path in ("/b/memories/list", "/b/tags", "/b/mental-models", "/b/operations"):
        r = s.http.get(f"{BASE}{path}", params={"offset": 1001})
        assert r.status_code == 422 and _named(r, "offset"), (path, r.text)
    r = s.http.get(f"{BASE}/b/memories/list", params={"q": "a\x00b"})
    assert r.status_code == 422 and _named(r, "q"), r.text
    assert s.dump() == before


def test_body_encoding_and_depth_are_named(served: Callable[..., Served]) -> None:
    s = served()
    headers = {"content-type": "application/json"}
    r = s.http.post(f"{BASE}/fresh/memories", content=b'{"items": [{"content": "caf\xe9"}]}', headers=headers)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "utf8_invalid", r.text
    r = s.http.post(f"{BASE}/fresh/memories", content=b"[" * 100_000 + b"]" * 100_000, headers=headers)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_too_deep", r.text
    r = s.http.post(f"{BASE}/fresh/memories", content=json.dumps(item(entities=nested(70))), headers=headers)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_too_deep", r.text
    r = s.http.post(f"{BASE}/fresh/memories", content=b'{"items": [{"content": NaN}]}', headers=headers)
    assert r.status_code == 422, r.text
    r = s.http.post(f"{BASE}/fresh/memories", content=b'{"items": [{"content": "a\x00b"}]}', headers=headers)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "string_nul", r.text  # a raw NUL byte, named
    r = s.http.post(f"{BASE}/fresh/memories/recall", content=b'{"query": "q", "max_tokens": 1e400}', headers=headers)
    assert r.status_code == 422 and "too large" in r.json()["detail"][0]["msg"], r.text
    r = s.http.post(f"{BASE}/fresh/memories", content=b"x" * 17_000_000, headers=headers)
    assert r.status_code == 413 and "MINDBANK_MAX_BODY_BYTES" in r.json()["detail"]
    assert not s.mb.store.bank_exists("fresh")


def test_defaults_refuse_huge_identifiers_and_offsets(served: Callable[..., Served]) -> None:
    """At the default limits: a 1 MB tag or document id, a 60,000-character bank id and 2^63 offsets are 422s, never
    an index or integer error of the store."""
    s = served()
    before = s.dump()
    for body, field in ((item(tags=["t" * 1_000_000]), "tags"), (item(document_id="d" * 1_000_000), "document_id")):
        r = s.http.post(f"{BASE}/fresh/memories", json=body)
        assert r.status_code == 422 and _named(r, field), r.text[:300]
    r = s.http.post(f"{BASE}/{'b' * 60_000}/memories", json=item())
    assert r.status_code in (414, 422) and len(r.content) < 2_000  # the rejected value is not echoed back whole
    for path in ("/fresh/memories/list", "/fresh/tags", "/fresh/mental-models", "/fresh/operations"):
        r = s.http.get(f"{BASE}{path}", params={"offset": 2**63})
        assert r.status_code == 422 and _named(r, "offset"), (path, r.text)
    r = s.http.post(f"{BASE}/fresh/memories/recall", json={"query": "q" * 10_000_000})
    assert r.status_code == 422 and _named(r, "query") and len(r.content) < 2_000
    assert r.json()["detail"][0]["input"].endswith("… (10000000 characters)")
    assert s.dump() == before
