"""Re-embedding a bank to the configured model, over HTTP on both stores: recall answers from the old vectors until
the switch commits, retains arriving meanwhile are caught up, the commit swaps every vector and the recorded model at
once, a server reconfigured mid-way fails the operation with the bank untouched. Embeddings come from the openai
provider through the real SDK against a fake ``/v1/embeddings`` whose vectors differ per model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from conftest import EMBED_DIM
from fake_servers import FakeServer, hashed_vector
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder
from mindbank.service import jobs
from mindbank.service.facade import MindBank
from mindbank.store.base import MemoryFilter, Store

DIM = EMBED_DIM
BANK = "/v1/default/banks/b1"
FACTS = [f"Fact {i}: Ana keeps boat number {i} at the marina on pier {i % 7}." for i in range(40)]


def _retain(http: TestClient, texts: list[str], **extra: Any) -> Any:
    response = http.post(f"{BANK}/memories", json={"items": [{"content": t} for t in texts], **extra})
    assert response.status_code == 200, response.text
    return response.json()


def _recall_ids(http: TestClient, query: str = "Where does Ana keep boat number 7?") -> list[str]:
    response = http.post(f"{BANK}/memories/recall", json={"query": query, "max_tokens": 200})
    assert response.status_code == 200, response.text
    return [r["id"] for r in response.json()["results"]]


def assert_vectors_are(store: Store, bank: str, model: str) -> None:
    """Every memory of the bank holds exactly ``model``'s vector of its text (never a mix)."""
    memories, total = store.list_memories(bank, MemoryFilter(), query=None, limit=10_000, offset=0)
    vectors = store.memory_vectors(bank, [m.id for m in memories])
    assert total == len(memories) == len(vectors)
    for m in memories:
        expected = np.asarray(hashed_vector(m.text, DIM, model), np.float32)
        expected /= np.linalg.norm(expected)
        assert np.allclose(vectors[m.id], expected, atol=1e-3), (m.text, model)


