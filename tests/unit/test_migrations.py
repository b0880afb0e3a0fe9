"""Schema migrations: recorded in schema_version, idempotent on reopen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mindbank.store.sqlite.migrate import current_version, migrate, migrations
from mindbank.store.sqlite.store import SQLiteStore


def test_fresh_database_reaches_latest_version_and_reopen_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(str(path), dimension=4).close()
    latest = max(v for v, _, _ in migrations())
    conn = sqlite3.connect(path, isolation_level=None)
    assert current_version(conn) == latest
    assert migrate(conn) == latest
    rows = conn.execute("SELECT version, name FROM schema_version").fetchall()
    assert [r[0] for r in rows] == [v for v, _, _ in migrations()]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "banks",
        "memory_units",
        "documents",
        "chunks",
        "mental_models",
        "mental_model_history",
        "operations",
    } <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_migration_merged_below_the_database_version_is_still_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Features number their migrations from assigned ranges and merge in any order: a database that already has
    migration N gets a later-merged migration M < N too (not only the ones above its version)."""
    from mindbank.store.sqlite import migrate as module

    shipped = migrations()
    late = next(m for m in shipped if m[1].endswith("_knowledge_base.sql"))
    assert late[0] < shipped[-1][0], "the test needs a migration below the newest one"
    monkeypatch.setattr(module, "migrations", lambda: [m for m in shipped if m != late])
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    migrate(conn)
    assert "knowledge_nodes" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    monkeypatch.setattr(module, "migrations", lambda: shipped)
    assert migrate(conn) == shipped[-1][0]
    assert "knowledge_nodes" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")] == [
        v for v, _, _ in shipped
    ]
