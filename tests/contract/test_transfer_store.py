"""Bank transfer in the store, on every backend: snapshots, all-or-nothing imports, id collisions, stored files."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from test_store import doc, model, op, vec

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import (
    AlreadyExists,
    DocumentReplace,
    FileGone,
    ImportTarget,
    Store,
    StoredHistory,
    StoredOperation,
)


def _fill(store: Store, bank: str = "b") -> None:
    """A bank with two documents, a model with a document, history and citations, an operation and a trace."""
    store.write_documents(bank, [doc("alpha", tags=("t",), document_id="d1"), doc("beta", document_id="d2")])
    memories = store.list_memories(bank, _all(), query=None, limit=10, offset=0)[0]
    ids = [m.id for m in sorted(memories, key=lambda m: m.text)]  # alpha, beta
    store.write_consolidation(bank, creates=[], updates=[], consolidated_ids=ids[:1])
    m = model(bank)
    store.insert_mental_model(m)
    document = parse_markdown(f"# A\n\nalpha [mem:{ids[0]}]\n").to_dict()
    store.save_refresh(replace(m, content="x", structured_document=document, last_memory_seen_at=utcnow()),
                       history={"previous_content": ""}, history_cap=0)  # fmt: skip
    store.submit_operation(op(bank))
    store.record_llm_request(LLMRequestRecord("r1", bank, None, "refresh", "p", "m", 1, {"a": 1}, None, "boom", 1, 2, 3,
                                              utcnow()))  # fmt: skip


def _all():  # type: ignore[no-untyped-def]
    from mindbank.store.base import MemoryFilter

    return MemoryFilter()


def _read_all(store: Store, bank: str) -> dict[str, list]:  # type: ignore[type-arg]
    with store.bank_snapshot(bank) as snap:
        return {
            "bank": [snap.bank()],
            "documents": list(snap.documents()),
            "memories": list(snap.memories()),
            "models": list(snap.mental_models()),
            "operations": list(snap.operations()),
            "llm": list(snap.llm_requests()),
        }


def _rows(snapshot: dict[str, list]):  # type: ignore[no-untyped-def,type-arg]
    for m, history in snapshot["models"]:
        yield m
        yield from (StoredHistory(h.mental_model_id, h.content, h.changed_at, h.id) for h in history)
    yield from snapshot["documents"]
    yield from snapshot["memories"]
    yield from snapshot["operations"]
    yield from snapshot["llm"]


def test_snapshot_reads_every_row_and_a_restore_into_a_fresh_database_keeps_them(
    store: Store, another_store: Store
) -> None:
    _fill(store)
    source = _read_all(store, "b")
    assert [d.id for d in source["documents"]] == ["d1", "d2"] and len(source["documents"][0].chunks) == 1
    assert len(source["memories"]) == 2 and source["memories"][0].consolidated_at is not None
    assert np.allclose(source["memories"][0].embedding, vec(1, 0, 0, 0))
    assert len(source["models"]) == 1 and len(source["models"][0][1]) == 1

    other = another_store  # another database of the same backend
    bank = source["bank"][0]
    counts = other.import_rows(ImportTarget("b", bank, False), _rows(source))
    assert counts["documents"] == 2 and counts["facts"] == 2 and counts["history"] == 1
    again = _read_all(other, "b")
    for key in ("documents", "operations", "llm"):
        assert again[key] == source[key], key
    assert [m.memory for m in again["memories"]] == [m.memory for m in source["memories"]]
    assert [m.consolidated_at for m in again["memories"]] == [m.consolidated_at for m in source["memories"]]
    assert all(
        np.array_equal(a.embedding, b.embedding) for a, b in zip(again["memories"], source["memories"], strict=True)
    )
    (m1, h1), (m0, h0) = again["models"][0], source["models"][0]
    assert replace(m1, is_stale=None) == replace(m0, is_stale=None) and h1 == h0
    assert again["bank"][0] == source["bank"][0]
    # a history row written after the import gets a free id
    other.save_refresh(m1, history={"previous_content": "x"}, history_cap=0)
    assert len({h.id for h in other.list_history("b", m1.id)}) == 2
    with pytest.raises(AlreadyExists):
        other.import_rows(ImportTarget("b", bank, False), [])


def test_a_failed_import_writes_nothing(store: Store) -> None:
    _fill(store)
    source = _read_all(store, "b")
    before = store.dump()  # type: ignore[attr-defined]
    bank = replace(source["bank"][0], bank_id="c")
    # the memories keep their ids, which bank b already holds: the import must fail as a whole
    with pytest.raises(AlreadyExists):
        store.import_rows(ImportTarget("c", bank, False), _rows(source))
    assert store.dump() == before  # type: ignore[attr-defined]
    assert store.existing_ids("memory", [m.memory.id for m in source["memories"]]) == {
        m.memory.id for m in source["memories"]
    }
    assert store.existing_ids("document", ["d1", "zz"], bank_id="b") == {"d1"}
    assert store.existing_ids("document", ["d1"], bank_id="c") == set()
    assert store.existing_ids("history", [h.id for h in source["models"][0][1]]) == {source["models"][0][1][0].id}


def test_merge_stamps_memories_fresh_and_replace_deletes_the_old_document(store: Store) -> None:
    _fill(store)
    before = store.bank_last_memory_write_at("b")
    source = _read_all(store, "b")
    renewed = [
        replace(m, memory=replace(m.memory, id=f"new-{i}"), consolidated_at=utcnow())
        for i, m in enumerate(source["memories"])
        if m.memory.document_id == "d1"
    ]
    d1 = source["documents"][0]
    rows = [
        DocumentReplace("d1"),
        replace(d1, chunks=tuple(replace(c, id="new-chunk") for c in d1.chunks)),
        *[replace(m, memory=replace(m.memory, chunk_id="new-chunk")) for m in renewed],
    ]
    counts = store.import_rows(ImportTarget("b", None, True), rows)
    assert counts == {"documents_replaced": 1, "documents": 1, "chunks": 1, "facts": 1}
    stamp = store.bank_last_memory_write_at("b")
    assert before is not None and stamp is not None and stamp > before
    merged = {m.memory.id: m for m in _read_all(store, "b")["memories"]}
    assert set(merged) == {"new-0"} | {m.memory.id for m in source["memories"] if m.memory.document_id == "d2"}
    assert merged["new-0"].memory.updated_at == stamp and merged["new-0"].consolidated_at is None


def test_operations_move_to_the_importing_bank_with_their_claim(store: Store) -> None:
    o = op("b")
    stored = StoredOperation(replace(o, status="processing"), "w1", utcnow() + timedelta(seconds=5))
    store.import_rows(ImportTarget("c", None, False), [stored])
    with store.bank_snapshot("c") as snap:
        (got,) = list(snap.operations())
    assert got.operation.bank_id == "c" and got.worker_id == "w1" and got.lease_expires_at == stored.lease_expires_at


def test_files_are_stored_in_chunks_read_back_and_purged(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from mindbank.store import transfer

    monkeypatch.setattr(transfer, "FILE_CHUNK", 4)
    data = b"0123456789"
    info = store.put_file("exports/b/x.zip", bank_id="b", filename="x.zip", content_type="application/zip",
                          source=io.BytesIO(data))  # fmt: skip
    assert (info.byte_size, info.chunk_count) == (10, 3)
    assert store.get_file("exports/b/x.zip") == info
    assert b"".join(store.read_file("exports/b/x.zip")) == data
    store.put_file("exports/b/x.zip", bank_id="b", filename="x.zip", content_type="application/zip",
                   source=io.BytesIO(b"new"))  # fmt: skip
    assert b"".join(store.read_file("exports/b/x.zip")) == b"new"
    store.put_file("uploads/y.zip", bank_id="b", filename="y.zip", content_type="application/zip",
                   source=io.BytesIO(b"u"))  # fmt: skip
    assert store.purge_files(utcnow() + timedelta(seconds=1), prefix="exports/") == 1
    assert store.get_file("exports/b/x.zip") is None and list(store.read_file("exports/b/x.zip")) == []
    assert store.delete_file("uploads/y.zip") and not store.delete_file("uploads/y.zip")


def test_an_import_consumes_its_upload_once(store: Store) -> None:
    store.put_file("uploads/u.zip", bank_id="b", filename="u.zip", content_type="application/zip",
                   source=io.BytesIO(b"zip"))  # fmt: skip
    rows = [replace(op("b"), id="op-1")]
    store.import_rows(
        ImportTarget("b", None, False), [StoredOperation(rows[0], None, None)], consume_file="uploads/u.zip"
    )
    assert store.get_file("uploads/u.zip") is None
    before = store.dump()  # type: ignore[attr-defined]
    with pytest.raises(FileGone):  # a second run of the same import: nothing is written twice
        store.import_rows(ImportTarget("b", None, False), [StoredOperation(replace(rows[0], id="op-2"), None, None)],
                          consume_file="uploads/u.zip")  # fmt: skip
    assert store.dump() == before  # type: ignore[attr-defined]
