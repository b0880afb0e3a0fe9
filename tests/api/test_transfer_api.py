"""Bank backup and migration over HTTP: export and download, restore and merge imports, clone, the archive checks
(a malformed or foreign archive is a 422 naming what is wrong, and writes nothing), and all-or-nothing imports."""

from __future__ import annotations

import io
import json
import time
import zipfile
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.domain.records import RetainItem
from mindbank.engine.transfer import importer
from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"


def wait(client: TestClient, bank: str, operation_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        op = client.get(f"{BASE}/{bank}/operations/{operation_id}").json()
        if op["status"] in ("completed", "failed", "cancelled"):
            return op  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise TimeoutError(operation_id)


def retain(client: TestClient, bank: str, *items: dict[str, Any]) -> None:
    assert client.post(f"{BASE}/{bank}/memories", json={"items": list(items)}).status_code == 200


def seeded(client: TestClient, bank: str = "b") -> None:
    retain(client, bank,
           {"content": "Alice: I started training for the Berlin marathon.", "tags": ["user:alice"],
            "document_id": "d1"},
           {"content": "Alice: my long run is on Sundays.", "tags": ["user:alice"], "document_id": "d2"})  # fmt: skip
    r = client.post(f"{BASE}/{bank}/mental-models", json={"name": "Alice", "source_query": "What is Alice training for?",
                                                          "tags": ["user:alice"], "id": "alice"})  # fmt: skip
    assert wait(client, bank, r.json()["operation_id"])["status"] == "completed"


def export(client: TestClient, bank: str = "b", **params: Any) -> tuple[bytes, dict[str, Any]]:
    r = client.post(f"{BASE}/{bank}/transfer/export", params=params)
    assert r.status_code == 202 and r.json()["status"] == "pending"
    op = wait(client, bank, r.json()["operation_id"])
    assert op["status"] == "completed", op["error_message"]
    meta = op["result_metadata"]
    download = client.get(meta["download_url"])
    assert download.status_code == 200 and download.headers["content-type"] == "application/zip"
    assert len(download.content) == meta["byte_size"] and meta["filename"] in download.headers["content-disposition"]
    return download.content, meta


def upload(client: TestClient, path: str, archive: bytes, **params: Any) -> Any:
    return client.post(path, params=params, files={"file": ("a.zip", archive, "application/zip")})


def zip_of(members: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in members.items():
            if isinstance(content, list):
                content = "".join(json.dumps(line) + "\n" for line in content)
            elif not isinstance(content, str):
                content = json.dumps(content)
            zf.writestr(name, content)
    return buf.getvalue()


MANIFEST = {
    "format": "bank-transfer",
    "format_version": 1,
    "source_bank_id": "ref",
    "exported_at": "2026-03-01T10:00:00Z",
}


def test_export_writes_the_reference_sections_and_downloads(client: TestClient) -> None:
    seeded(client)
    archive, meta = export(client)
    assert meta["storage_key"].startswith("exports/") and meta["facts_exported"] == 2
    names = set(zipfile.ZipFile(io.BytesIO(archive)).namelist())
    assert {"manifest.json", "bank.json", "documents.jsonl", "memories.jsonl", "mental_models.jsonl"} <= names
    subset, meta = export(client, document_id=["d1"])
    zf = zipfile.ZipFile(io.BytesIO(subset))
    assert "bank.json" not in zf.namelist() and "mental_models.jsonl" not in zf.namelist()
    assert [json.loads(line)["id"] for line in zf.read("documents.jsonl").splitlines()] == ["d1"]
    assert json.loads(zf.read("manifest.json"))["document_ids"] == ["d1"]
    assert client.post(f"{BASE}/ghost/transfer/export").status_code == 404
    r = client.post(f"{BASE}/b/transfer/export", params={"document_id": ["d1", "nope"]})
    assert r.status_code == 404 and "nope" in r.json()["detail"]
    assert client.get("/v1/default/files/download/exports/nope.zip").status_code == 404
    r = client.post(f"{BASE}/b/document-transfer/export", params={"document_id": ["d1"], "include_observations": True})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "include_observations"]
    assert client.get(f"{BASE}/b/document-transfer").status_code == 410
    odd = "odd:bank@x+y"  # characters a bank id may have but a file name should not: still a safe header value
    retain(client, odd, {"content": "Odd: a bank id with a colon, an at sign and a plus."})
    _, meta = export(client, odd)
    assert meta["filename"].startswith("odd_bank_x_y-")


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        (b"not a zip", "archive: not a ZIP file"),
        (zip_of({"index.md": "# a knowledge base bundle"}), "no manifest.json, so not a bank transfer archive"),
        (zip_of({"manifest.json": {**MANIFEST, "format": "kb"}}), "manifest.json: format: Input should be"),
        (zip_of({"manifest.json": {**MANIFEST, "format_version": 9}}), "format_version 9 is newer"),
        (zip_of({"manifest.json": MANIFEST, "memories.jsonl": "{nope\n"}), "memories.jsonl line 1: not valid JSON"),
        (zip_of({"manifest.json": MANIFEST, "memories.jsonl": [
            {"fact_type": "opinion", "text": "x", "created_at": "2026-03-01T10:00:00Z"}]}),
         "memories.jsonl line 1: fact_type: Input should be"),
        (zip_of({"manifest.json": MANIFEST, "memories.jsonl": [
            {"fact_type": "world", "text": "x", "created_at": "2026-03-01T10:00:00Z", "document_id": "d9"}]}),
         "memories.jsonl line 1: document_id: 'd9' is not in documents.jsonl"),
        (zip_of({"manifest.json": MANIFEST, "memories.jsonl": [
            {"fact_type": "observation", "text": "x", "created_at": "2026-03-01T10:00:00Z", "source_refs": [0]}]}),
         "memories.jsonl line 1: source_refs: 0 is not an earlier line"),
        (zip_of({"manifest.json": MANIFEST, "mental_models.jsonl": [
            {"id": "m", "name": "n", "source_query": "q", "trigger": {"refresh_cron": "whenever"}}]}),
         "mental_models.jsonl line 1: trigger.refresh_cron: 'whenever' is not a 5-field"),
        (zip_of({"manifest.json": MANIFEST, "webhooks.jsonl": [{"url": "https://h.example.com", "id": "w1"}],
                 "webhook_deliveries.jsonl": [{"id": "d1", "webhook_id": "w2", "event_id": "e", "event_type": "x",
                                               "url": "u", "payload": {}, "status": "delivered",
                                               "created_at": "2026-03-01T10:00:00Z"}]}),
         "webhook_deliveries.jsonl line 1: webhook_id: 'w2' is not in webhooks.jsonl"),
    ],
)  # fmt: skip
def test_a_malformed_or_foreign_archive_is_a_422_naming_the_problem(
    client: TestClient, mindbank: MindBank, archive: bytes, message: str
) -> None:
    before = mindbank.store.dump()  # type: ignore[attr-defined]
    r = upload(client, f"{BASE}/ref/transfer/import", archive)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "file"] and message in detail["msg"], detail["msg"]
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]


