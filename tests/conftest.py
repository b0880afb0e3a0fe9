"""Shared fixtures: one embedder per session, a fresh database per test, an HTTP client over the app, and a live
server on 127.0.0.1 (uvicorn in a thread) for tests that drive real clients."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app, serve_in_thread
from mindbank.service.facade import MindBank

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOCOMO = SHARED / "data" / "locomo"


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """The real local MiniLM embedder, loaded once per test session."""
    return MiniLMEmbedder()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings on a fresh SQLite file; fast worker polling."""
    return Settings(database_url=str(tmp_path / "mindbank.db"), worker_poll_seconds=0.02)


@pytest.fixture
def mindbank(settings: Settings, embedder: MiniLMEmbedder) -> Iterator[MindBank]:
    """A MindBank on a fresh database, worker not started (drain with ``run_pending``)."""
    mb = MindBank.open(settings, embedder=embedder)
    yield mb
    mb.close()


@pytest.fixture
def client(mindbank: MindBank) -> Iterator[TestClient]:
    """HTTP client over the app with its in-process worker running. Its Host is ``localhost``: the app answers only
    loopback host names on its default loopback bind (DNS rebinding protection; TestClient's own is ``testserver``)."""
    with TestClient(create_app(mindbank), base_url="http://localhost") as c:
        yield c


@pytest.fixture
def conv26() -> Path:
    """Path of LoCoMo conv-26 (skips the test when the shared data set is absent)."""
    path = LOCOMO / "conv-26.json"
    if not path.exists():
        pytest.skip("shared LoCoMo data not available")
    return path


@contextmanager
def live_server(mb: MindBank, *, run_worker: bool = True) -> Iterator[str]:
    """Serve ``mb`` on a free loopback port; yields the base URL."""
    with serve_in_thread(mb, run_worker=run_worker) as url:
        yield url


@pytest.fixture
def server(mindbank: MindBank) -> Iterator[str]:
    """Base URL of a live server with its worker running."""
    with live_server(mindbank) as url:
        yield url


@pytest.fixture
def idle_server(mindbank: MindBank) -> Iterator[str]:
    """Base URL of a live server whose worker is off: queued operations stay pending."""
    with live_server(mindbank, run_worker=False) as url:
        yield url


@pytest.fixture
def live():  # type: ignore[no-untyped-def]
    """The ``live_server`` context manager, for tests that start servers with changed settings."""
    return live_server
