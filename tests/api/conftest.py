"""API tests that must hold on both stores: ``served`` builds an app over a MindBank on SQLite or PostgreSQL (a fresh
database each, cloned from a migrated template; PostgreSQL skips without ``MINDBANK_TEST_POSTGRES_URL``), with any
settings changed, and a TestClient over it whose worker is off (so a store dump compares exactly)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from postgres_testing import DatabaseFactory, require_postgres_url

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank

BACKENDS = ("sqlite", "postgres")


@dataclass
class Served:
    """A MindBank and an HTTP client over its app (``Host: localhost``)."""

    mb: MindBank
    http: TestClient

    def dump(self) -> dict[str, Any]:
        """Every table of the store (to check that a refused request wrote nothing)."""
        return self.mb.store.dump()  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[DatabaseFactory]:
    """Throwaway databases on the test PostgreSQL server (skips without one; fails under CI)."""
    factory = DatabaseFactory(require_postgres_url())
    yield factory
    factory.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The store under test: ``sqlite`` or ``postgres``."""
    return str(request.param)


@pytest.fixture
def served(
    request: pytest.FixtureRequest, backend: str, tmp_path: Path, embedder: MiniLMEmbedder
) -> Iterator[Callable[..., Served]]:
    """``served(**settings)``: a :class:`Served` on the test's backend with those settings changed."""
    with ExitStack() as stack:

        def make(**changes: Any) -> Served:
            if backend == "postgres":
                databases: DatabaseFactory = request.getfixturevalue("postgres_databases")
                url = databases.create(embedder.dimension)
                stack.callback(databases.drop, url)
            else:
                url = str(tmp_path / f"api-{len(stack._exit_callbacks)}.db")
            settings = Settings(database_url=url, worker_poll_seconds=0.02, **changes)
            mb = MindBank.open(settings, embedder=embedder)
            stack.callback(mb.close)
            http = stack.enter_context(
                TestClient(create_app(mb, run_worker=False), base_url="http://localhost", raise_server_exceptions=False)
            )
            return Served(mb, http)

        yield make


def settle(client: TestClient, bank: str = "b", timeout: float = 60.0) -> None:
    """Wait until the bank has no operation queued or running: the consolidation a retain queued, whose observations
    reflect and the memory lists read (a refresh needs no such wait: the worker runs it after the consolidations its
    bank queued before it)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [
            op
            for status in ("pending", "processing")
            for op in client.get(f"/v1/default/banks/{bank}/operations", params={"status": status}).json()["operations"]
        ]
        if not busy:
            return
        time.sleep(0.02)
    raise AssertionError(f"operations of {bank} still running after {timeout} s")