def test_restore_refuses_an_existing_bank_and_merge_takes_no_target(client: TestClient) -> None:
    seeded(client)
    archive, _ = export(client)
    assert upload(client, f"{BASE}/b/transfer/import", archive).status_code == 409
    assert upload(client, f"{BASE}/ghost/transfer/import", archive, target_bank_id="new").status_code == 404
    r = upload(client, f"{BASE}/b/transfer/import", archive, mode="merge", target_bank_id="x")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "target_bank_id"]
    r = upload(client, f"{BASE}/b/transfer/import", archive, target_bank_id="copy")
    op = wait(client, "b", r.json()["operation_id"])
    assert op["status"] == "completed" and op["result_metadata"]["bank_id"] == "copy"
    # the memory ids of bank b are taken in this database: the copy has its own, and its model cites them
    assert op["result_metadata"]["ids_renamed"] >= 2
    model = client.get(f"{BASE}/copy/mental-models/alice").json()
    assert model["is_stale"] is False and model["content"]
    copied = {m["id"] for m in client.get(f"{BASE}/copy/memories/list").json()["items"]}
    cited = {f["id"] for facts in model["reflect_response"]["based_on"].values() for f in facts}
    assert cited and cited <= copied and all(f"[mem:{i}]" in model["content"] for i in cited)


