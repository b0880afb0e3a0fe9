"""PostgreSQL-only store behaviour: migrations (idempotent, concurrent-safe, dimension-checked) and URL routing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

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


def test_opening_with_another_dimension_indexes_that_width_too(empty_url: str) -> None:
    """One database holds any width, one per bank: a server of another model opens it and gets its width's index,
    the first width's stays."""
    import psycopg

    open_store(empty_url, dimension=8).close()
    open_store(empty_url, dimension=16).close()
    with psycopg.connect(empty_url) as conn:
        names = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memory_units'")}
    assert {"idx_memory_units_embedding_8", "idx_memory_units_embedding_16"} <= names


def test_postgres_scheme_alias_routes_to_postgres(empty_url: str) -> None:
    from mindbank.store.postgres.store import PostgresStore

    store = open_store("postgres://" + empty_url.split("://", 1)[1], dimension=8)
    try:
        assert isinstance(store, PostgresStore)
    finally:
        store.close()


def _never_analyzed(url: str) -> bool:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT reltuples < 0 FROM pg_class WHERE oid = 'memory_units'::regclass").fetchone()
        return bool(row and row[0])


def _vector_plan(url: str, bank_id: str) -> str:
    """The plan of recall's nearest-neighbour statement for ``bank_id`` (a 384-wide query vector)."""
    import psycopg

    from mindbank.store.postgres.migrate import nearest_sql
    from mindbank.store.postgres.search_queries import SEARCH_Q

    vector = "[" + ",".join(["0.05"] * 384) + "]"
    statement = nearest_sql(SEARCH_Q["vector_search"], "TRUE", 384).replace("%s", "'{}'")
    with psycopg.connect(url) as conn:
        rows = conn.execute("EXPLAIN " + statement.format(vector, bank_id, vector, 60)).fetchall()
    return "\n".join(r[0] for r in rows)


def test_the_first_retain_gives_a_new_database_planner_statistics(empty_url: str, embedder: Any) -> None:
    """Without statistics the planner takes a bank for a handful of rows and sorts every one of its vectors; the
    first write analyzes the table, so the next recall walks the HNSW index (autovacuum would, a minute later)."""
    from mindbank.config import Settings
    from mindbank.service.facade import MindBank
    from mindbank.wire.items import retain_item

    mb = MindBank.open(Settings(database_url=empty_url), embedder=embedder)
    try:
        assert _never_analyzed(empty_url)
        mb.retain("stats", [retain_item(f"Ada repaired the old piano, note {i}") for i in range(300)])
        assert not _never_analyzed(empty_url)
        assert "idx_memory_units_embedding_384" in _vector_plan(empty_url, "stats")
        mb.retain("stats", [retain_item("Bo painted the garden shed")])  # later writes leave it to autovacuum
        assert [h.memory.text for h in mb.recall("stats", "Who painted the shed?", limit=1)] == [
            "Bo painted the garden shed"
        ]
    finally:
        mb.close()
