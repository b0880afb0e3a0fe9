"""Knowledge-base queries of the PostgreSQL store: the methods are :mod:`mindbank.store.knowledge` (both backends
run them alike); PostgreSQL adds its unique-violation error and a transaction-level advisory lock per bank, so the
parent and cycle checks of one knowledge-base write and the write itself see one tree across processes."""

from __future__ import annotations

from typing import Any

from mindbank.store.knowledge import KnowledgeQueries
from mindbank.store.postgres.connection import PostgresBase
from mindbank.store.postgres.queries import Q


class KnowledgeMixin(PostgresBase, KnowledgeQueries):
    """The ``knowledge_nodes`` and ``knowledge_page_vectors`` tables."""

    def _lock_knowledge_tree(self, conn: Any, bank_id: str) -> None:
        """Take the bank's knowledge-base advisory lock (released when the transaction ends)."""
        conn.execute(Q["lock_knowledge_tree"], (bank_id,))
