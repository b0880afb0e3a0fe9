"""A bank exported and imported into another database comes back row for row — every id, timestamp, vector,
structured document, history entry and operation — on each backend and from one backend to the other (the
SQLite → PostgreSQL migration), through the operations the HTTP API queues (export, download, import)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_testing import DatabaseFactory
from transfer_testing import bank_rows, fill_bank, without_operations

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank


@pytest.fixture
def open_bank(
    tmp_path: Path, embedder: MiniLMEmbedder, request: pytest.FixtureRequest
) -> Iterator[Callable[..., MindBank]]:
    opened: list[MindBank] = []

    def make(backend: str, name: str) -> MindBank:
        if backend == "postgres":
            databases: DatabaseFactory = request.getfixturevalue("postgres_databases")
            url = databases.create(embedder.dimension)
            request.addfinalizer(lambda: databases.drop(url))
        else:
            url = str(tmp_path / f"{name}.db")
        mb = MindBank.open(Settings(database_url=url), embedder=embedder)
        opened.append(mb)
        return mb

    yield make
    for mb in opened:
        mb.close()


@pytest.mark.parametrize(
    ("source", "target"),
    [("sqlite", "sqlite"), ("postgres", "postgres"), ("sqlite", "postgres"), ("postgres", "sqlite")],
)
def test_export_then_import_elsewhere_keeps_every_row(open_bank: Callable[..., MindBank], source: str,
                                                      target: str) -> None:  # fmt: skip
    mb = open_bank(source, "source")
    fill_bank(mb)
    export_op = mb.export_bank("b", include_history=True)
    mb.run_pending()
    archive = mb.fetch_archive("b", export_op)
    before = without_operations(bank_rows(mb, "b"), export_op)

    other = open_bank(target, "target")
    import_op = other.import_bank("b", archive, include_history=True)  # restore into its own (new) bank id
    other.run_pending()
    done = other.get_operation("b", import_op)
    assert done.status == "completed", done.error
    assert done.result is not None and done.result["vectors_computed"] == 0 and done.result["ids_renamed"] == 0
    after = without_operations(bank_rows(other, "b"), import_op)
    for table, rows in before.items():
        assert rows, f"the source bank should have {table} rows"
        assert after[table] == rows, table

    # staleness reads exactly as at the source: the refreshed model is fresh and cites the same memories
    models = {m.id: m for m in other.list_mental_models("b")[0]}
    assert {m.id: m.is_stale for m in mb.list_mental_models("b")[0]} == {k: m.is_stale for k, m in models.items()}
    assert models["alice"].is_stale is False
    assert models["alice"].structured_document == mb.get_mental_model("b", "alice").structured_document
    # the watermark still covers every memory it saw, and the next write is stamped after everything imported
    stamp = other.last_memory_write_at("b")
    assert stamp is not None and all(m.updated_at <= stamp for m in other.list_memories("b", limit=1000)[0])
    other.retain("b", [RetainItem(content="Alice: next I want to run Boston.", tags=("user:alice",))])
    assert (other.last_memory_write_at("b") or stamp) > stamp
    assert other.get_mental_model("b", "alice").is_stale is True


def test_a_document_subset_export_carries_only_those_documents(open_bank: Callable[..., MindBank]) -> None:
    mb = open_bank("sqlite", "source")
    fill_bank(mb)
    op = mb.export_bank("b", document_ids=["bob"])
    mb.run_pending()
    archive = mb.fetch_archive("b", op)
    other = open_bank("sqlite", "target")
    imported = other.import_bank("b2", archive, target_bank_id="b2")
    other.run_pending()
    assert other.get_operation("b2", imported).status == "completed"
    rows = bank_rows(other, "b2")
    assert [d["id"] for d in rows["documents"]] == ["bob"]
    assert {m["document_id"] for m in rows["memory_units"]} == {"bob"}
    assert rows["mental_models"] == [] and [o["id"] for o in rows["operations"]] == [imported]
    assert rows["banks"][0]["name"] is None  # no bank-level section in a subset
