"""Model identity on both stores, over HTTP: a bank records the embedding model (name and dimension) of its first
vectors; a server configured with another model answers the bank's recall, retain and reflect with 409 naming both
models and writes nothing; the recorded model serves it again. Embeddings come from the openai provider through the
real SDK against a fake ``/v1/embeddings``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EMBED_DIM
from fake_servers import hashed_embeddings, serving
from fastapi.testclient import TestClient
from postgres_testing import DatabaseFactory

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder
from mindbank.service.facade import MindBank

DIM = EMBED_DIM
BANK = "/v1/default/banks/b1"


def _recall(http: TestClient, query: str = "Where does Ana keep her boat?") -> Any:
    return http.post(f"{BANK}/memories/recall", json={"query": query})


def test_a_bank_refuses_another_model_and_serves_its_own_again(open_server: Callable[..., Any]) -> None:
    mb, http = open_server("embed-a")
    retained = http.post(f"{BANK}/memories", json={"items": [{"content": "Ana keeps her boat at the marina."}]})
    assert retained.status_code == 200, retained.text
    assert mb.store.bank_embedding_model("b1") == ("embed-a", DIM)
    before = _recall(http).json()
    assert any("marina" in r["text"] for r in before["results"])

    mb, http = open_server("embed-b")
    stored = mb.store.dump()  # type: ignore[attr-defined]
    for response in (
        _recall(http),
        http.post(f"{BANK}/memories", json={"items": [{"content": "Ana sold her boat."}]}),
        http.post(f"{BANK}/reflect", json={"query": "Where is the boat?"}),
    ):
        assert response.status_code == 409, response.text
        detail = response.json()["detail"]
        assert "'embed-a'" in detail and "'embed-b'" in detail and "bank 'b1'" in detail
    assert mb.store.dump() == stored  # type: ignore[attr-defined]
    # another bank is free to take the configured model
    other = http.post("/v1/default/banks/b2/memories", json={"items": [{"content": "Bo rides a bike."}]})
    assert other.status_code == 200 and mb.store.bank_embedding_model("b2") == ("embed-b", DIM)

    mb, http = open_server("embed-a")
    again = _recall(http)
    assert again.status_code == 200
    assert [r["id"] for r in again.json()["results"]] == [r["id"] for r in before["results"]]


def test_a_queued_retain_under_another_model_fails_without_writing(open_server: Callable[..., Any]) -> None:
    mb, http = open_server("embed-a")
    assert http.post(f"{BANK}/memories", json={"items": [{"content": "Ana keeps her boat."}]}).status_code == 200
    mb, http = open_server("embed-b")
    queued = http.post(f"{BANK}/memories", json={"items": [{"content": "Ana sold it."}], "async": True}).json()
    mb.run_pending()
    op = http.get(f"{BANK}/operations/{queued['operation_id']}").json()
    assert op["status"] == "failed" and "'embed-a'" in op["error_message"] and "'embed-b'" in op["error_message"]
    assert mb.store.bank_stats("b1")["total_nodes"] == 1


def test_deleting_a_bank_forgets_its_model(open_server: Callable[..., Any]) -> None:
    mb, http = open_server("embed-a")
    assert http.post(f"{BANK}/memories", json={"items": [{"content": "Ana keeps her boat."}]}).status_code == 200
    assert http.delete(BANK).status_code == 200
    mb, http = open_server("embed-b")
    assert http.post(f"{BANK}/memories", json={"items": [{"content": "Ana sold it."}]}).status_code == 200
    assert mb.store.bank_embedding_model("b1") == ("embed-b", DIM)


@pytest.mark.parametrize("dimension", [2500, 4100])
def test_wide_models_on_sqlite(tmp_path: Path, dimension: int) -> None:
    _retain_and_find(str(tmp_path / "wide.db"), dimension)


@pytest.mark.parametrize(("dimension", "index"), [(2500, "halfvec_cosine_ops"), (4100, None)])
def test_wide_models_on_postgres(postgres_databases: DatabaseFactory, dimension: int, index: str | None) -> None:
    """Past pgvector's 2,000-dimension HNSW limit: a halfvec index up to 4,000, an exact scan beyond."""
    url = postgres_databases.create(dimension)
    try:
        _retain_and_find(url, dimension)
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (f"idx_memory_units_embedding_{dimension}",)
            ).fetchone()
        assert (row is None) if index is None else (index in row[0] and f"halfvec({dimension})" in row[0])
    finally:
        postgres_databases.drop(url)


def _retain_and_find(database: str, dimension: int) -> None:
    with serving(hashed_embeddings(dimension)) as server:
        embedder = OpenAIEmbedder(model=f"wide-{dimension}", base_url=server.url + "/v1", timeout=5.0)
        settings = Settings(database_url=database, enable_auto_consolidation=False)
        mb = MindBank.open(settings, embedder=embedder)
        try:
            items = ["Ana keeps her boat at the marina.", "Bo rides a red bike to work.", "Cy bakes bread daily."]
            mb.retain("wide", [RetainItem(content=text) for text in items])
            hits = mb.recall("wide", "red bike", retriever="dense")
            assert hits and "bike" in hits[0].memory.text
            assert mb.store.bank_embedding_model("wide") == (f"wide-{dimension}", dimension)
        finally:
            mb.close()


def _export(mb: MindBank, http: TestClient) -> bytes:
    submitted = http.post(f"{BANK}/transfer/export")
    assert submitted.status_code == 202, submitted.text
    mb.run_pending()
    op = http.get(f"{BANK}/operations/{submitted.json()['operation_id']}").json()
    assert op["status"] == "completed", op
    return http.get(op["result_metadata"]["download_url"]).content


def test_an_archive_of_another_model_is_refused_unless_reembedding_is_asked(open_server: Callable[..., Any]) -> None:
    mb, http = open_server("embed-a")
    assert (
        http.post(f"{BANK}/memories", json={"items": [{"content": "Ana keeps her boat at the marina."}]}).status_code
        == 200
    )
    archive = _export(mb, http)

    mb, http = open_server("embed-b")
    files = {"file": ("a.zip", archive, "application/zip")}
    refused = http.post("/v1/default/banks/copy/transfer/import", params={"target_bank_id": "copy"}, files=files)
    assert refused.status_code == 409, refused.text
    assert "'embed-a'" in refused.json()["detail"] and "'embed-b'" in refused.json()["detail"]
    assert not mb.store.bank_exists("copy")
    merge = http.post("/v1/default/banks/b1/document-transfer", files=files)
    assert merge.status_code == 409  # b1 is embed-a's bank, and the archive too

    accepted = http.post(
        "/v1/default/banks/copy/transfer/import", params={"target_bank_id": "copy", "reembed": True}, files=files
    )
    assert accepted.status_code == 202, accepted.text
    mb.run_pending()
    op = http.get(f"/v1/default/banks/copy/operations/{accepted.json()['operation_id']}").json()
    assert op["status"] == "completed", op
    found = http.post("/v1/default/banks/copy/memories/recall", json={"query": "Where is Ana's boat?"})
    assert found.status_code == 200 and any("marina" in r["text"] for r in found.json()["results"])
    assert mb.store.bank_embedding_model("copy") == ("embed-b", DIM)
