"""Bank transfer of what the knowledge base and refresh governance add, over HTTP on both stores: an archive carries
the knowledge tree (folders, pages, the page → mental model link), each model's governance record (``refresh_state``:
its carried-over facts are placed by the next refresh) and the refresh spend ledger. A restore rebuilds all of it; a
clone rebuilds the tree and the records but starts with no spend; a merge folds the tree into the bank's by the
sibling-name rule; an archive of format version 1 (before all this) still imports."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from conftest import Served
from fastapi.testclient import TestClient

from mindbank.domain.governance import RefreshState
from mindbank.store.base import SpendRecord

V = "/v1/default"
B = f"{V}/banks"


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def run(s: Served, bank: str, response: Any) -> dict[str, Any]:
    """Drain the queue (the worker is off) and return the submitted operation, completed."""
    assert response.status_code in (200, 202), response.text
    op_id = response.json()["operation_id"]
    s.mb.run_pending()
    op = ok(s.http.get(f"{B}/{bank}/operations/{op_id}"))
    assert op["status"] == "completed", op["error_message"]
    return op["result_metadata"]  # type: ignore[no-any-return]


def build(s: Served, bank: str = "src") -> dict[str, str]:
    """Runners/Berlin/"Alice's races" and Bakers/"Bob's bread" (pages built from observations), Bob's page carrying
    one of his observations over (one failure behind it), and spend on two days. Returns the ids that matter."""
    http = s.http
    items = [  # near-duplicates: the extractive consolidator makes an observation of two witnesses
        {"content": f"{text}{end}", "tags": [tag], "document_id": f"{tag}{end}"}
        for text, tag in (("Alice: I started training for the Berlin marathon", "user:alice"),
                          ("Bob: I bake sourdough bread every weekend", "user:bob"))
        for end in (".", "!")
    ]  # fmt: skip
    ok(http.post(f"{B}/{bank}/memories", json={"items": items}))
    s.mb.consolidate(bank)  # the observations the pages are built from (also where automatic consolidation is off)
    s.mb.run_pending()
    runners = ok(http.post(f"{B}/{bank}/knowledge-base/folders", json={"name": "Runners"}), 201)["id"]
    berlin = ok(http.post(f"{B}/{bank}/knowledge-base/folders", json={"name": "Berlin", "parent_id": runners}), 201)
    bakers = ok(http.post(f"{B}/{bank}/knowledge-base/folders", json={"name": "Bakers"}), 201)["id"]
    alice = ok(http.post(f"{B}/{bank}/knowledge-base/pages", json={
        "name": "Alice's races", "source_query": "Which races does Alice run?", "parent_id": berlin["id"],
        "tags": ["user:alice"]}), 201)  # fmt: skip
    bob = ok(http.post(f"{B}/{bank}/knowledge-base/pages", json={
        "name": "Bob's bread", "source_query": "What does Bob bake?", "parent_id": bakers, "tags": ["user:bob"]}),
        201)  # fmt: skip
    s.mb.run_pending()
    memories = s.mb.list_memories(bank, limit=100)[0]
    carried = next(m for m in memories if m.fact_type == "observation" and "user:bob" in m.tags)
    model = s.mb.store.get_mental_model(bank, bob["mental_model_id"])
    assert model is not None
    state = RefreshState(failures=1, last_failure_reason="refresh_failed_error", carried_over=(carried.id,),
                         carried_attempts=1)  # fmt: skip
    s.mb.store.save_refresh(replace(model, refresh_state=state), history=None, history_cap=0)
    s.mb.store.add_refresh_spend(SpendRecord(bank, bob["mental_model_id"], "2026-02-28", 2, 3, 700, 90))
    return {"alice": alice["mental_model_id"], "bob": bob["mental_model_id"], "carried": carried.id}


def tree(http: TestClient, bank: str) -> list[Any]:
    """The tree as nested ``(kind, name, [children])``, ids left out."""

    def shape(node: dict[str, Any]) -> tuple[Any, ...]:
        return node["kind"], node["name"], [shape(c) for c in node["children"]]

    return [shape(n) for n in ok(http.get(f"{B}/{bank}/knowledge-base/tree"))["roots"]]


def status(http: TestClient, bank: str, model_id: str) -> dict[str, Any]:
    return ok(http.get(f"{B}/{bank}/mental-models/{model_id}"))["refresh_status"]  # type: ignore[no-any-return]


def export(s: Served, bank: str = "src") -> bytes:
    meta = run(s, bank, s.http.post(f"{B}/{bank}/transfer/export"))
    return s.http.get(meta["download_url"]).content


def upload(s: Served, bank: str, archive: bytes, **params: Any) -> Any:
    return s.http.post(f"{B}/{bank}/transfer/import", params=params, files={"file": ("a.zip", archive, "x/zip")})


SOURCE_TREE = [
    ("folder", "Bakers", [("page", "Bob's bread", [])]),
    ("folder", "Runners", [("folder", "Berlin", [("page", "Alice's races", [])])]),
]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_a_restore_rebuilds_the_tree_the_governance_records_and_the_spend(served: Callable[..., Served]) -> None:
    s = served()
    ids = build(s)
    archive = export(s)
    names = set(zipfile.ZipFile(io.BytesIO(archive)).namelist())
    assert {"knowledge_nodes.jsonl", "refresh_spend.jsonl"} <= names
    meta = run(s, "src", upload(s, "src", archive, target_bank_id="copy"))
    assert meta["knowledge_folders_imported"] == 3 and meta["knowledge_pages_imported"] == 2
    assert meta["refresh_spend_imported"] >= 3  # two refreshes today, one row of 28 February
    assert tree(s.http, "copy") == SOURCE_TREE
    source_nodes = ok(s.http.get(f"{B}/src/knowledge-base/tree"))
    assert ok(s.http.get(f"{B}/copy/knowledge-base/tree")) == json.loads(json.dumps(source_nodes))  # same ids too
    # the governance record came along; the carried observation is the copy's own (ids are unique per database)
    before, after = status(s.http, "src", ids["bob"]), status(s.http, "copy", ids["bob"])
    assert after["consecutive_failures"] == 1 and after["last_failure_reason"] == "refresh_failed_error"
    assert after["spend"] == before["spend"] and after["spend"]["total"]["input_tokens"] >= 700
    (carried,) = after["carried_over"]
    assert carried != ids["carried"] and s.mb.store.get_memories("copy", [carried])[0].text == next(
        m.text for m in s.mb.store.get_memories("src", [ids["carried"]])
    )
    assert ok(s.http.get(f"{B}/copy/mental-models/{ids['bob']}"))["is_stale"] is True  # a fact is still to place
    src_stats, copy_stats = (ok(s.http.get(f"{B}/{b}/stats")) for b in ("src", "copy"))
    assert copy_stats["refresh_spend"] == src_stats["refresh_spend"] and copy_stats["failing_models"] == 1
    # the next refresh places the carried fact: the page cites it and nothing is carried any more
    run(s, "copy", s.http.post(f"{B}/copy/mental-models/{ids['bob']}/refresh"))
    placed = ok(s.http.get(f"{B}/copy/mental-models/{ids['bob']}"))
    assert f"[mem:{carried}]" in placed["content"] and placed["refresh_status"]["carried_over"] == []
    assert placed["refresh_status"]["consecutive_failures"] == 0 and placed["is_stale"] is False


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_clone_rebuilds_the_tree_and_starts_with_no_spend(served: Callable[..., Served]) -> None:
    s = served()
    ids = build(s)
    meta = run(s, "src", s.http.post(f"{B}/src/clone", params={"target_bank_id": "twin"}))
    assert meta["knowledge_pages_imported"] == 2 and "refresh_spend_imported" not in meta
    assert ok(s.http.get(f"{B}/twin/knowledge-base/tree")) == ok(s.http.get(f"{B}/src/knowledge-base/tree"))
    twin = status(s.http, "twin", ids["bob"])
    assert twin["consecutive_failures"] == 1 and len(twin["carried_over"]) == 1
    assert twin["spend"]["total"]["refreshes"] == 0 and twin["spend"]["today"]["total_tokens"] == 0
    assert ok(s.http.get(f"{B}/twin/stats"))["refresh_spend"]["total"]["refreshes"] == 0
    assert ok(s.http.get(f"{B}/src/stats"))["refresh_spend"]["total"]["refreshes"] >= 3  # the source keeps its own


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_a_merge_folds_the_tree_in_by_the_sibling_name_rule(served: Callable[..., Served]) -> None:
    s = served(enable_auto_consolidation=False)  # no refresh after the merge's consolidation: the records as merged
    ids = build(s)
    archive = export(s)
    http = s.http
    # the bank has a folder Runners holding a page Berlin, and a folder Bakers holding a page Bob's bread
    runners = ok(http.post(f"{B}/dst/knowledge-base/folders", json={"name": "Runners"}), 201)["id"]
    bakers = ok(http.post(f"{B}/dst/knowledge-base/folders", json={"name": "Bakers"}), 201)["id"]
    for name, parent in (("Berlin", runners), ("Bob's bread", bakers)):
        ok(http.post(f"{B}/dst/knowledge-base/pages", json={"name": name, "source_query": "What happened?",
                                                             "parent_id": parent}), 201)  # fmt: skip
    s.mb.run_pending()
    spent = ok(http.get(f"{B}/dst/stats"))["refresh_spend"]
    meta = run(s, "dst", upload(s, "dst", archive, mode="merge"))
    # folders of the same name are the bank's; a folder where the bank has a page, and a page whose name is taken,
    # are renamed — the page's mental model with it
    assert meta["knowledge_folders_merged"] == 2 and meta["knowledge_nodes_renamed"] == 2
    assert meta["knowledge_folders_imported"] == 1 and meta["knowledge_pages_imported"] == 2
    assert tree(http, "dst") == [
        ("folder", "Bakers", [("page", "Bob's bread", []), ("page", "Bob's bread (2)", [])]),
        ("folder", "Runners", [("folder", "Berlin (2)", [("page", "Alice's races", [])]), ("page", "Berlin", [])]),
    ]
    merged = ok(http.get(f"{B}/dst/mental-models/{ids['bob']}"))
    assert merged["name"] == "Bob's bread (2)" and merged["source_query"] == "What does Bob bake?"
    # the governance record comes along, less the observation a merge does not bring (the bank derives its own)
    assert merged["refresh_status"]["consecutive_failures"] == 1 and merged["refresh_status"]["carried_over"] == []
    # the ledger stays with the bank that spent it
    assert meta["refresh_spend_skipped"] >= 3 and ok(http.get(f"{B}/dst/stats"))["refresh_spend"] == spent
    # the same archive again: every model is the bank's already, so are their pages; every folder is found by id
    # or by name: nothing is written twice
    before = tree(http, "dst")
    again = run(s, "dst", upload(s, "dst", archive, mode="merge"))
    assert again["knowledge_pages_skipped"] == 2 and again["knowledge_folders_merged"] == 3
    assert "knowledge_pages_imported" not in again and tree(http, "dst") == before


def _as_version_1(archive: bytes) -> bytes:
    """The archive as a format-version-1 producer wrote it: no tree, no ledger, no governance records."""
    src = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in src.namelist():
            data = src.read(name)
            if name in ("knowledge_nodes.jsonl", "refresh_spend.jsonl"):
                continue
            if name == "manifest.json":
                data = json.dumps({**json.loads(data), "format_version": 1}).encode()
            elif name == "mental_models.jsonl":
                lines = [json.loads(line) for line in data.splitlines()]
                assert all("refresh_state" in line for line in lines)
                data = "".join(json.dumps({k: v for k, v in line.items() if k != "refresh_state"}) + "\n"
                               for line in lines).encode()  # fmt: skip
            zf.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_archive_of_format_version_1_still_imports(served: Callable[..., Served]) -> None:
    s = served()
    ids = build(s)
    archive = _as_version_1(export(s))
    meta = run(s, "src", upload(s, "src", archive, target_bank_id="old"))
    assert meta["mental_models_imported"] == 2 and "knowledge_pages_imported" not in meta
    # the pages come back as plain mental models with empty governance records, and nothing spent
    assert ok(s.http.get(f"{B}/old/knowledge-base/tree")) == {"roots": []}
    restored = status(s.http, "old", ids["bob"])
    assert restored["consecutive_failures"] == 0 and restored["carried_over"] == []
    assert restored["spend"]["total"]["refreshes"] == 0


MANIFEST = {"format": "bank-transfer", "format_version": 2, "source_bank_id": "ref",
            "exported_at": "2026-03-01T10:00:00Z"}  # fmt: skip
MODEL = {"id": "m", "name": "M", "source_query": "q"}


def _zip(members: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, lines in members.items():
            zf.writestr(name, json.dumps(lines) if name.endswith(".json") else "".join(json.dumps(x) + "\n"
                                                                                        for x in lines))  # fmt: skip
    return buf.getvalue()


@pytest.mark.parametrize(
    ("nodes", "spend", "message"),
    [
        ([{"id": "p", "kind": "page", "name": "P", "mental_model_id": "zz"}], [],
         "knowledge_nodes.jsonl line 1: mental_model_id: 'zz' is not in mental_models.jsonl"),
        ([{"id": "p", "kind": "page", "name": "P", "mental_model_id": "m", "parent_id": "f"},
          {"id": "f", "kind": "folder", "name": "F"}], [],
         "knowledge_nodes.jsonl line 1: parent_id: 'f' is not a folder on an earlier line"),
        ([{"id": "f", "kind": "folder", "name": "F"}, {"id": "g", "kind": "folder", "name": " F "}], [],
         "knowledge_nodes.jsonl line 2: name: 'F' is taken by a sibling"),
        ([{"id": "f", "kind": "folder", "name": "F", "mental_model_id": "m"}], [],
         "knowledge_nodes.jsonl line 1: a page names its mental_model_id and a folder none"),
        ([{"id": "f", "kind": "folder", "name": "   "}], [], "knowledge_nodes.jsonl line 1: name: must not be blank"),
        ([], [{"mental_model_id": "m", "day": "2026-3-1"}],
         "refresh_spend.jsonl line 1: day: must be a UTC day as YYYY-MM-DD"),
        ([], [{"mental_model_id": "m", "day": "2026-03-01"}, {"mental_model_id": "m", "day": "2026-03-01"}],
         "refresh_spend.jsonl line 2: day: model 'm' has 2026-03-01 twice"),
    ],
)  # fmt: skip
def test_a_tree_or_ledger_that_breaks_the_rules_is_a_422(
    client: TestClient, nodes: list[Any], spend: list[Any], message: str
) -> None:
    archive = _zip({"manifest.json": MANIFEST, "mental_models.jsonl": [MODEL], "knowledge_nodes.jsonl": nodes,
                    "refresh_spend.jsonl": spend})  # fmt: skip
    r = client.post(f"{B}/ref/transfer/import", files={"file": ("a.zip", archive, "application/zip")})
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"][0]["msg"], r.json()["detail"][0]["msg"]
    assert client.get(f"{B}/ref/knowledge-base/tree").status_code == 404  # nothing was written
