"""Forward-only schema migrations for PostgreSQL: numbered ``NNNN_name.sql`` files applied in order, each in its own
transaction and recorded in ``schema_version``.

The files are templates: ``{dimension}`` is replaced by the embedding dimension the store was opened with (the width
of the first schema's columns, which later hold any width: migration 0099) and ``{embedding_index}`` by the HNSW
index of that width. Numbers mirror the SQLite migrations (the same change lands under the same number in both
backends).

Several processes may open a fresh database at once (``mindbank serve`` plus workers): a session-level advisory
lock makes the first one migrate while the others wait and then find nothing left to do.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import tuple_row

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
_HNSW = "WITH (m = 16, ef_construction = 64)"


def embedding_index_name(dimension: int) -> str:
    """The name of the HNSW index over the ``dimension``-wide vectors of ``memory_units``."""
    return f"idx_memory_units_embedding_{int(dimension)}"


def embedding_index(dimension: int) -> str:
    """The statement indexing the ``dimension``-wide vectors of ``memory_units.embedding`` for cosine search.

    The column holds vectors of any width (each bank's are its model's), so each width has its own partial HNSW
    index over the column cast to that width, for the rows of that width only (pgvector's way of indexing a column of
    mixed widths): over ``vector`` up to 2,000 dimensions, over a ``halfvec`` cast up to 4,000 (the column keeps full
    precision; only the index rounds), and none beyond, where searches scan the bank's vectors exactly.
    ``IF NOT EXISTS``: a width already indexed is left as it is."""
    d = int(dimension)
    rows = f"WHERE vector_dims(embedding) = {d}"
    name = embedding_index_name(d)
    if d <= HNSW_VECTOR_MAX:
        return (
            f"CREATE INDEX IF NOT EXISTS {name} ON memory_units "
            f"USING hnsw ((embedding::vector({d})) vector_cosine_ops) {_HNSW} {rows};"
        )
    if d <= HNSW_HALFVEC_MAX:
        return (
            f"CREATE INDEX IF NOT EXISTS {name} ON memory_units "
            f"USING hnsw ((embedding::halfvec({d})) halfvec_cosine_ops) {_HNSW} {rows};"
        )
    return "-- no vector index: pgvector's HNSW takes at most 4,000 dimensions; searches scan exactly"


def ensure_embedding_index(conn: psycopg.Connection[Any], dimension: int) -> bool:
    """Create the index of :func:`embedding_index` for ``dimension`` unless it exists; True when it was created.
    Looked up first, so an existing index costs no lock on ``memory_units`` (``CREATE INDEX`` takes a share lock
    even when it then finds the name taken). Runs in the caller's transaction, if any."""
    if int(dimension) > HNSW_HALFVEC_MAX:
        return False
    with conn.cursor(row_factory=tuple_row) as cur:  # whatever rows the connection makes (the pool's are dicts)
        row = cur.execute("SELECT to_regclass(%s) IS NOT NULL", (embedding_index_name(dimension),)).fetchone()
    if row is not None and row[0]:
        return False
    conn.execute(embedding_index(dimension))
    return True


def nearest_sql(statement: str, where: str, dimension: int) -> str:
    """A nearest-neighbour ``statement`` (with ``{where}`` and the cosine distance ``m.embedding <=> %s::vector``)
    for a ``dimension``-wide query, spelled so that the partial index of :func:`embedding_index` serves it: the rows
    of that width (``vector_dims``), the column cast to ``vector(dimension)`` (``halfvec`` between 2,001 and 4,000).
    The width is written into the SQL, not bound: the planner uses a partial index only for a query whose condition
    it can prove implies the index's, which takes the constant."""
    d = int(dimension)
    cast = "halfvec" if HNSW_VECTOR_MAX < d <= HNSW_HALFVEC_MAX else "vector"
    filled = statement.format(where=f"vector_dims(m.embedding) = {d} AND {where}")
    return filled.replace(_VECTOR_DISTANCE, f"m.embedding::{cast}({d}) <=> %s::{cast}({d})")


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
    Then every embedding width in use gets its vector index (:func:`index_embedding_widths`), under the same lock.
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
        index_embedding_widths(conn, dimension)
        return version
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))


def index_embedding_widths(conn: psycopg.Connection[Any], dimension: int) -> list[int]:
    """Make sure every width the database serves has its HNSW index (:func:`ensure_embedding_index`): ``dimension``
    (the store's model) and each bank's recorded model's (a bank not yet moved to the configured model is searched
    with its own). Returns the widths whose index was created now (an upgraded database's, a new model's)."""
    widths = {int(dimension)}
    widths.update(int(r[0]) for r in conn.execute("SELECT DISTINCT dimension FROM bank_embedding_models").fetchall())
    return [width for width in sorted(widths) if ensure_embedding_index(conn, width)]
