"""Schema migrations: recorded in schema_version, idempotent on reopen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
