"""Knowledge-base queries of the SQLite store: the methods are :mod:`mindbank.store.knowledge` (both backends run
them alike); SQLite adds its unique-violation error and needs no tree lock, since ``BEGIN IMMEDIATE`` makes every
write transaction the database's only writer."""

from __future__ import annotations

from typing import Any

from mindbank.store.knowledge import KnowledgeQueries
from mindbank.store.sqlite.connection import SQLiteBase


class KnowledgeMixin(SQLiteBase, KnowledgeQueries):
    """The ``knowledge_nodes`` and ``knowledge_page_vectors`` tables."""

    def _lock_knowledge_tree(self, conn: Any, bank_id: str) -> None:
        """Nothing to take: the open ``BEGIN IMMEDIATE`` transaction already excludes every other writer."""
