"""Memory reads both stores run alike: lookups by id, listing, scope counts, tags in use and memory sources.

The statements are each backend's ``Q`` (same keys); the fragments these bodies add themselves (a document or text
condition, a tag pattern) come from the backend's :class:`~mindbank.store.dialect.Dialect`, and a list of ids is
bound through ``_bind_ids`` (one placeholder per id in SQLite, one array in PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.records import MemorySource, MemoryUnit
from mindbank.domain.scope import MemoryFilter
from mindbank.store.columns import memory_source
from mindbank.store.dialect import substring_pattern
from mindbank.store.shared import SharedQueries
from mindbank.store.unit_cache import UnitCache


class MemoryReads(SharedQueries):
    """Read-only queries over ``memory_units`` (and its chunks and documents) written once for both backends."""

    _units: UnitCache  # the memories lookups by id have read, per bank state (set by the backend)

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]:
        """The memories with ``ids`` that exist in the bank, in the order of ``ids``.

        The bank's memory state is read first; memories read before under the same state come from
        :class:`~mindbank.store.unit_cache.UnitCache`, and only the others are read (rows read after the state
        are at least as new as it, and a later write moves the state past them)."""
        with self._read() as conn:
            row = conn.execute(self._q["bank_memory_state"], (bank_id,)).fetchone()
            if row is None:  # no such bank: nothing to keep
                self._units.forget(bank_id)
                return []
            state = (row["memory_version"], row["last_memory_write_at"])
            found, missing = self._units.get(bank_id, state, ids)
            read: list[MemoryUnit] = []
            for batch in self._id_batches(missing):
                statement, id_params = self._bind_ids(self._q["get_memories"], batch)
                read += self._columns.memory_rows(conn.execute(statement, (bank_id, *id_params)).fetchall())
        if read:
            self._units.put(bank_id, state, read)
            found.update((m.id, m) for m in read)
        return [found[i] for i in ids if i in found]

    def list_memories(
        self, bank_id: str, flt: MemoryFilter, *, query: str | None, limit: int, offset: int,
        document_id: str | None = None,
    ) -> tuple[list[MemoryUnit], int]:  # fmt: skip
        """A page of memories passing ``flt`` (and containing ``query`` as a substring, case-insensitive; drawn
        from ``document_id`` when given), newest first, with the total."""
        where, params = self._filter_sql(flt, "m")
        if document_id is not None:
            where += " AND " + self._dialect.equals("m.document_id")
            params.append(document_id)
        if query:
            where += " AND " + self._dialect.contains("m.text")
            params.append(substring_pattern(query))
        with self._read() as conn:
            rows = conn.execute(
                self._q["list_memories"].format(where=where), (bank_id, *params, limit, offset)
            ).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                row = conn.execute(self._q["count_filtered"].format(where=where), (bank_id, *params)).fetchone()
                total = 0 if row is None else int(row["n"])
        return self._columns.memory_rows(rows), total

    def count_in_scope(self, bank_id: str, flt: MemoryFilter) -> dict[str, int]:
        """How many memories pass ``flt``, by fact type."""
        where, params = self._filter_sql(flt, "m")
        with self._read() as conn:
            rows = conn.execute(self._q["count_in_scope"].format(where=where), (bank_id, *params)).fetchall()
        return {r["fact_type"]: int(r["n"]) for r in rows}

    def list_tags(
        self, bank_id: str, *, source: str, pattern: str | None, limit: int, offset: int
    ) -> tuple[list[tuple[str, int]], int]:
        """Tags in use with their counts (``source`` ``memories`` or ``mental_models``), most used first.

        ``pattern`` matches case-insensitively, with ``*`` as a wildcard (no ``*``: substring match).
        """
        table = "memory_units" if source == "memories" else "mental_models"
        params: list[Any] = [bank_id]
        where = ""
        if pattern:
            where = self._dialect.tag_filter
            params.append(self._dialect.tag_pattern(pattern))
        with self._read() as conn:
            statement = self._q["list_tags"].format(table=table, where=where)
            rows = conn.execute(statement, (*params, limit, offset)).fetchall()
            if rows:
                total = int(rows[0]["total"])
            else:
                row = conn.execute(self._q["count_tags"].format(table=table, where=where), params).fetchone()
                total = 0 if row is None else int(row["n"])
        return [(r["tag"], int(r["n"])) for r in rows], total

    def count_memories(self, bank_id: str) -> int:
        """Number of memory units in the bank."""
        with self._read() as conn:
            row = conn.execute(self._q["count_memories"], (bank_id,)).fetchone()
        return 0 if row is None else int(row["n"])

    def memory_sources(self, bank_id: str, memory_ids: Sequence[str], *, documents: bool = True) -> list[MemorySource]:
        """Chunk and document text of the given memories, in the order of ``memory_ids`` (unknown ids left out);
        ``documents=False`` leaves ``document_text`` None and does not read documents."""
        found: dict[str, MemorySource] = {}
        query = self._q["memory_sources"] if documents else self._q["memory_chunk_sources"]
        with self._read() as conn:
            for batch in self._id_batches(memory_ids):
                statement, id_params = self._bind_ids(query, batch)
                for r in conn.execute(statement, (bank_id, *id_params)).fetchall():
                    found[r["id"]] = memory_source(r)
        return [found[i] for i in memory_ids if i in found]
