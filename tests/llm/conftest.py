"""Shared helpers of the LLM tests: a bank with a few memories, opened with the LLMs a test wires in; the
embedding-model tests' databases on both stores and a server over a fake `/v1/embeddings`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fake_servers import FakeServer, hashed_embeddings, serving
from fastapi.testclient import TestClient
from llm_helpers import BOAT, QUERY, TAG, UUID, make_model, retain, settings_with, untouched  # noqa: F401
from postgres_testing import DatabaseFactory, require_postgres_url

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store


@pytest.fixture
def llm_settings(tmp_path: Path) -> Settings:
    """Fresh SQLite file, no automatic consolidation (no observations appear unless a test makes them)."""
    return Settings(database_url=str(tmp_path / "llm.db"), worker_poll_seconds=0.02, enable_auto_consolidation=False)


@pytest.fixture
def open_bank(llm_settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Callable[..., MindBank]]:
    """``open_bank(reflect=llm, refresh=llm, ...)``: a MindBank on the test database with those LLMs."""
    opened: list[MindBank] = []

    def make(settings: Settings | None = None, **llms: Any) -> MindBank:
        chosen = settings or llm_settings
        store = open_store(chosen.resolved_database_url, dimension=embedder.dimension)
        mb = MindBank(store=store, embedder=embedder, settings=chosen, llms=llms)
        opened.append(mb)
        return mb

    yield make
    for mb in opened:
        mb.close()


# the width of the fake /v1/embeddings vectors the embedding-model tests use
EMBED_DIM = 8


@pytest.fixture(scope="module")
def postgres_databases() -> Iterator[DatabaseFactory]:
    """Throwaway databases on the test PostgreSQL server (skips without one; fails under CI)."""
    factory = DatabaseFactory(require_postgres_url())
    yield factory
    factory.close()


@pytest.fixture(params=["sqlite", "postgres"])
def embedding_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database URL on each store, for vectors :data:`EMBED_DIM` wide."""
    if request.param == "sqlite":
        yield str(tmp_path / "embeddings.db")
        return
    databases: DatabaseFactory = request.getfixturevalue("postgres_databases")
    url = databases.create(EMBED_DIM)
    yield url
    databases.drop(url)


@pytest.fixture
def fake_embeddings() -> Iterator[FakeServer]:
    """A fake ``/v1/embeddings`` whose vectors differ per model (:func:`fake_servers.hashed_vector`)."""
    with serving(hashed_embeddings(EMBED_DIM, per_model=True)) as server:
        yield server


@pytest.fixture
def open_server(
    embedding_database: str, fake_embeddings: FakeServer
) -> Iterator[Callable[..., tuple[MindBank, TestClient]]]:
    """``open_server(model, previous=None)``: the app over the test database embedding with ``model`` (one at a
    time); ``previous``: ``MINDBANK_EMBEDDING_PREVIOUS_MODEL`` on the same fake server."""
    with ExitStack() as stack:

        def make(model: str, previous: str | None = None) -> tuple[MindBank, TestClient]:
            stack.close()
            url = fake_embeddings.url + "/v1"
            embedder = OpenAIEmbedder(model=model, base_url=url, timeout=5.0)
            settings = Settings(
                database_url=embedding_database, worker_poll_seconds=0.02, enable_auto_consolidation=False,
                embedding_base_url=url, embedding_previous_model=previous, embedding_api_key="test-key",
            )  # fmt: skip
            mb = MindBank.open(settings, embedder=embedder)
            stack.callback(mb.close)
            http = TestClient(create_app(mb, run_worker=False), base_url="http://localhost")
            stack.enter_context(http)
            return mb, http

        yield make
