"""Planner statistics for a new database: ``memory_units`` analyzed once, right after its first rows are written.

PostgreSQL keeps no statistics for a table until autovacuum first analyzes it (its daemon wakes every
``autovacuum_naptime``, a minute by default). Until then the planner guesses that a bank holds a handful of rows
and answers a recall's nearest-neighbour query by reading every vector of the bank and sorting them rather than
walking the HNSW index: on a new database of 1,923 memories that took 10 ms a query (each 1.5 KB vector is fetched
from TOAST) against 0.8 ms on the index once the table had been analyzed. So the first write into a table never
analyzed (``pg_class.reltuples`` is -1 until then, PostgreSQL 14 and later) analyzes it; autovacuum keeps the
statistics from there.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

log = logging.getLogger(__name__)

_NEVER_ANALYZED = "SELECT reltuples < 0 AS never FROM pg_class WHERE oid = 'memory_units'::regclass"


def analyze_if_never(conn: psycopg.Connection[Any]) -> bool:
    """``ANALYZE memory_units`` when the table has never been analyzed (on ``conn``, in autocommit mode); returns
    whether it ran. A failure (the role may not own the table) is logged and ignored: statistics are an
    optimisation, and autovacuum gathers them a little later anyway."""
    try:
        row = conn.execute(_NEVER_ANALYZED).fetchone()
        never = bool(row and (row["never"] if isinstance(row, dict) else row[0]))
        if never:
            conn.execute("ANALYZE memory_units")
        return never
    except psycopg.Error as exc:
        log.warning("could not analyze memory_units (autovacuum will): %s", exc)
        return False