def test_a_rerun_import_writes_nothing_twice(idle_server: str, mindbank: MindBank) -> None:
    """A worker that lost its lease reruns the operation: the upload went with the first run's transaction."""
    from mindbank.client import Client

    with Client(idle_server) as c:
        c.retain("src", "Alice: I run on Sundays.", document_id="d1")
        mindbank.run_pending()
        exported = c.export_bank("src").operation_id
        mindbank.run_pending()
        archive = mindbank.fetch_archive("src", exported)
        submitted = c.import_bank("dst", archive, mode="merge", document_conflict="new-id")
    op = mindbank.store.claim_operation("w1", 60)
    assert op is not None and op.id == submitted.operation_id
    first = mindbank.jobs.handlers()[op.operation_type](op)
    again = mindbank.jobs.handlers()[op.operation_type](op)
    assert first["facts_imported"] == 1 and again == {"bank_id": "dst", "mode": "merge", "already_imported": True}
    assert mindbank.store.count_memories("dst") == 1


def test_an_import_that_fails_midway_writes_nothing(mindbank: MindBank, monkeypatch: pytest.MonkeyPatch) -> None:
    mindbank.retain("b", [RetainItem(content="Alice: I run.", tags=("user:alice",))])
    mindbank.create_mental_model("b", name="A", source_query="What does Alice do?", id="a")
    mindbank.run_pending()
    op = mindbank.export_bank("b")
    mindbank.run_pending()
    archive = mindbank.fetch_archive("b", op)
    before = mindbank.store.dump()  # type: ignore[attr-defined]

    def broken(*args: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr(importer, "_model", broken)  # documents and memories are written before the models
    with pytest.raises(RuntimeError, match="disk full"):
        mindbank.read_bank_archive(io.BytesIO(archive), importer.ImportOptions("restore", "copy"))
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]
    assert not mindbank.store.bank_exists("copy")


@pytest.mark.parametrize("conflict", ["skip", "replace", "new-id"])
def test_merge_folds_documents_in_with_each_conflict_rule(client: TestClient, mindbank: MindBank,
                                                          conflict: str) -> None:  # fmt: skip
    seeded(client, "src")
    retain(client, "src", {"content": "Alice: I switched to trail running.", "tags": ["user:alice"],
                           "document_id": "d3"})  # fmt: skip
    archive, _ = export(client, "src")
    retain(client, "dst", {"content": "Alice: old notes about swimming.", "tags": ["user:alice"], "document_id": "d1"})
    created = client.post(f"{BASE}/dst/mental-models", json={"name": "A", "source_query": "What does Alice do?",
                                                             "tags": ["user:alice"], "id": "a"}).json()  # fmt: skip
    wait(client, "dst", created["operation_id"])
    assert client.get(f"{BASE}/dst/mental-models/a").json()["is_stale"] is False
    r = upload(client, f"{BASE}/dst/document-transfer", archive, on_conflict=conflict)
    assert r.status_code == 202
    op = wait(client, "dst", r.json()["operation_id"])
    assert op["status"] == "completed", op["error_message"]
    texts = {m["text"]: m for m in client.get(f"{BASE}/dst/memories/list", params={"limit": 100}).json()["items"]}
    assert "Alice: I switched to trail running." in texts and "Alice: my long run is on Sundays." in texts
    assert ("Alice: old notes about swimming." in texts) == (conflict != "replace")
    assert ("Alice: I started training for the Berlin marathon." in texts) == (conflict != "skip")
    if conflict == "new-id":
        marathon = texts["Alice: I started training for the Berlin marathon."]
        assert marathon["document_id"] not in ("d1", None)
    # merged memories are new writes to this bank: its model goes stale (and is kept as it was); the archive's model,
    # which the bank did not have, comes along
    own = client.get(f"{BASE}/dst/mental-models/a").json()
    assert own["is_stale"] is True and own["name"] == "A"
    assert client.get(f"{BASE}/dst/mental-models/alice").json()["source_query"] == "What is Alice training for?"
    assert op["result_metadata"]["documents_skipped"] == (1 if conflict == "skip" else 0)


