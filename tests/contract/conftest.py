"""The store contract suite runs against every backend: add a backend to ``BACKENDS`` and it is covered.

A backend is ``(request, tmp_path) -> Store``; it may register finalizers on ``request`` (they run after the store
is closed). PostgreSQL gets a fresh database per test, cloned from a template migrated once per session; without
``MINDBANK_TEST_POSTGRES_URL`` its tests skip (fail under CI) — see ``tests/postgres_testing.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_testing import DatabaseFactory, require_postgres_url

from mindbank.store.base import Store
from mindbank.store.open import open_store

DIM = 4


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return open_store(str(tmp_path / "contract.db"), dimension=DIM)


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    databases: DatabaseFactory = request.getfixturevalue("postgres_databases")
    url = databases.create(DIM)
    request.addfinalizer(lambda: databases.drop(url))
    return open_store(url, dimension=DIM)


BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], Store]] = {"sqlite": _sqlite, "postgres": _postgres}


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[DatabaseFactory]:
    """Throwaway databases on the test PostgreSQL server (skips without one; fails under CI)."""
    factory = DatabaseFactory(require_postgres_url())
    yield factory
    factory.close()


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = BACKENDS[request.param](request, tmp_path)
    yield s
    s.close()


@pytest.fixture
def another_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A second, empty store on the backend of the test's ``store`` (another database to restore into)."""
    folder = tmp_path / "another"
    folder.mkdir()
    s = BACKENDS[request.node.callspec.params["store"]](request, folder)
    yield s
    s.close()
