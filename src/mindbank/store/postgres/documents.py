"""Document queries of the PostgreSQL store that differ from SQLite's: deleting or retagging a document (memory
writes: stamped under the bank lock). The rest of the document, directive, webhook and administration methods are
:mod:`mindbank.store.resources`."""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q, tag_list
from mindbank.store.resources import ResourceQueries


class DocumentsMixin(PostgresBase, ResourceQueries):
    """Document listing filter, deletion and retagging over ``documents``, ``chunks`` and ``memory_units``."""

    _migrations_package = "mindbank.store.postgres"

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