def test_clone_copies_a_fresh_bank_that_then_lives_on_its_own(client: TestClient, mindbank: MindBank) -> None:
    seeded(client)
    r = client.post(f"{BASE}/b/clone", params={"target_bank_id": "c"})
    assert r.status_code == 202
    op = wait(client, "b", r.json()["operation_id"])
    assert op["status"] == "completed", op["error_message"]
    meta = op["result_metadata"]
    assert meta["source_bank_id"] == "b" and meta["bank_id"] == "c" and meta["facts_imported"] == 2
    clone, source = (client.get(f"{BASE}/{k}/mental-models/alice").json() for k in ("c", "b"))
    assert clone["is_stale"] is False and clone["content"] != source["content"]  # same quotes, the clone's own ids
    assert clone["content"].replace("[mem:", "").split("(")[0] == source["content"].replace("[mem:", "").split("(")[0]
    assert client.post(f"{BASE}/b/clone", params={"target_bank_id": "c"}).status_code == 409
    assert client.post(f"{BASE}/b/clone", params={"target_bank_id": "b"}).status_code == 422
    assert client.post(f"{BASE}/ghost/clone", params={"target_bank_id": "z"}).status_code == 404
    retain(client, "c", {"content": "Alice: the clone learns something new.", "tags": ["user:alice"]})
    assert mindbank.store.count_memories("b") < mindbank.store.count_memories("c")
    assert client.get(f"{BASE}/b/mental-models/alice").json()["is_stale"] is False


def test_an_archive_made_by_the_reference_rules_imports(client: TestClient, mindbank: MindBank) -> None:
    """No ids, no vectors, no structured document, facts naming chunks by index and an observation naming its
    sources by line: the import embeds, assigns ids and resolves every reference."""
    t = "2026-03-01T10:00:00Z"
    archive = zip_of({
        "manifest.json": {**MANIFEST, "contents": {"data": True, "bank_config": True, "history": False}},
        "bank.json": {"name": "Reference bank", "mission": "Track runners", "config": {"enable_observations": True}},
        "documents.jsonl": [{"id": "conv", "original_text": "Alice: I run.\n\nAlice: I run daily.", "created_at": t,
                             "tags": ["user:alice"], "chunks": [{"index": 0, "text": "Alice: I run."},
                                                               {"index": 1, "text": "Alice: I run daily."}]}],
        "memories.jsonl": [
            {"fact_type": "world", "text": "Alice: I run.", "document_id": "conv", "chunk_index": 0,
             "tags": ["user:alice"], "created_at": t, "entities": ["Alice"]},
            {"fact_type": "world", "text": "Alice: I run daily.", "document_id": "conv", "chunk_index": 1,
             "tags": ["user:alice"], "created_at": t},
            {"fact_type": "observation", "text": "Alice runs daily.", "tags": ["user:alice"], "created_at": t,
             "source_refs": [0, 1], "proof_count": 2},
        ],
        "mental_models.jsonl": [{"id": "runner", "name": "Runner", "source_query": "How does Alice train?",
                                 "content": "Alice runs daily.\n", "tags": ["user:alice"],
                                 "last_refreshed_at": t, "last_memory_seen_at": t, "created_at": t}],
    })  # fmt: skip
    r = upload(client, f"{BASE}/ref/transfer/import", archive)
    assert r.status_code == 202, r.text
    op = wait(client, "ref", r.json()["operation_id"])
    assert op["status"] == "completed", op["error_message"]
    meta = op["result_metadata"]
    assert meta["vectors_computed"] == 3 and meta["config_ignored"] == ["enable_observations"]
    memories = client.get(f"{BASE}/ref/memories/list").json()["items"]
    facts = {m["text"]: m for m in memories if m["type"] == "world"}
    (observation,) = [m for m in memories if m["type"] == "observation"]
    assert sorted(observation["source_memory_ids"]) == sorted(m["id"] for m in facts.values())
    chunks = {m["chunk_id"] for m in facts.values()}
    assert len(chunks) == 2 and None not in chunks
    hits = client.post(f"{BASE}/ref/memories/recall", json={"query": "How often does Alice run?"}).json()["results"]
    assert hits and "run" in hits[0]["text"]
    model = client.get(f"{BASE}/ref/mental-models/runner").json()
    assert model["content"] == "Alice runs daily.\n" and model["is_stale"] is False
    assert client.get(f"{BASE}/ref/config").json()["overrides"] == {}
