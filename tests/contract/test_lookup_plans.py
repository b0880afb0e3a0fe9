"""SQLite finds rows looked up by a list of ids through the id (or rowid) index, never by walking a bank's index.

SQLite plans without table statistics; given ``bank_id = ?`` and ``id IN (...)`` it preferred the (bank, context,
moment) index once the list was long, reading every memory of the bank to keep a hundred rows (16 ms of a recall's
25 ms of keyword search at 100,000 memories). PostgreSQL plans by statistics, so only SQLite's plans are asserted;
the statements' results are covered by the tests of the features that run them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mindbank.store.sqlite.queries import Q, marks
from mindbank.store.sqlite.store import SQLiteStore

# the statements that read or write rows of memory_units by a list of ids or rowids
BY_ID = ["keyword_candidates", "memory_sources", "memory_chunk_sources", "link_preceding", "mark_consolidated",
         "update_observation", "get_memories"]  # fmt: skip


@pytest.mark.parametrize("key", BY_ID)
@pytest.mark.parametrize("ids", [1, 120])
def test_a_lookup_by_ids_never_walks_the_bank(tmp_path: Path, key: str, ids: int) -> None:
    store = SQLiteStore(str(tmp_path / "plans.db"), dimension=4)
    try:
        statement = Q[key].format(marks=marks(ids), where="1")
        with store._read() as conn:
            plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + statement, [None] * statement.count("?"))]
    finally:
        store.close()
    walks = [step for step in plan if "memory_units" in step and "(bank_id=?)" in step]
    assert walks == [], plan
