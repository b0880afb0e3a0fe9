"""The same limits on every entry path, on both stores: directives, webhook targets and ``http_config``, archive
records (re-validated on import), ``files_metadata``, lone surrogates and deep nesting in JSON. Each refusal is a
4xx naming its field (or the archive member and line) and writes nothing."""

from __future__ import annotations

import base64
import io
import json
import struct
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Served
from transfer_testing import REFERENCE_MANIFEST as MANIFEST

BASE = "/v1/default/banks/b"
DOC = {"id": "d1", "original_text": "Alice runs.", "created_at": "2026-03-01T10:00:00Z"}
FACT = {"fact_type": "world", "text": "Alice runs.", "created_at": "2026-03-01T10:00:00Z"}


def loc(r: Any) -> list[Any]:
    return r.json()["detail"][0]["loc"]  # type: ignore[no-any-return]


@pytest.fixture
def s(served: Callable[..., Served]) -> Served:
    served_ = served(webhook_allow_private_targets=False)
    assert served_.http.post(f"{BASE}/memories", json={"items": [{"content": "Bob bakes bread."}]}).status_code == 200
    return served_


DIRECTIVES = [
    ({"tags": [f"t{i}" for i in range(500)]}, ["body", "tags"]),
    ({"tags": ["x" * 10_000]}, ["body", "tags", 0]),
    ({"tags": ["line\nbreak"]}, ["body", "tags", 0]),
    ({"priority": 2**31}, ["body", "priority"]),
    ({"priority": 2**62}, ["body", "priority"]),
    ({"priority": -(2**31) - 1}, ["body", "priority"]),
]


@pytest.mark.parametrize(("extra", "where"), DIRECTIVES)
def test_directives_keep_the_request_limits(s: Served, extra: dict[str, Any], where: list[Any]) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/directives", json={"name": "n", "content": "c", **extra})
    assert r.status_code == 422 and loc(r) == where, r.text
    assert s.dump() == before
    # in-process callers (and MCP) meet the same rule in the service
    from mindbank.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as refused:
        s.mb.create_directive("b", name="n", content="c", **extra)
    assert refused.value.field.startswith(str(where[1]))
    assert s.dump() == before


WEBHOOKS = [
    ({"url": "http://[2002:7f00:1::]/"}, "url"),
    ({"url": "http://[64:ff9b::7f00:1]/"}, "url"),
    ({"url": "http://[::1"}, "url"),
    ({"url": "http://user:secret@93.184.215.14/"}, "url"),
    ({"http_config": {"headers": {f"X-{i}": "v" for i in range(20_000)}}}, "http_config.headers"),
    ({"http_config": {"params": {f"p{i}": "v" for i in range(20_000)}}}, "http_config.params"),
    ({"http_config": {"headers": {"X-Big": "v" * 1_000_000}}}, "http_config.headers.X-Big"),
    ({"http_config": {"headers": {"X-Smuggle": "a\r\nHost: evil"}}}, "http_config.headers.X-Smuggle"),
    ({"http_config": {"headers": {"Bad Name": "v"}}}, "http_config.headers.Bad Name"),
]


@pytest.mark.parametrize(("body", "field"), WEBHOOKS)
def test_webhooks_keep_their_limits(s: Served, body: dict[str, Any], field: str) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/webhooks", json={"url": "http://93.184.215.14/hook", **body})
    assert r.status_code == 422, r.text
    assert ".".join(map(str, loc(r)[1:])).startswith(field.split(".")[0]), r.text
    assert field.split(".")[-1] in json.dumps(r.json()), r.text
    assert s.dump() == before


