"""Writes that must neither collide nor happen for nothing, and the contract, on both stores: a restore whose
archived numbers meet the server's, concurrent merges into one bank, a no-op tags PATCH, a template import over
its count limit, the OpenAPI statuses and the 64 KiB request head."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Callable
from typing import Any

from conftest import Served

from mindbank.engine.transfer.importer import ImportOptions

BASE = "/v1/default/banks"
T0 = "2026-03-01T10:00:00+00:00"


def archive(source: str, documents: list[dict[str, Any]], events: list[dict[str, Any]]) -> bytes:
    manifest = {"format": "bank-transfer", "format_version": 2, "source_bank_id": source, "exported_at": T0,
                "extensions": {"mindbank": {"ids": True}}}  # fmt: skip
    facts = [{"fact_type": "world", "text": f"{d['original_text']}", "document_id": d["id"], "created_at": T0}
             for d in documents]  # fmt: skip
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for name, rows in (("documents.jsonl", documents), ("memories.jsonl", facts),
                           ("document_history.jsonl", events)):  # fmt: skip
            zf.writestr(name, "".join(json.dumps(r) + "\n" for r in rows))
    return buf.getvalue()


def document(doc_id: str, text: str) -> dict[str, Any]:
    return {"id": doc_id, "original_text": text, "created_at": T0}


def events(doc_id: str, numbers: range) -> list[dict[str, Any]]:
    return [{"id": n, "document_id": doc_id, "kind": "retain", "created_at": T0} for n in numbers]


def test_a_restore_never_collides_with_numbers_the_server_holds(served: Callable[..., Served]) -> None:
    s = served()
    for i in range(3):  # the server holds document events 1.. of its own
        item = {"content": f"Alice ran {i} miles.", "document_id": f"d{i}"}
        assert s.http.post(f"{BASE}/b/memories", json={"items": [item]}).status_code == 200
    data = archive("elsewhere", [document("d1", "Bob swims.")], events("d1", range(1, 9)))
    r = s.http.post(f"{BASE}/b/transfer/import", params={"target_bank_id": "restored"},
                    files={"file": ("a.zip", data, "application/zip")})  # fmt: skip
    assert r.status_code == 202, r.text
    s.mb.run_pending()
    op = s.http.get(f"{BASE}/b/operations/{r.json()['operation_id']}").json()
    assert op["status"] == "completed", op
    history = s.http.get(f"{BASE}/restored/documents/d1/history").json()
    assert len(history["items"]) == 8, history
    # the numbering moved past what the import wrote: the next write of either bank gets a free number
    for bank in ("restored", "b"):
        item = {"content": "Carol cycles.", "document_id": "later"}
        assert s.http.post(f"{BASE}/{bank}/memories", json={"items": [item]}).status_code == 200


def test_concurrent_merges_into_one_bank_apply_one_after_the_other(served: Callable[..., Served]) -> None:
    s = served()
    assert s.http.post(f"{BASE}/b/memories", json={"items": [{"content": "Seed fact."}]}).status_code == 200
    for round_ in range(3):
        doc_id = f"new-{round_}"
        data = [archive("x", [document(doc_id, f"Fact {k} of round {round_}.")], []) for k in range(2)]
        errors: list[BaseException] = []
        barrier = threading.Barrier(2)

        def merge(payload: bytes, barrier: threading.Barrier = barrier, errors: list[BaseException] = errors) -> None:
            try:
                barrier.wait()
                options = ImportOptions("merge", "b", document_conflict="new-id")
                s.mb.read_bank_archive(io.BytesIO(payload), options)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=merge, args=(d,)) for d in data]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        listed = s.http.get(f"{BASE}/b/documents", params={"limit": 100}).json()["items"]
        texts = [d for d in listed if d["id"] == doc_id]
        assert len(texts) == 1  # the second merge met the first's document and gave its own a new id
    assert len(s.http.get(f"{BASE}/b/documents", params={"limit": 100}).json()["items"]) == 1 + 3 * 2


def test_a_tags_patch_that_changes_nothing_writes_nothing(served: Callable[..., Served]) -> None:
    s = served()
    item = {"content": "Alice runs marathons.", "document_id": "d", "tags": ["b", "a"]}
    assert s.http.post(f"{BASE}/b/memories", json={"items": [item]}).status_code == 200
    s.mb.run_pending()
    before = s.dump()
    r = s.http.patch(f"{BASE}/b/documents/d", json={"tags": ["a", "b", "a"]})
    assert r.status_code == 200, r.text
    assert s.dump() == before
    assert s.http.patch(f"{BASE}/b/documents/d", json={"tags": ["c"]}).status_code == 200
    assert s.dump() != before


def test_a_template_import_is_bounded(served: Callable[..., Served]) -> None:
    s = served()
    before = s.dump()
    models = [{"id": f"m{i}", "name": f"M{i}", "source_query": "What?"} for i in range(1001)]
    r = s.http.post(f"{BASE}/b/import", json={"version": "1", "mental_models": models})
    assert r.status_code == 422 and "mental_models" in json.dumps(r.json()["detail"]), r.text[:300]
    directive = {"name": "n", "content": "c", "tags": ["x\ny"]}
    r = s.http.post(f"{BASE}/b/import", json={"version": "1", "directives": [directive]})
    assert r.status_code == 422 and "tags" in json.dumps(r.json()["detail"]), r.text[:300]
    assert s.dump() == before


def test_the_contract_statuses_are_published_and_the_request_head_is_bounded(served: Callable[..., Served]) -> None:
    s = served()
    paths = s.http.get("/openapi.json").json()["paths"]
    bank = "/v1/default/banks/{bank_id}"
    for path in ("/clone", "/knowledge-base/pages", "/knowledge-base/folders", "/memories", "/transfer/import"):
        assert "409" in paths[bank + path]["post"]["responses"], path
    assert "400" in paths[bank + "/files/retain"]["post"]["responses"]
    before = s.dump()
    r = s.http.get(f"{BASE}/b/memories/list", headers={"X-Padding": "p" * 70_000})
    assert r.status_code == 400 and "64 KiB" in r.json()["detail"], r.text[:200]
    assert s.dump() == before


def test_a_cleared_model_is_stale_until_its_next_refresh_even_with_no_source_left(
    served: Callable[..., Served],
) -> None:
    s = served()
    item = {"content": "Alice runs marathons.", "document_id": "d", "tags": ["user:alice"]}
    assert s.http.post(f"{BASE}/b/memories", json={"items": [item]}).status_code == 200
    body = {"id": "alice", "name": "Alice", "source_query": "What does Alice do?", "tags": ["user:alice"]}
    assert s.http.post(f"{BASE}/b/mental-models", json=body).status_code == 200
    s.mb.run_pending()
    assert s.http.get(f"{BASE}/b/mental-models/alice").json()["is_stale"] is False
    assert s.http.delete(f"{BASE}/b/documents/d").status_code == 200  # every source gone
    assert s.http.post(f"{BASE}/b/mental-models/alice/clear").status_code == 200
    assert s.http.get(f"{BASE}/b/mental-models/alice").json()["is_stale"] is True
    listed = s.http.get(f"{BASE}/b/mental-models").json()["items"]
    assert [m["is_stale"] for m in listed if m["id"] == "alice"] == [True]


def test_a_query_date_is_iso_8601_text_never_a_number(served: Callable[..., Served]) -> None:
    s = served()
    assert s.http.post(f"{BASE}/b/memories", json={"items": [{"content": "Alice runs."}]}).status_code == 200
    for path in (f"{BASE}/b/documents", f"{BASE}/b/llm-requests"):
        for value in ("0.5", "1700000000", "-3", "1e9"):
            r = s.http.get(path, params={"start_date": value})
            assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "start_date"], (path, value)
        assert s.http.get(path, params={"start_date": "2026-01-01T00:00:00Z"}).status_code == 200
