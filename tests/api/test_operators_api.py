"""Running mindbank: liveness and readiness probes and the Prometheus metrics (counters move after a retain, a
refresh and a failure; readiness fails when the database is unreachable or behind)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from postgres_testing import DatabaseFactory, require_postgres_url
from prometheus_client.parser import text_string_to_metric_families

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.service.health import READY_TIMEOUT_SECONDS
from mindbank.store.open import open_store

BASE = "/v1/default/banks/b"


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_move_after_a_retain_a_refresh_and_a_failure(client: TestClient, mindbank: MindBank) -> None:
    before = scrape(client)
    retain_route = "/v1/default/banks/{bank_id}/memories"
    assert client.post(f"{BASE}/memories", json={"items": [{"content": "Alice: I started training for the Berlin marathon.",
                                                            "tags": ["user:alice"]}]}).status_code == 200  # fmt: skip
    created = client.post(f"{BASE}/mental-models", json={"name": "Alice", "source_query": "What does Alice do?",
                                                         "tags": ["user:alice"], "id": "alice"}).json()  # fmt: skip
    assert mindbank.wait_for("b", created["operation_id"], timeout=30).status == "completed"
    schema = {"type": "object", "properties": {"sport": {"type": "string"}}}
    failing = client.post(f"{BASE}/mental-models", json={"name": "F", "source_query": "What does Alice do?", "id": "f",
                                                         "trigger": {"response_schema": schema}}).json()  # fmt: skip
    assert mindbank.wait_for("b", failing["operation_id"], timeout=30).status == "failed"  # extractive: no schema
    assert client.get(f"{BASE}/mental-models/nope").status_code == 404
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("mindbank_http_requests_total", method="POST", route=retain_route, status="200") == 1
    assert value(after, "mindbank_http_request_duration_seconds_count", method="POST", route=retain_route) >= 1
    assert moved("mindbank_http_requests_total", method="GET", route="/v1/default/banks/{bank_id}/mental-models/"
                 "{mental_model_id}", status="404") == 1  # fmt: skip
    assert moved("mindbank_events_total", type="retain.completed", status="completed") == 1
    assert moved("mindbank_refreshes_total", outcome="content_written", reason="") == 1
    failed = sum(v for (name, labels), v in after.items()
                 if name == "mindbank_refreshes_total" and ("reason", "structured_output_failed") in labels)  # fmt: skip
    assert failed == 1
    assert value(after, "mindbank_operations", type="refresh_mental_model", status="completed") == 1
    assert value(after, "mindbank_operations", type="refresh_mental_model", status="failed") == 1
    assert value(after, "mindbank_database_up") == 1 and value(after, "mindbank_workers_active") == 1
    assert ("mindbank_queue_depth", ()) in after and ("mindbank_queue_oldest_pending_age_seconds", ()) in after


def test_queue_gauges_read_the_database(mindbank: MindBank) -> None:
    mindbank.stop_worker()
    for _ in range(3):
        mindbank.retain("b", [RetainItem(content="Bob bakes bread.")], async_=True)
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost") as c:
        samples = scrape(c)
    assert value(samples, "mindbank_queue_depth") == 3
    assert value(samples, "mindbank_operations", type="batch_retain", status="pending") == 3
    assert value(samples, "mindbank_queue_oldest_pending_age_seconds") > 0


def test_liveness_and_readiness(client: TestClient, mindbank: MindBank) -> None:
    live = client.get("/health/live").json()
    assert live["status"] == "alive" and live["uptime_seconds"] >= 0 and live["version"]
    r = client.get("/health/ready")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ready" and body["database"] == "connected" and body["migrations_applied"] is True
    assert body["schema_version"] == body["expected_schema_version"] >= 50
    assert body["workers"]["in_process"] is True and body["workers"]["active"] == 1


@pytest.fixture
def api_only(mindbank: MindBank) -> Iterator[TestClient]:
    """An API-only process over ``mindbank`` (no worker: readiness must not depend on one)."""
    with TestClient(create_app(mindbank, run_worker=False), base_url="http://localhost") as c:
        yield c


def test_readiness_without_a_worker_and_with_an_old_schema(api_only: TestClient, mindbank: MindBank) -> None:
    body = api_only.get("/health/ready").json()
    assert body["status"] == "ready" and body["workers"] == {"active": 0, "last_heartbeat_at": None,
                                                             "in_process": False}  # fmt: skip
    with mindbank.store._tx() as conn:  # type: ignore[attr-defined]
        conn.execute("DELETE FROM schema_version WHERE version = (SELECT MAX(version) FROM schema_version)")
    r = api_only.get("/health/ready")
    assert r.status_code == 503 and r.json()["migrations_applied"] is False


def test_readiness_fails_when_the_database_is_unreachable(api_only: TestClient, mindbank: MindBank) -> None:
    assert api_only.get("/health/ready").status_code == 200
    path = Path(mindbank.store.path)  # type: ignore[attr-defined]
    mindbank.store.close()
    path.rename(path.with_name("moved.db"))
    path.mkdir()  # the database's place now holds something SQLite cannot open (as when a volume is gone)
    r = api_only.get("/health/ready")
    assert r.status_code == 503
    assert r.json()["status"] == "not_ready" and r.json()["database"] == "unreachable" and r.json()["error"]
    assert api_only.get("/health/live").status_code == 200  # liveness reads no database
    assert value(scrape(api_only), "mindbank_database_up") == 0


def test_readiness_fails_when_postgres_is_gone(embedder: MiniLMEmbedder, tmp_path: Path) -> None:
    factory = DatabaseFactory(require_postgres_url())
    url = factory.create(embedder.dimension)
    mb = MindBank(store=open_store(url, dimension=embedder.dimension), embedder=embedder,
                  settings=Settings(database_url=url))  # fmt: skip
    try:
        with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as c:
            assert c.get("/health/ready").status_code == 200
            factory.drop(url)  # terminates the pool's connections; reconnecting finds no database
            factory.close()
            started = time.monotonic()
            r = c.get("/health/ready")
            assert r.status_code == 503 and r.json()["database"] == "unreachable"
            assert time.monotonic() - started < READY_TIMEOUT_SECONDS + 3  # a hung database fails fast
    finally:
        mb.store._pool.close(timeout=0)  # type: ignore[attr-defined]


def test_probes_are_open_and_metrics_guarded_by_the_api_key(mindbank: MindBank, settings: Settings) -> None:
    guarded = MindBank(store=mindbank.store, embedder=mindbank.embedder, settings=replace(settings, api_key="k"))
    with TestClient(create_app(guarded, run_worker=False), base_url="http://localhost") as c:
        assert c.get("/health/live").status_code == 200 and c.get("/health/ready").status_code == 200
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers={"Authorization": "Bearer k"}).status_code == 200