def vector(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def zipped(manifest: dict[str, Any], members: dict[str, list[dict[str, Any]] | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # stored: a repetitive record is not taken for a ZIP bomb
        zf.writestr("manifest.json", json.dumps(manifest))
        for name, records in members.items():
            text = records if isinstance(records, str) else "".join(json.dumps(r) + "\n" for r in records)
            zf.writestr(name, text)
    return buf.getvalue()


EXTENSION = {"mindbank": {"ids": True, "embedding": {"model": "m", "dimension": 384}}}
ARCHIVES = [
    ({"memories.jsonl": [{**FACT, "text": "x" * 3_000_000}]}, "memories.jsonl line 1: text"),
    ({"documents.jsonl": [{**DOC, "original_text": "x" * 3_000_000}]}, "documents.jsonl line 1: original_text"),
    ({"memories.jsonl": [{**FACT, "tags": [f"t{i}" for i in range(500)]}]}, "memories.jsonl line 1: tags"),
    ({"memories.jsonl": [{**FACT, "tags": ["bell\x07"]}]}, "memories.jsonl line 1: tags[0]"),
    ({"memories.jsonl": [{**FACT, "metadata": {f"k{i}": "v" for i in range(500)}}]}, "line 1: metadata"),
    ({"memories.jsonl": [{**FACT, "text": "nul\x00here"}]}, "memories.jsonl line 1: text"),
    ({"memories.jsonl": [{**FACT, "proof_count": 2**70}]}, "memories.jsonl line 1: proof_count"),
    ({"memories.jsonl": [{**FACT, "proof_count": 2**40}]}, "memories.jsonl line 1: proof_count"),
    ({"memories.jsonl": [{**FACT, "text": "lone \ud800"}]}, "memories.jsonl line 1: text"),
    ({"directives.jsonl": [{"name": "n", "content": "c", "tags": [f"t{i}" for i in range(500)]}]}, "tags"),
    ({"directives.jsonl": [{"name": "n", "content": "c", "priority": 2**31}]}, "directives.jsonl line 1: priority"),
    ({"webhooks.jsonl": [{"url": "http://[::1"}]}, "webhooks.jsonl line 1: url"),
    ({"webhooks.jsonl": [{"url": "http://a.example/", "http_config": {"headers": {"X": "a\nb"}}}]}, "headers.X"),
    ({"memories.jsonl": "\n" * 20_000}, "blank lines"),
]


@pytest.mark.parametrize(("members", "message"), ARCHIVES)
def test_archive_records_are_revalidated_on_import(s: Served, members: dict[str, Any], message: str) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/transfer/import", params={"target_bank_id": "restored"},
                    files={"file": ("a.zip", zipped(MANIFEST, members), "application/zip")})  # fmt: skip
    assert r.status_code == 422 and loc(r) == ["body", "file"], r.text
    assert message in r.json()["detail"][0]["msg"], r.json()["detail"][0]["msg"]
    assert s.dump() == before


def test_an_archived_vector_must_be_finite(s: Served) -> None:
    before = s.dump()
    fact = {**FACT, "id": "m1", "embedding": vector([float("nan")] * 384)}
    data = zipped({**MANIFEST, "extensions": EXTENSION}, {"memories.jsonl": [fact]})
    r = s.http.post(f"{BASE}/transfer/import", files={"file": ("a.zip", data, "application/zip")})
    assert r.status_code == 422 and "memories.jsonl line 1: embedding" in r.json()["detail"][0]["msg"], r.text
    assert "non-finite" in r.json()["detail"][0]["msg"]
    assert s.dump() == before


FILES_METADATA: list[tuple[Any, str]] = [
    ({"timestamp": 1700000000}, "files_metadata[0].timestamp"),
    ({"metadata": ["a", "b"]}, "files_metadata[0].metadata"),
    ({"metadata": {"k": 5}}, "files_metadata[0].metadata"),
    ({"tags": [1, 2]}, "files_metadata[0].tags"),
    ({"tags": "abc"}, "files_metadata[0].tags"),
    ({"context": 5}, "files_metadata[0].context"),
    ({"document_id": 5}, "files_metadata[0].document_id"),
    ({"unknown": "x"}, "files_metadata[0].unknown"),
    ({"tags": ["x"] * 500}, "files_metadata[0].tags"),
]


@pytest.mark.parametrize(("meta", "field"), FILES_METADATA)
def test_files_metadata_entries_are_typed_and_bounded(s: Served, meta: Any, field: str) -> None:
    before = s.dump()
    request = json.dumps({"files_metadata": [meta]})
    r = s.http.post(f"{BASE}/files/retain", files=[("files", ("a.txt", b"Carol swims.", "text/plain"))],
                    data={"request": request})  # fmt: skip
    assert r.status_code == 422 and loc(r)[1].startswith(field), r.text
    assert s.dump() == before


@pytest.mark.parametrize(
    ("request_text", "field"),
    [
        ('{"files_metadata": [{"tags": ["t"], "metadata": {"n": 1180591620717411303424}}]}', "request.files_metadata"),
        ('{"files_metadata": [{"context": NaN}]}', "request.files_metadata"),
        ('{"files_metadata": ' + "[" * 100_000 + "]" * 100_000 + "}", "request"),
        ('{"context": "lone \\ud800"}', "request.context"),
        ('{"surprise": 1}', "request.surprise"),
    ],
)
def test_the_files_request_string_gets_the_json_body_checks(s: Served, request_text: str, field: str) -> None:
    before = s.dump()
    r = s.http.post(f"{BASE}/files/retain", files=[("files", ("a.txt", b"Carol swims.", "text/plain"))],
                    data={"request": request_text})  # fmt: skip
    assert r.status_code == 422 and loc(r)[1].startswith(field), r.text
    assert s.dump() == before


def test_lone_surrogates_and_deep_tag_groups_are_named(s: Served) -> None:
    before = s.dump()
    body = '{"items": [{"content": "lone \\ud83d surrogate"}]}'
    r = s.http.post(f"{BASE}/memories", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "string_surrogate", r.text
    assert loc(r) == ["body", "items", 0, "content"]
    for depth in (40, 3_000, 10_000):
        groups = '{"not": ' * depth + '{"tags": ["a"]}' + "}" * depth  # past what json.dumps itself could write
        if len(groups) < 60_000:  # a URL stays under the 64 KiB request head
            r = s.http.get(f"{BASE}/knowledge-base/tree", params={"tag_groups": f"[{groups}]"})
            assert r.status_code == 422 and loc(r)[1] == "tag_groups", (depth, r.text[:300])
        body = '{"query": "bread", "tag_groups": [' + groups + "]}"
        r = s.http.post(f"{BASE}/memories/recall", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422 and r.json()["detail"][0]["type"] in ("json_too_deep", "value_error"), r.text
    assert s.dump() == before
