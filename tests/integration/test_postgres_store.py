"""PostgreSQL-only store behaviour: migrations (idempotent, concurrent-safe, dimension-checked) and URL routing."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from postgres_testing import DatabaseFactory

from mindbank.store.open import open_store


@pytest.fixture
def empty_url(postgres_databases: DatabaseFactory) -> Iterator[str]:
    url = postgres_databases.create_empty()
    yield url
    postgres_databases.drop(url)


def _versions(url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_concurrent_opens_migrate_once_and_reopen_is_a_no_op(empty_url: str) -> None:
    from mindbank.store.postgres.migrate import migrations
    from mindbank.store.postgres.store import PostgresStore

    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(empty_url, dimension=8).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    expected = [v for v, _, _ in migrations()]
    assert _versions(empty_url) == expected
    store = open_store(empty_url, dimension=8)
    assert isinstance(store, PostgresStore)
    store.close()
    assert _versions(empty_url) == expected


def test_opening_with_another_dimension_fails_clearly(empty_url: str) -> None:
    open_store(empty_url, dimension=8).close()
    with pytest.raises(ValueError, match="8-dimensional"):
        open_store(empty_url, dimension=16)


def test_postgres_scheme_alias_routes_to_postgres(empty_url: str) -> None:
    from mindbank.store.postgres.store import PostgresStore

    store = open_store("postgres://" + empty_url.split("://", 1)[1], dimension=8)
    try:
        assert isinstance(store, PostgresStore)
    finally:
        store.close()
