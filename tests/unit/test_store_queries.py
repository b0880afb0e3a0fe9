"""The two stores' named SQL statements stay keyed alike.

``store/sqlite/queries.py`` and ``store/postgres/queries.py`` name a statement after the job it does, with the same
key in both backends wherever both do that job. A key added to one backend only fails here unless it goes on the
allow-list of its backend below, with the reason the other backend has no such statement. The methods both stores run
alike (``store/shared.py``) read only statements both backends have.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from mindbank.store import shared
from mindbank.store.postgres import queries as postgres
from mindbank.store.sqlite import queries as sqlite

# statements only the SQLite store runs, and why PostgreSQL has no counterpart
SQLITE_ONLY = {
    # connection set-up and explicit transactions (psycopg's pool configures sessions; conn.transaction() wraps)
    "pragma_foreign_keys",
    "pragma_busy_timeout",
    "pragma_journal_wal",
    "pragma_synchronous",
    "pragma_reader_cache",
    "begin",
    "commit",
    "rollback",
    # the write stamp is read, advanced in Python, then written by stamp_bank (PostgreSQL: stamp_bank alone)
    "bank_stamp",
    # the in-process vector index (PostgreSQL searches pgvector's HNSW index in SQL)
    "bank_memory_version",
    "index_rows",
    "document_memory_ids",
    "memory_index_fields",
    # consolidation's neighbours: the in-process index, with the pending facts masked out by id
    "pending_fact_ids",
    # FTS5: rank the index alone, then keep the candidates in the bank and filter; term pruning by document count
    "keyword_ranked",
    "keyword_candidates",
    "max_memory_seq",
    "term_documents",
    # claiming picks then marks under the single writer (PostgreSQL: one claim_operation statement)
    "claim_candidate",
    # dump(): PostgreSQL composes SELECT * FROM <table> with psycopg.sql.Identifier
    "dump_table",
    # a bank snapshot is an explicit read transaction (PostgreSQL: conn.transaction() and set_snapshot)
    "begin_snapshot",
    "end_snapshot",
}

# statements only the PostgreSQL store runs, and why SQLite has no counterpart
POSTGRES_ONLY = {
    # the pgvector version (SQLite: no extension)
    "vector_version",
    # consolidation's neighbours through HNSW (SQLite: the in-process index and pending_fact_ids)
    "consolidated_neighbours",
    # row and advisory locks: SQLite's BEGIN IMMEDIATE already serialises every writer
    "lock_bank",
    "lock_coalesce_key",
    "lock_knowledge_tree",
    # vector search in SQL with transaction-local HNSW settings (SQLite: the in-process vector index)
    "set_ef_search",
    "set_ef_search_iterative",
    "vector_search",
    "memory_vectors",
    # the snapshot transaction's isolation (SQLite: a WAL read transaction is a snapshot already)
    "set_snapshot",
}

# format slots only SQLite statements take: {marks} is the ``?,?,…`` of an IN list where PostgreSQL binds one array,
# {key} the staleness scope's position, which PostgreSQL binds as a parameter
SQLITE_SLOTS = {"marks", "key"}

_SLOT = re.compile(r"\{([a-z_]+)\}")
_USE = re.compile(r"""(?:\bQ|\._q)\[["']([a-z_]+)["']\]""")


def _keys_read(path: Path) -> set[str]:
    """Every statement key the file reads as ``Q["key"]`` or ``self._q["key"]``."""
    return set(_USE.findall(path.read_text(encoding="utf-8")))


# the modules of methods both backends run (store/shared.py, store/resources.py, ...): every module of store/ itself
NEUTRAL = sorted(Path(shared.__file__ or "").parent.glob("*.py"))


def _uses(module: ModuleType) -> set[str]:
    """Every key the backend runs: read by its own package or by the methods both backends share."""
    folder = Path(module.__file__ or "").parent
    # the backend's own modules, and the modules of store/ both backends share (shared.py, api_keys.py...)
    return {key for path in [*folder.glob("*.py"), *folder.parent.glob("*.py")] for key in _keys_read(path)}


def test_shared_keys_match() -> None:
    only_sqlite = set(sqlite.Q) - set(postgres.Q)
    only_postgres = set(postgres.Q) - set(sqlite.Q)
    assert only_sqlite == SQLITE_ONLY, (
        f"SQLite-only keys not allowed: {sorted(only_sqlite - SQLITE_ONLY)}; "
        f"allowed but now shared or gone: {sorted(SQLITE_ONLY - only_sqlite)}"
    )
    assert only_postgres == POSTGRES_ONLY, (
        f"PostgreSQL-only keys not allowed: {sorted(only_postgres - POSTGRES_ONLY)}; "
        f"allowed but now shared or gone: {sorted(POSTGRES_ONLY - only_postgres)}"
    )


def test_the_backends_share_most_statements() -> None:
    # a guard against "fixing" the test above by renaming everything apart
    assert len(set(sqlite.Q) & set(postgres.Q)) >= 70


@pytest.mark.parametrize("module", [sqlite, postgres], ids=["sqlite", "postgres"])
def test_every_statement_is_used(module: ModuleType) -> None:
    unused = set(module.Q) - _uses(module)
    assert not unused, f"{module.__name__} has statements no store code runs: {sorted(unused)}"
    unknown = _uses(module) - set(module.Q)
    assert not unknown, f"{module.__name__} store code reads missing statements: {sorted(unknown)}"


def test_shared_methods_read_statements_both_backends_have() -> None:
    keys = _keys_read(Path(shared.__file__ or ""))
    assert keys, "store/shared.py reads its statements as self._q[...]"
    keys |= {key for path in NEUTRAL for key in _keys_read(path)}
    assert keys <= set(sqlite.Q) & set(postgres.Q), sorted(keys - (set(sqlite.Q) & set(postgres.Q)))


@pytest.mark.parametrize("key", sorted(set(sqlite.Q) & set(postgres.Q)))
def test_shared_statements_take_the_same_slots(key: str) -> None:
    sqlite_slots = set(_SLOT.findall(sqlite.Q[key])) - SQLITE_SLOTS
    assert sqlite_slots == set(_SLOT.findall(postgres.Q[key])), key


def test_placeholder_styles() -> None:
    assert not [k for k, s in sqlite.Q.items() if "%s" in s], "SQLite statements bind with ?"
    assert not [k for k, s in postgres.Q.items() if "?" in s], "PostgreSQL statements bind with %s"