def test_recall_uses_the_old_vectors_until_the_switch_commits(
    open_server: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    mb, http = open_server("embed-a")
    _retain(http, FACTS)
    before = _recall_ids(http)
    # the server now embeds with embed-b and can still make embed-a's vectors for the bank meanwhile
    mb, http = open_server("embed-b", previous="embed-a")
    status = http.get(f"{BANK}/embedding-model").json()
    assert status["model"] == "embed-a" and status["server_model"] == "embed-b" and status["matches"] is False
    assert status["serves_bank"] is True
    assert _recall_ids(http) == before
    started = http.post(f"{BANK}/reembed")
    assert started.status_code == 200, started.text
    body = started.json()
    assert body["model"] == "embed-b" and body["dimension"] == DIM and body["deduplicated"] is False
    again = http.post(f"{BANK}/reembed").json()
    assert again["operation_id"] == body["operation_id"] and again["deduplicated"] is True
    assert http.get(f"{BANK}/embedding-model").json()["reembed_operation_id"] == body["operation_id"]

    # two parts, then a retain arrives before the commit: it is embedded with embed-a, then caught up
    mb.settings = replace(mb.settings, reembed_part_size=16)
    commit = mb.store.commit_reembed
    arrived: list[str] = []

    def retain_first(bank_id: str, model: str, dimension: int) -> bool:
        if not arrived:
            _retain(http, ["Bo moored boat number 7 beside Ana."])
            arrived.append("retained")
            assert_vectors_are(mb.store, "b1", "embed-a")  # the bank is wholly on embed-a still
            assert _recall_ids(http) != []
        return commit(bank_id, model, dimension)

    monkeypatch.setattr(mb.store, "commit_reembed", retain_first)
    mb.run_pending()
    op = http.get(f"{BANK}/operations/{body['operation_id']}").json()
    assert op["status"] == "completed", op
    assert op["result_metadata"]["switched"] is True and op["result_metadata"]["memories"] == len(FACTS) + 1
    assert op["result_metadata"]["from_model"] == "embed-a"
    assert mb.store.bank_embedding_model("b1") == ("embed-b", DIM)
    assert_vectors_are(mb.store, "b1", "embed-b")
    status = http.get(f"{BANK}/embedding-model").json()
    assert status["model"] == "embed-b" and status["matches"] is True and status["reembed_operation_id"] is None
    # the bank now serves the configured model without the previous one
    mb, http = open_server("embed-b")
    assert _recall_ids(http)
    _retain(http, ["Cy rents boat number 9."])
    assert_vectors_are(mb.store, "b1", "embed-b")


def test_without_the_old_model_the_bank_waits_for_the_switch(
    open_server: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    mb, http = open_server("embed-a")
    _retain(http, FACTS[:5])
    mb, http = open_server("embed-b")  # no previous model: embed-a's vectors cannot be made here
    refused = http.post(f"{BANK}/memories/recall", json={"query": "boat"})
    assert refused.status_code == 409 and "reembed" in refused.json()["detail"]
    assert http.get(f"{BANK}/embedding-model").json()["serves_bank"] is False
    # a queued retain waits for the switch (parked, no retry counted) instead of failing
    monkeypatch.setattr(jobs, "REEMBED_WAIT", timedelta(0))
    queued = http.post(f"{BANK}/memories", json={"items": [{"content": "Bo sold boat 3."}], "async": True}).json()
    op_id = http.post(f"{BANK}/reembed").json()["operation_id"]
    mb.run_pending()
    mb.run_pending()
    assert http.get(f"{BANK}/operations/{op_id}").json()["status"] == "completed"
    retain_op = http.get(f"{BANK}/operations/{queued['operation_id']}").json()
    assert retain_op["status"] == "completed" and retain_op["retry_count"] == 0, retain_op
    assert mb.store.bank_stats("b1")["total_nodes"] == 6
    assert _recall_ids(http, "boat")
    assert_vectors_are(mb.store, "b1", "embed-b")


def test_a_server_reconfigured_mid_way_fails_the_operation_and_keeps_the_bank(
    open_server: Callable[..., Any],
) -> None:
    mb, http = open_server("embed-a")
    _retain(http, FACTS[:5])
    mb, http = open_server("embed-b", previous="embed-a")
    op_id = http.post(f"{BANK}/reembed").json()["operation_id"]
    mb, http = open_server("embed-c", previous="embed-a")
    mb.run_pending()
    op = http.get(f"{BANK}/operations/{op_id}").json()
    assert op["status"] == "failed" and "'embed-c'" in op["error_message"] and "'embed-b'" in op["error_message"]
    assert mb.store.bank_embedding_model("b1") == ("embed-a", DIM)
    assert_vectors_are(mb.store, "b1", "embed-a")
    assert _recall_ids(http, "boat")


def test_reembed_of_an_unknown_bank_is_404_and_of_an_empty_bank_records_the_model(
    open_server: Callable[..., Any],
) -> None:
    mb, http = open_server("embed-a")
    assert http.post("/v1/default/banks/nope/reembed").status_code == 404
    assert http.get("/v1/default/banks/nope/embedding-model").status_code == 404
    assert http.put(BANK, json={"name": "empty"}).status_code == 200
    op_id = http.post(f"{BANK}/reembed").json()["operation_id"]
    mb.run_pending()
    op = http.get(f"{BANK}/operations/{op_id}").json()
    assert op["status"] == "completed" and op["result_metadata"]["switched"] is False
    assert mb.store.bank_embedding_model("b1") == ("embed-a", DIM)


def test_page_vectors_are_the_models_that_made_them(open_server: Callable[..., Any]) -> None:
    mb, http = open_server("embed-a")
    _retain(http, FACTS[:3])
    created = http.post(f"{BANK}/knowledge-base/pages", json={"name": "Boats", "source_query": "Where are boats?"})
    assert created.status_code == 201, created.text
    model_id = created.json()["mental_model_id"]
    mb.run_pending()
    assert http.get(f"{BANK}/knowledge-base/search", params={"q": "boats"}).status_code == 200
    before = mb.store.page_vectors("b1")[model_id]
    mb, http = open_server("embed-b", previous="embed-a")
    http.post(f"{BANK}/reembed")
    mb.run_pending()
    assert mb.store.page_vectors("b1") == {}  # the switch forgets the old model's page vectors
    hits = http.get(f"{BANK}/knowledge-base/search", params={"q": "boats"})
    assert hits.status_code == 200 and hits.json()["results"][0]["mental_model_id"] == model_id
    text_hash, vector = mb.store.page_vectors("b1")[model_id]
    assert text_hash != before[0] and not np.allclose(vector, before[1])  # made by embed-b, keyed by it


def test_a_bank_moves_from_the_bundled_model_to_another_width(
    embedding_database: str, embedder: MiniLMEmbedder, fake_embeddings: FakeServer
) -> None:
    """Both stores keep any width per bank: a MiniLM bank (384) is searched with MiniLM until it switches to 8,
    while another MiniLM bank of the same database stays on MiniLM and keeps answering."""
    settings = Settings(database_url=embedding_database, worker_poll_seconds=0.02, enable_auto_consolidation=False)
    query = "Where does Ana keep boat number 7?"
    mb = MindBank.open(settings, embedder=embedder)
    mb.retain("b1", [RetainItem(content=text) for text in FACTS[:10]])
    mb.retain("b2", [RetainItem(content=text) for text in FACTS[10:20]])
    before = [hit.memory.id for hit in mb.recall("b1", query)]
    mb.close()
    target = OpenAIEmbedder(model="embed-b", base_url=fake_embeddings.url + "/v1", timeout=5.0)
    mb = MindBank.open(settings, embedder=target)
    try:
        # the server can always load the bundled MiniLM: recall answers from the 384-wide vectors meanwhile
        assert [hit.memory.id for hit in mb.recall("b1", query)] == before
        assert mb.reembed("b1")["model"] == "embed-b"
        mb.run_pending()
        assert mb.store.bank_embedding_model("b1") == ("embed-b", DIM)
        assert_vectors_are(mb.store, "b1", "embed-b")
        memories, _ = mb.store.list_memories("b1", MemoryFilter(), query=None, limit=100, offset=0)
        hits = mb.recall("b1", query, retriever="dense")  # searched with embed-b's 8-wide vectors now
        assert hits and {h.memory.id for h in hits} <= {m.id for m in memories}
        # the other bank is still MiniLM's, 384 wide, and recall there answers with MiniLM
        assert mb.store.bank_embedding_model("b2") == (embedder.name, 384)
        other = mb.recall("b2", "Where does Ana keep boat number 15?", retriever="dense")
        assert any("boat number 15 " in h.memory.text for h in other[:5])
        assert all(any(h.memory.text in fact for fact in FACTS[10:20]) for h in other)
    finally:
        mb.close()


def test_a_worker_dying_after_the_switch_is_followed_by_one_that_settles_it(
    open_server: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    mb, http = open_server("embed-a")
    _retain(http, FACTS[:6])
    mb, http = open_server("embed-b", previous="embed-a")
    op_id = http.post(f"{BANK}/reembed").json()["operation_id"]
    commit = mb.store.commit_reembed

    def commit_then_die(bank_id: str, model: str, dimension: int) -> bool:
        assert commit(bank_id, model, dimension)
        raise RuntimeError("killed after the switch committed, before the operation settled")

    monkeypatch.setattr(mb.store, "commit_reembed", commit_then_die)
    mb.run_pending()
    op = mb.store.get_operation("b1", op_id)
    assert op is not None and op.status == "pending" and op.progress is not None and "result" in op.progress
    assert mb.store.bank_embedding_model("b1") == ("embed-b", DIM)
    # the next worker finds the switch done and settles with its result, switching nothing again
    result = mb.reembedding.run_reembed(op)
    assert result == {"model": "embed-b", "dimension": DIM, "from_model": "embed-a", "memories": 6, "switched": True}
    assert_vectors_are(mb.store, "b1", "embed-b")
