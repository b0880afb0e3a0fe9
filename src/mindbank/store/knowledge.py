"""The knowledge-base queries of both stores, written once: the tree of folders and pages, pages' settings, the
page-search vectors and the history log of the export bundle.

Like :mod:`mindbank.store.shared`, every method runs a named statement (``self._q``: each backend keys its SQL
alike) and maps rows through the backend's columns. A backend supplies two things of its own: the lock that makes
one knowledge-base writer per bank at a time (:meth:`KnowledgeQueries._lock_knowledge_tree`: SQLite's single writer
already is one, PostgreSQL takes a transaction-level advisory lock) and, in its
:class:`~mindbank.store.dialect.Dialect`, the exception its driver raises for a unique-index violation. The tree
rules themselves (unknown parent, a page as parent, a cycle) are :mod:`mindbank.domain.knowledge`; the writes check
them inside their transaction, under that lock, so two concurrent moves can never build a cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.domain.knowledge import (
    UNSET,
    KnowledgeNode,
    PageLogEntry,
    Removed,
    TreeMerge,
    Unset,
    check_move,
    check_parent,
    merge_tree,
)
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import AlreadyExists
from mindbank.store.columns import mental_model_columns
from mindbank.store.shared import SharedQueries


class KnowledgeQueries(SharedQueries):
    """The ``knowledge_nodes`` and ``knowledge_page_vectors`` tables (see the module docstring)."""

    def _lock_knowledge_tree(self, conn: Any, bank_id: str) -> None:
        """Serialise the bank's knowledge-base writers for the open transaction (the backend's)."""
        raise NotImplementedError

    def _node_params(self, node: KnowledgeNode) -> tuple[Any, ...]:
        """The ``insert_knowledge_node`` parameters of a node."""
        t = self._columns.time
        return (node.bank_id, node.id, node.kind, node.name, node.parent_id, node.mental_model_id, t(node.created_at),
                t(node.updated_at))  # fmt: skip

    def _ancestors(self, conn: Any, bank_id: str, node_id: str) -> list[KnowledgeNode]:
        rows = conn.execute(self._q["knowledge_ancestors"], (bank_id, node_id, bank_id, bank_id)).fetchall()
        return [self._columns.knowledge_node_row(r) for r in rows]

    # ---------------------------------------------------------------- reads

    def list_knowledge_nodes(self, bank_id: str) -> list[KnowledgeNode]:
        """Every node of the bank's knowledge base, in no particular order (``domain.knowledge.ordered`` sorts)."""
        return self._all(self._q["list_knowledge_nodes"], (bank_id,), self._columns.knowledge_node_row)

    def get_knowledge_node(self, bank_id: str, node_id: str) -> KnowledgeNode | None:
        """One node, or None."""
        return self._one(self._q["get_knowledge_node"], (bank_id, node_id), self._columns.knowledge_node_row)

    def knowledge_page_models(self, bank_id: str, *, detail: str) -> list[MentalModel]:
        """The mental models of every page of the bank, read at ``detail`` (``mental_model_columns``)."""
        statement = self._q["knowledge_page_models"].format(columns=mental_model_columns(detail))
        with self._read() as conn:
            return [self._columns.model_row(r) for r in conn.execute(statement, (bank_id,)).fetchall()]

    def page_vectors(self, bank_id: str) -> dict[str, tuple[str, npt.NDArray[np.float32]]]:
        """Each page's search vector with the hash of the text it was computed from: ``{model id: (hash, vector)}``."""
        with self._read() as conn:
            rows = conn.execute(self._q["page_vectors"], (bank_id,)).fetchall()
        return {r["mental_model_id"]: (r["text_hash"], np.frombuffer(bytes(r["embedding"]), dtype="<f4")) for r in rows}

    def knowledge_history_log(self, bank_id: str) -> list[PageLogEntry]:
        """Every history row of every page of the bank (versions replaced and failed refreshes), unordered."""
        with self._read() as conn:
            rows = conn.execute(self._q["knowledge_history_log"], (bank_id,)).fetchall()
        return [
            PageLogEntry(
                mental_model_id=r["mental_model_id"],
                changed_at=self._columns.load_time(r["changed_at"]),
                failed=r["kind"] == "refresh_failed",
                outcome=r["outcome"],
                failure_reason=r["reason"],
            )
            for r in rows
        ]

    # ---------------------------------------------------------------- writes

    def insert_knowledge_node(self, node: KnowledgeNode, *, model: MentalModel | None = None) -> None:
        """Insert a folder, or a page with its new mental model (one transaction; bank auto-created).

        Raises :class:`~mindbank.errors.NotFoundError` (unknown parent), :class:`~mindbank.errors.InvalidInputError`
        (the parent is a page) and :class:`AlreadyExists` (a sibling has the name)."""
        try:
            with self._tx() as conn:
                self._ensure_bank(conn, node.bank_id)
                self._lock_knowledge_tree(conn, node.bank_id)
                if node.parent_id is not None:
                    check_parent(node.parent_id, self._ancestors(conn, node.bank_id, node.parent_id))
                if model is not None:
                    conn.execute(self._q["insert_mental_model"], self._columns.model_params(model))
                conn.execute(self._q["insert_knowledge_node"], self._node_params(node))
        except self._dialect.duplicate as exc:
            raise AlreadyExists(f"a node named {node.name!r} already exists in that folder") from exc

    def update_knowledge_node(
        self,
        node: KnowledgeNode,
        *,
        name: str,
        parent_id: str | Unset | None = UNSET,
        model: MentalModel | None = None,
    ) -> KnowledgeNode | None:
        """Rename and/or move ``node`` (``parent_id`` None: to the root; UNSET: stay) and, for a page, write its
        mental model's settings (name, source query, tags, max_tokens, trigger — never its content), in one
        transaction. Returns the node as stored, or None when it no longer exists.

        Raises :class:`~mindbank.errors.NotFoundError` (unknown parent), :class:`~mindbank.errors.InvalidInputError`
        (a page as parent, or a cycle) and :class:`AlreadyExists` (a sibling has the name)."""
        try:
            with self._tx() as conn:
                self._lock_knowledge_tree(conn, node.bank_id)
                row = conn.execute(self._q["get_knowledge_node"], (node.bank_id, node.id)).fetchone()
                if row is None:
                    return None
                current = self._columns.knowledge_node_row(row)
                parent = current.parent_id if isinstance(parent_id, Unset) else parent_id
                if parent is not None and parent != current.parent_id:
                    check_move(current.id, parent, self._ancestors(conn, node.bank_id, parent))
                now = utcnow()
                conn.execute(
                    self._q["update_knowledge_node"], (name, parent, self._columns.time(now), node.bank_id, node.id)
                )
                if model is not None:
                    conn.execute(
                        self._q["update_page_settings"],
                        (
                            model.name,
                            model.source_query,
                            self._columns.tags(model.tags),
                            model.max_tokens,
                            self._columns.json(model.trigger),
                            model.bank_id,
                            model.id,
                        ),
                    )
                return replace(current, name=name, parent_id=parent, updated_at=now)
        except self._dialect.duplicate as exc:
            raise AlreadyExists(f"a node named {name!r} already exists in that folder") from exc

    def delete_knowledge_node(self, bank_id: str, node_id: str) -> Removed | None:
        """Delete a node and its whole subtree, the pages' mental models (with their history) included, in one
        transaction. Returns what went, or None when the node does not exist."""
        with self._tx() as conn:
            self._lock_knowledge_tree(conn, bank_id)
            rows = conn.execute(self._q["knowledge_subtree"], (bank_id, node_id, bank_id, bank_id)).fetchall()
            if not rows:
                return None
            conn.execute(self._q["delete_subtree_models"], (bank_id, bank_id, node_id, bank_id, bank_id))
            conn.execute(self._q["delete_knowledge_node"], (bank_id, node_id))
        kinds = [r["kind"] for r in rows]
        return Removed(folders=kinds.count("folder"), pages=kinds.count("page"))

    def _import_knowledge_tree(self, conn: Any, bank_id: str, nodes: Sequence[KnowledgeNode]) -> TreeMerge:
        """Place an imported tree (bank transfer; ``nodes`` in ``bank_id``, parents first) into the bank's tree in the
        open transaction, under the tree's lock: :func:`~mindbank.domain.knowledge.merge_tree` decides, this writes
        the nodes and renames the models of renamed pages (written by the same import). Returns the decision."""
        self._lock_knowledge_tree(conn, bank_id)
        rows = conn.execute(self._q["list_knowledge_nodes"], (bank_id,)).fetchall()
        merged = merge_tree([self._columns.knowledge_node_row(r) for r in rows], nodes)
        for node in merged.nodes:
            conn.execute(self._q["insert_knowledge_node"], self._node_params(node))
        for model_id, name in merged.renamed_pages.items():
            conn.execute(self._q["import_rename_page_model"], (name, bank_id, model_id))
        return merged

    def save_page_vectors(self, bank_id: str, vectors: Sequence[tuple[str, str, npt.NDArray[np.float32]]]) -> None:
        """Store ``(model id, text hash, vector)`` search vectors (replacing older ones); a page deleted meanwhile
        is skipped."""
        if not vectors:
            return
        with self._tx() as conn:
            for model_id, text_hash, vector in vectors:  # a bank's pages are few; one statement each
                blob = np.asarray(vector, dtype="<f4").tobytes()
                conn.execute(self._q["upsert_page_vector"], (bank_id, model_id, text_hash, blob, bank_id, model_id))
