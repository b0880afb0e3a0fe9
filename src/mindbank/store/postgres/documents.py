"""Document queries of the PostgreSQL store that differ from SQLite's: the listing filter, and deleting or
retagging a document (memory writes: stamped under the bank lock). The rest of the document, directive, webhook and
administration methods are :mod:`mindbank.store.resources`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.migrate import migrations
from mindbank.store.postgres.queries import Q, filter_sql, substring_pattern, tag_list
from mindbank.store.resources import ResourceQueries

_ID_HIT = "d.id ILIKE %s ESCAPE '\\'"
_TEXT_HIT = "d.original_text ILIKE %s ESCAPE '\\'"


class DocumentsMixin(PostgresBase, ResourceQueries):
    """Document listing filters, deletion and retagging over ``documents``, ``chunks`` and ``memory_units``."""

    def _document_filter(
        self, *, query: str | None, tags: Sequence[str], tags_match: TagsMatch, time_field: str,
        start: datetime | None, end: datetime | None,
    ) -> tuple[str, list[Any], str, list[Any]]:  # fmt: skip
        where, params = filter_sql(MemoryFilter(tags=tuple(tags), tags_match=tags_match), alias="d")
        clauses, values = [where], list(params)
        if start is not None:
            clauses.append(f"d.{time_field} >= %s")
            values.append(start)
        if end is not None:
            clauses.append(f"d.{time_field} < %s")
            values.append(end)
        if not query:
            return " AND ".join(clauses), values, "false AS id_hit, false AS text_hit", []
        pattern = substring_pattern(query)
        clauses.append(f"({_ID_HIT} OR {_TEXT_HIT})")
        values += [pattern, pattern]
        return " AND ".join(clauses), values, f"{_ID_HIT} AS id_hit, {_TEXT_HIT} AS text_hit", [pattern, pattern]

    def delete_document(self, bank_id: str, document_id: str) -> int | None:
        """Delete a document with its chunks, memories and history atomically; returns how many memories went
        (None: no such document). Deleting memories is a memory write: models citing them go stale."""
        with self._tx() as conn:
            if conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is None:
                return None
            if conn.execute(Q["lock_document"], (bank_id, document_id)).fetchone() is None:
                return None
            removed = int(conn.execute(Q["delete_document_memories"], (bank_id, document_id)).rowcount)
            conn.execute(Q["delete_document_row"], (bank_id, document_id))
            if removed:
                self._stamp_memory_write(conn, bank_id)
        return removed

    def retag_document(self, bank_id: str, document_id: str, tags: Sequence[str]) -> bool:
        """Replace the tags of a document and of every fact drawn from it (a memory write: models whose scope
        the facts enter or leave go stale; the facts are consolidated again). False when there is no document."""
        with self._tx() as conn:
            if conn.execute(Q["lock_bank"], (bank_id,)).fetchone() is None:
                return False
            if conn.execute(Q["lock_document"], (bank_id, document_id)).fetchone() is None:
                return False
            stamp, _ = self._stamp_memory_write(conn, bank_id)
            conn.execute(Q["retag_document"], (tag_list(tags), stamp, bank_id, document_id))
            conn.execute(Q["retag_document_memories"], (tag_list(tags), stamp, bank_id, document_id))
            self._record_document_event(conn, bank_id, document_id, "retag", stamp)
        return True

    def schema_status(self) -> tuple[int, int]:
        """``(applied, shipped)``: the database's migration version and the newest this code ships."""
        return self.schema_version(), max(number for number, _, _ in migrations())
