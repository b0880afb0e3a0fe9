"""Bank transfer in the store, on every backend: snapshots, all-or-nothing imports, id collisions, stored files, and
the knowledge tree, governance records and refresh spend ledger an archive carries."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from test_store import doc, model, op, vec

from mindbank.domain.document import parse_markdown
from mindbank.domain.governance import RefreshState
from mindbank.domain.knowledge import KnowledgeNode
from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import (
    AlreadyExists,
    DocumentReplace,
    FileGone,
    ImportTarget,
    KnowledgeTreeImport,
    SpendRecord,
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
        yield from (StoredHistory(h.mental_model_id, h.content, h.changed_at, h.id, h.version) for h in history)
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


def _node(node_id: str, kind: str, name: str, parent: str | None = None, model_id: str | None = None,
          bank: str = "b") -> KnowledgeNode:  # fmt: skip
    now = utcnow()
    return KnowledgeNode(node_id, bank, kind, name, parent, model_id, now, now)  # type: ignore[arg-type]


def _tree_bank(store: Store, bank: str = "b") -> None:
    """Folder f1 "Runners" > page p1 "Alice" (model m1, a governance record carrying a fact over), and spend."""
    store.insert_knowledge_node(_node("f1", "folder", "Runners", bank=bank))
    state = RefreshState(failures=2, last_failure_reason="refresh_failed_error", carried_over=("fact-1",),
                         reanchor="carried_over_failed_again", refused={"reason": "budget_exhausted"})  # fmt: skip
    store.insert_knowledge_node(_node("p1", "page", "Alice", "f1", "m1", bank=bank),
                                model=replace(model(bank, "m1"), name="Alice", refresh_state=state))  # fmt: skip
    store.add_refresh_spend(SpendRecord(bank, "m1", "2026-02-28", 1, 2, 30, 4))
    store.add_refresh_spend(SpendRecord(bank, "m1", "2026-03-01", 2, 2, 50, 6))
    store.add_refresh_spend(SpendRecord(bank, "gone", "2026-03-01", 1, 1, 5, 1))


def test_the_snapshot_reads_the_tree_the_governance_records_and_the_ledger_and_a_restore_writes_them(
    store: Store, another_store: Store
) -> None:
    _tree_bank(store)
    with store.bank_snapshot("b") as snap:
        bank = snap.bank()
        nodes = snap.knowledge_nodes()
        spend = list(snap.refresh_spend())
        models = [m for m, _ in snap.mental_models()]
    assert [(n.id, n.kind, n.parent_id, n.mental_model_id) for n in nodes] == [("f1", "folder", None, None),
                                                                             ("p1", "page", "f1", "m1")]  # fmt: skip
    assert [(r.mental_model_id, r.day, r.input_tokens) for r in spend] == [
        ("m1", "2026-02-28", 30), ("gone", "2026-03-01", 5), ("m1", "2026-03-01", 50)]  # fmt: skip
    assert models[0].refresh_state.carried_over == ("fact-1",) and models[0].refresh_state.failures == 2
    assert bank is not None
    counts = another_store.import_rows(ImportTarget("b", bank, False),
                                       [*models, KnowledgeTreeImport(tuple(nodes)), *spend])  # fmt: skip
    assert counts == {"mental_models": 1, "knowledge_folders": 1, "knowledge_pages": 1, "refresh_spend": 3}
    assert sorted(another_store.list_knowledge_nodes("b"), key=lambda n: n.id) == nodes
    restored = another_store.get_mental_model("b", "m1")
    assert restored is not None and restored.refresh_state == models[0].refresh_state
    assert another_store.bank_refresh_spend("b", "2026-03-01") == store.bank_refresh_spend("b", "2026-03-01")
    assert another_store.refresh_spend_by_model("b", ["m1"], "2026-03-01")["m1"].total.input_tokens == 80


def test_a_merged_tree_keeps_the_sibling_name_rule_inside_the_import_transaction(store: Store) -> None:
    _tree_bank(store)
    incoming = (
        _node("f9", "folder", "Runners"),  # the bank's Runners, by name
        _node("f1", "folder", "Elsewhere"),  # the bank's f1, by id: its contents go into Runners too
        _node("p9", "page", "Alice", "f9", "m9"),  # a sibling has the name: renamed, with its model
        _node("p1", "page", "Bob", "f1", "m8"),  # a node id the bank uses: a fresh one
        _node("n1", "folder", "Nested", "f9"),
    )
    rows = [replace(model("b", "m9"), name="Alice"), replace(model("b", "m8"), name="Bob"),
            KnowledgeTreeImport(incoming)]  # fmt: skip
    counts = store.import_rows(ImportTarget("b", None, True), rows)
    assert counts["knowledge_folders_merged"] == 2 and counts["knowledge_nodes_renamed"] == 1
    assert counts["knowledge_node_ids_replaced"] == 1 and counts["knowledge_pages"] == 2
    nodes = {(n.parent_id, n.name): n for n in store.list_knowledge_nodes("b")}
    assert set(nodes) == {(None, "Runners"), ("f1", "Alice"), ("f1", "Alice (2)"), ("f1", "Bob"), ("f1", "Nested")}
    assert nodes[("f1", "Alice (2)")].mental_model_id == "m9" and nodes[("f1", "Bob")].id not in ("p1", "p9")
    renamed = store.get_mental_model("b", "m9")
    assert renamed is not None and renamed.name == "Alice (2)"  # a page's name is its model's


def test_an_import_whose_tree_cannot_be_written_writes_nothing(store: Store) -> None:
    _tree_bank(store)
    before = store.dump()  # type: ignore[attr-defined]
    # the page's mental model is not in the import (nor in the bank): the whole import rolls back
    rows = [replace(model("b", "m7"), name="X"), KnowledgeTreeImport((_node("p7", "page", "P", None, "m404"),))]
    with pytest.raises(AlreadyExists):  # the database's integrity error, as the store reports a refused key
        store.import_rows(ImportTarget("b", None, True), rows)
    assert store.dump() == before  # type: ignore[attr-defined]


def test_history_numbers_travel_with_the_rows_and_older_archives_are_numbered(
    store: Store, another_store: Store
) -> None:
    store.insert_mental_model(model())
    m = store.get_mental_model("b", "m1")
    assert m is not None
    previous = ""
    for i in range(4):  # versions 0..3, the cap keeps 2 and 3
        store.save_refresh(replace(m, content=f"v{i}"), history={"previous_content": previous}, history_cap=2)
        previous = f"v{i}"
    source = _read_all(store, "b")
    assert [h.version for h in source["models"][0][1]] == [2, 3]
    another_store.import_rows(ImportTarget("b", source["bank"][0], False), _rows(source))
    assert [h.version for h in another_store.list_history("b", "m1")] == [3, 2]  # kept, not renumbered
    # an archive written before numbers were stored: the rows are numbered as they stand
    (model_row, history), *_ = source["models"]
    unnumbered = [
        replace(model_row, bank_id="c"),
        *(StoredHistory(h.mental_model_id, h.content, h.changed_at, None) for h in history),
    ]
    another_store.import_rows(ImportTarget("c", replace(source["bank"][0], bank_id="c"), False), unnumbered)
    assert [h.version for h in another_store.list_history("c", "m1")] == [2, 1]
