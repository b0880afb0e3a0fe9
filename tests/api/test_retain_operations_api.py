"""Queued retains over HTTP: written in checkpointed parts, idempotent under the client's ``operation_id``; the sync
size bound (413 pointing to async retain)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.engine.retain import parts
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank

BASE = "/v1/default/banks"
LONG = "\n\n".join(
    " ".join(f"Paragraph {p} sentence {s} tells of harbour {p * 10 + s} and its boats." for s in range(12))
    for p in range(6)
)


def facts(mb: MindBank, bank: str) -> list[str]:
    """The bank's fact texts (observations, which the background consolidation adds, left out)."""
    return [m.text for m in mb.list_memories(bank, types=["world", "experience"], limit=1000)[0]]


def test_a_large_async_retain_is_written_in_parts_like_a_sync_one(
    client: TestClient, mindbank: MindBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parts, "PART_FACTS", 2)
    sync = client.post(f"{BASE}/sync/memories", json={"items": [{"content": LONG}]})
    assert sync.status_code == 200
    op_id = str(uuid.uuid4())
    body = {"items": [{"content": LONG, "tags": ["t"]}, {"content": "A short one."}], "async": True,
            "operation_id": op_id}  # fmt: skip
    r = client.post(f"{BASE}/async/memories", json=body)
    assert r.status_code == 200 and r.json()["operation_id"] == op_id
    done = mindbank.wait_for("async", op_id, timeout=60)
    assert done.status == "completed" and done.retry_count == 0
    expected = len(facts(mindbank, "sync")) + 1  # the same facts, plus the short item's
    assert done.result == {"items_count": 2, "unit_ids_count": expected}
    assert done.progress is not None and done.progress["memories"] == expected and done.progress["item"] == 2
    texts = facts(mindbank, "async")
    assert len(texts) == expected and len(set(texts)) == expected


def test_operation_id_makes_an_async_retain_idempotent(client: TestClient, mindbank: MindBank) -> None:
    op_id = str(uuid.uuid4())
    body = {"items": [{"content": "Ada restores a boat."}], "async": True, "operation_id": op_id.upper()}
    first = client.post(f"{BASE}/b/memories", json=body)
    again = client.post(f"{BASE}/b/memories", json=body)  # a retry after a lost acknowledgement
    assert first.status_code == again.status_code == 200
    assert first.json()["operation_id"] == again.json()["operation_id"] == op_id  # canonical UUID form
    assert mindbank.list_operations("b", operation_type="batch_retain")[1] == 1  # no new work queued
    other = client.post(f"{BASE}/b/memories", json={**body, "items": [{"content": "Something else."}]})
    assert other.status_code == 409 and op_id in other.text
    elsewhere = client.post(f"{BASE}/other/memories", json=body)
    assert elsewhere.status_code == 409
    bad = client.post(f"{BASE}/b/memories", json={**body, "operation_id": "not-a-uuid"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "operation_id"]
    # as in the reference, a synchronous retain ignores operation_id
    assert client.post(f"{BASE}/b/memories", json={**body, "async": False}).status_code == 200


def test_a_sync_retain_over_the_limit_gets_413_pointing_to_async(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    settings = Settings(database_url=str(tmp_path / "m.db"), retain_sync_max_chars=100)
    mb = MindBank.open(settings, embedder=embedder)
    try:
        with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as c:
            before = mb.store.dump()  # type: ignore[attr-defined]
            r = c.post(f"{BASE}/b/memories", json={"items": [{"content": "x" * 60}, {"content": "y" * 60}]})
            assert r.status_code == 413
            detail = r.json()["detail"][0]
            assert detail["loc"] == ["body", "items"] and "async" in detail["msg"] and "120" in detail["msg"]
            assert mb.store.dump() == before  # type: ignore[attr-defined]
            ok = c.post(f"{BASE}/b/memories", json={"items": [{"content": "x" * 60}] * 2, "async": True})
            assert ok.status_code == 200 and ok.json()["operation_id"]
    finally:
        mb.close()


def test_the_client_retries_an_async_retain_idempotently(idle_server: str, mindbank: MindBank) -> None:
    from mindbank.client import Client, MindBankHTTPError

    op_id = str(uuid.uuid4())
    with Client(idle_server) as c:
        first = c.retain("b", "Ada restores a boat.", async_=True, operation_id=op_id)
        again = c.retain("b", "Ada restores a boat.", async_=True, operation_id=op_id)
        assert first.operation_id == again.operation_id == op_id
        with pytest.raises(MindBankHTTPError) as err:
            c.retain("b", "Something else.", async_=True, operation_id=op_id)
        assert err.value.status_code == 409
    assert mindbank.list_operations("b")[1] == 1
