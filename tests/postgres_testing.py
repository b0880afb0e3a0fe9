"""PostgreSQL test databases: one migrated template per session, a fresh clone of it per test.

``MINDBANK_TEST_POSTGRES_URL`` names a database that already has the ``vector`` extension (``scripts/postgres.sh
start`` creates one and ``scripts/postgres.sh url`` prints it). Without it Postgres tests skip — except under CI
(``CI`` set), where they fail, so a CI run can never silently drop the PostgreSQL backend.

Cloning with ``CREATE DATABASE ... TEMPLATE`` copies an already-migrated schema, so no test pays for migrations;
the clone for the next test is made (and the last one dropped) in a background thread while the current test runs,
because a clone costs 0.2-0.3 s even on a tiny database.
"""

from __future__ import annotations

import os
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

ENV_URL = "MINDBANK_TEST_POSTGRES_URL"


def require_postgres_url() -> str:
    """The test cluster's URL; skips the calling test when unset (fails it when ``CI`` is set)."""
    url = os.environ.get(ENV_URL, "").strip()
    if url:
        return url
    reason = (
        f"{ENV_URL} is not set: PostgreSQL tests need a server with pgvector "
        "(scripts/postgres.sh install && scripts/postgres.sh start; export "
        f"{ENV_URL}=$(scripts/postgres.sh url)), or run `make test`"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI must exercise PostgreSQL: {reason}", pytrace=False)
    pytest.skip(reason)


def with_database(url: str, dbname: str) -> str:
    """``url`` pointing at another database on the same server."""
    return urlsplit(url)._replace(path="/" + dbname).geturl()


class DatabaseFactory:
    """Creates throwaway databases on the test server. Thread-safe; call :meth:`close` at session end."""

    def __init__(self, base_url: str) -> None:
        import psycopg  # imported here so SQLite-only runs never need the postgres extra

        self._psycopg = psycopg
        self.base_url = base_url
        self.base_name = urlsplit(base_url).path.lstrip("/") or "postgres"
        self._admin_url = with_database(base_url, "postgres")
        self._templates: dict[int, str] = {}
        self._lock = threading.Lock()
        self._created: set[str] = set()
        # one spare clone per dimension, made ahead of time by a single background thread
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-clone")
        self._spares: dict[int, Future[str]] = {}

    def _admin(self, statement: str) -> None:
        # CREATE/DROP DATABASE cannot run inside a transaction block, hence autocommit
        with self._psycopg.connect(self._admin_url, autocommit=True) as conn:
            conn.execute(statement)

    def template(self, dimension: int) -> str:
        """Name of a database migrated for ``dimension`` (created and migrated on first use)."""
        from mindbank.store.postgres.store import PostgresStore

        with self._lock:
            name = self._templates.get(dimension)
            if name is None:
                name = f"mindbank_tpl_{dimension}_{uuid.uuid4().hex[:10]}"
                # cloned from the base database so it inherits the vector extension created there
                self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self.base_name}"')
                self._templates[dimension] = name
                PostgresStore(with_database(self.base_url, name), dimension=dimension).close()
            return name

    def _clone(self, template: str) -> str:
        name = f"mindbank_t_{uuid.uuid4().hex[:16]}"
        with self._lock:  # a template may be the source of only one CREATE DATABASE at a time
            self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            self._created.add(name)
        return name

    def create(self, dimension: int) -> str:
        """URL of a new, already-migrated, empty database (the spare made in the background, if ready)."""
        template = self.template(dimension)
        spare = self._spares.pop(dimension, None)
        name = spare.result() if spare is not None else self._clone(template)
        self._spares[dimension] = self._executor.submit(self._clone, template)
        return with_database(self.base_url, name)

    def create_empty(self) -> str:
        """URL of a new database with the ``vector`` extension but no schema (for migration tests)."""
        name = self._clone(self.base_name)
        return with_database(self.base_url, name)

    def drop(self, url: str) -> None:
        """Drop a database made by :meth:`create` (terminating any connection left open).

        Runs on the background thread, after the spare clone, so the test never waits for it and the two
        database-level operations never contend with each other.
        """
        name = urlsplit(url).path.lstrip("/")

        def work() -> None:
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            with self._lock:
                self._created.discard(name)

        self._executor.submit(work)

    def close(self) -> None:
        """Drop every database this factory still owns, spares and templates included."""
        for spare in self._spares.values():
            spare.exception()  # wait for it; a failed clone owns nothing
        self._executor.shutdown(wait=True)
        self._spares.clear()
        for name in [*self._created, *self._templates.values()]:
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._created.clear()
        self._templates.clear()
