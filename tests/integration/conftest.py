"""Integration tests against real services. PostgreSQL ones skip without ``MINDBANK_TEST_POSTGRES_URL`` (fail under
CI) — see ``tests/postgres_testing.py``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres_testing import DatabaseFactory, require_postgres_url


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[DatabaseFactory]:
    """Throwaway databases on the test PostgreSQL server (skips without one; fails under CI)."""
    factory = DatabaseFactory(require_postgres_url())
    yield factory
    factory.close()
