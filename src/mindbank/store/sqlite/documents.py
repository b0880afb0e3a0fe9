"""Document queries of the SQLite store that differ from PostgreSQL's: deleting or retagging a document (memory
writes: stamped under the writer lock and applied to this process's vector index). The rest of the document,
directive, webhook and administration methods are :mod:`mindbank.store.resources`."""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.store.resources import ResourceQueries
from mindbank.store.sqlite.connection import SQLiteBase
from mindbank.store.sqlite.queries import Q
from mindbank.store.sqlite.rows import COLUMNS


class DocumentsMixin(SQLiteBase, ResourceQueries):
    """Document listing filter, deletion and retagging over ``documents``, ``chunks`` and ``memory_units``."""

    _migrations_package = "mindbank.store.sqlite"

    def delete_document(self, bank_id: str, document_id: str) -> int | None:
        """Delete a document with its chunks, memories and history atomically; returns how many memories went
        (None: no such document). Deleting memories is a memory write: models citing them go stale."""
        with self._tx() as conn:
            if conn.execute(Q["lock_document"], (bank_id, document_id)).fetchone() is None:
                return None
            removed = [r[0] for r in conn.execute(Q["document_memory_ids"], (bank_id, document_id))]
            conn.execute(Q["delete_document_memories"], (bank_id, document_id))
            conn.execute(Q["delete_document_row"], (bank_id, document_id))
            if removed:
                _, version = self._stamp_memory_write(conn, bank_id)
                self._advance_index(bank_id, version, [], removed)
        return len(removed)

    def retag_document(self, bank_id: str, document_id: str, tags: Sequence[str]) -> bool:
        """Replace the tags of a document and of every fact drawn from it (a memory write: models whose scope
        the facts enter or leave go stale; the facts are consolidated again). False when there is no document."""
        with self._tx() as conn:
            if conn.execute(Q["lock_document"], (bank_id, document_id)).fetchone() is None:
                return False
            stamp, _ = self._stamp_memory_write(conn, bank_id)
            conn.execute(Q["retag_document"], (COLUMNS.tags(tags), stamp, bank_id, document_id))
            conn.execute(Q["retag_document_memories"], (COLUMNS.tags(tags), stamp, bank_id, document_id))
            self._record_document_event(conn, bank_id, document_id, "retag", stamp)
            with self._index_lock:  # the cached index holds the old tags: rebuilt on the next search
                self._indexes.pop(bank_id, None)
        return True
