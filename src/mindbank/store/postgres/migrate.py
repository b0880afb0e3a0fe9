"""Forward-only schema migrations for PostgreSQL: numbered ``NNNN_name.sql`` files applied in order, each in its own
transaction and recorded in ``schema_version``.

The files are templates: ``{dimension}`` is replaced by the embedding dimension the store was opened with, so the
``vector(N)`` column and its HNSW index are created at the right width. Numbers mirror the SQLite migrations (the
same change lands under the same number in both backends).

Several processes may open a fresh database at once (``mindbank serve`` plus workers): a session-level advisory
lock makes the first one migrate while the others wait and then find nothing left to do.
"""

from __future__ import annotations

import psycopg

from mindbank.store.migration_files import shipped_migrations

# pg_advisory_lock key reserved for schema migrations: the ASCII bytes of "mindbank" as a signed 64-bit integer
MIGRATION_LOCK_KEY = int.from_bytes(b"mindbank", "big")


def migrations() -> list[tuple[int, str, str]]:
    """All shipped migrations as ``(version, filename, sql template)``, ascending."""
    return shipped_migrations("mindbank.store.postgres")


# pgvector's HNSW index takes ``vector`` up to 2,000 dimensions and ``halfvec`` (2-byte floats) up to 4,000
HNSW_VECTOR_MAX = 2000
HNSW_HALFVEC_MAX = 4000
_VECTOR_DISTANCE = "m.embedding <=> %s::vector"


def embedding_index(dimension: int) -> str:
    """The statement indexing ``memory_units.embedding`` for cosine search at ``dimension``: HNSW over the column up
    to 2,000 dimensions, HNSW over its ``halfvec`` cast up to 4,000 (the column keeps full precision; only the index
    rounds), and none beyond, where searches scan the bank's vectors exactly."""
    hnsw = "WITH (m = 16, ef_construction = 64)"
    if dimension <= HNSW_VECTOR_MAX:
        return (
            f"CREATE INDEX idx_memory_units_embedding ON memory_units USING hnsw (embedding vector_cosine_ops) {hnsw};"
        )
    if dimension <= HNSW_HALFVEC_MAX:
        return (
            "CREATE INDEX idx_memory_units_embedding ON memory_units "
            f"USING hnsw ((embedding::halfvec({dimension})) halfvec_cosine_ops) {hnsw};"
        )
    return "-- no vector index: pgvector's HNSW takes at most 4,000 dimensions; searches scan exactly"


def nearest_sql(sql: str, dimension: int) -> str:
    """``sql`` with its cosine distance ``m.embedding <=> %s::vector`` spelled so that the index of
    :func:`embedding_index` serves it (the ``halfvec`` cast between 2,001 and 4,000 dimensions)."""
    if HNSW_VECTOR_MAX < dimension <= HNSW_HALFVEC_MAX:
        return sql.replace(_VECTOR_DISTANCE, f"m.embedding::halfvec({dimension}) <=> %s::halfvec({dimension})")
    return sql


def render(template: str, dimension: int) -> str:
    """Fill a migration template: ``{dimension}`` and ``{embedding_index}`` (:func:`embedding_index`).
    ``str.replace`` rather than ``format``: SQL is full of ``'{}'`` literals.

    Raises ``ValueError`` for a non-positive dimension (it would otherwise surface as an obscure SQL error).
    """
    if int(dimension) <= 0:
        raise ValueError(f"embedding dimension must be positive, got {dimension!r}")
    filled = template.replace("{embedding_index}", embedding_index(int(dimension)))
    return filled.replace("{dimension}", str(int(dimension)))


def current_version(conn: psycopg.Connection) -> int:
    """The highest applied migration, 0 for an empty database (creates ``schema_version`` if missing)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name text NOT NULL, "
        "applied_at timestamptz NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0) if row is not None else 0


def migrate(conn: psycopg.Connection, *, dimension: int) -> int:
    """Apply every shipped migration the database has not recorded yet, in ascending order; returns the resulting
    version. Not only the ones above its version: features number their migrations from assigned ranges and may be
    merged out of numeric order, so a database already at 50 still gets a 40 that arrived later.

    ``conn`` must be in autocommit mode (each file gets its own explicit transaction, together with its
    ``schema_version`` row, so a crash leaves the database at the previous version, never half-migrated).
    Raises ``psycopg.Error`` when a migration fails (that migration is rolled back).
    """
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
    try:
        version = current_version(conn)
        applied = {int(r[0]) for r in conn.execute("SELECT version FROM schema_version").fetchall()}
        for number, name, template in migrations():
            if number in applied:
                continue
            with conn.transaction():
                # no parameters: psycopg sends the whole file as one simple query, statements run in order
                conn.execute(render(template, dimension))
                conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)", (number, name))
            version = max(version, number)
        return version
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))


def embedding_dimension(conn: psycopg.Connection) -> int | None:
    """The dimension of ``memory_units.embedding`` as created (None before the first migration).

    For pgvector's ``vector(N)`` the column's type modifier is N.
    """
    row = conn.execute(
        "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass('memory_units') "
        "AND a.attname = 'embedding' AND NOT a.attisdropped"
    ).fetchone()
    return None if row is None else int(row[0])
