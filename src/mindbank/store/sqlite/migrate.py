"""Forward-only schema migrations for SQLite: numbered ``NNNN_name.sql`` files applied in order, each in its own
transaction and recorded in ``schema_version``."""

from __future__ import annotations

import sqlite3

from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.store.migration_files import shipped_migrations


def migrations() -> list[tuple[int, str, str]]:
    """All shipped migrations as ``(version, filename, sql)``, ascending."""
    return shipped_migrations("mindbank.store.sqlite")


def current_version(conn: sqlite3.Connection) -> int:
    """The highest applied migration, 0 for an empty database."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every shipped migration the database has not recorded yet, in ascending order; returns the resulting
    version. Not only the ones above its version: features number their migrations from assigned ranges and may be
    merged out of numeric order, so a database already at 50 still gets a 40 that arrived later.

    Each file runs in one transaction together with its ``schema_version`` row, so a crash leaves the database at
    the previous version, never half-migrated.
    """
    version = current_version(conn)
    applied = {int(r[0]) for r in conn.execute("SELECT version FROM schema_version")}
    for number, name, sql in migrations():
        if number in applied:
            continue
        # executescript would commit implicitly; run statements ourselves inside one explicit transaction
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, to_iso(utcnow())),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version = max(version, number)
    return version


def _statements(sql: str) -> list[str]:
    """Split a script into complete statements (triggers contain inner semicolons)."""
    out, buf = [], ""
    for line in sql.splitlines(keepends=True):
        if not buf and line.lstrip().startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
