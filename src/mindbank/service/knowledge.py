"""The knowledge base: folders and pages over mental models (reference facts "Knowledge pages"; HTTP
``/knowledge-base/...``).

A page is a mental model placed in the tree: creating one creates the model (with the page default trigger and
``max_tokens`` 4096) and queues its first refresh; its staleness is the one rule of
:mod:`mindbank.engine.refresh.staleness`, read for the whole tree at once. Deleting a folder deletes its subtree, the
pages' mental models included. Page search is hybrid (BM25 + vector, :mod:`mindbank.engine.knowledge_search`) over
vectors kept in the store and recomputed only for pages whose text changed since.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from mindbank.domain.knowledge import (
    PAGE_DEFAULT_MAX_TOKENS,
    UNSET,
    KnowledgeNode,
    KnowledgeTree,
    Removed,
    Unset,
    bundle,
    check_name,
    kept_nodes,
    new_node_id,
    page_default_trigger,
    search_text,
    vector_text,
)
from mindbank.domain.records import MentalModel
from mindbank.domain.tags import TagsMatch, groups_match, matches, normalize_tags, validate_tag_groups
from mindbank.domain.timeutil import utcnow
from mindbank.domain.trigger import merge_trigger
from mindbank.engine.knowledge_search import rank_pages
from mindbank.engine.refresh.staleness import mark_stale
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore, ServiceState, found_in_bank
from mindbank.service.mental_models import MentalModelsService, patched_model
from mindbank.store.base import AlreadyExists

PAGE_FIELDS = ("source_query", "tags", "max_tokens", "trigger")


def tag_groups_arg(raw: Any) -> list[dict[str, Any]] | None:
    """A ``tag_groups`` filter argument checked (None or an empty list: no filter). Raises
    :class:`InvalidInputError` naming ``tag_groups``."""
    if not raw:
        return None
    try:
        return validate_tag_groups(raw, allow_fuzzy=False)
    except ValueError as exc:
        raise InvalidInputError("tag_groups", str(exc)) from exc


class KnowledgeService(ServiceCore):
    """The knowledge base: a tree of folders and pages, each page a mental model of ``mental_models``."""

    def __init__(self, state: ServiceState, *, mental_models: MentalModelsService) -> None:
        super().__init__(state)
        self.mental_models = mental_models

    # ---------------------------------------------------------------- reads

    def knowledge_tree(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        tag_groups: list[dict[str, Any]] | None = None,
    ) -> KnowledgeTree:
        """The bank's tree with every page's mental model (``is_stale`` from the staleness rule, one batched read for
        all pages). With ``tags`` / ``tag_groups`` (AND-ed) only the matching pages are kept, with the folders on
        their path. Raises :class:`NotFoundError` for an unknown bank, :class:`InvalidInputError` for bad groups."""
        self._require_bank(bank_id)
        groups = tag_groups_arg(tag_groups)
        nodes = self.store.list_knowledge_nodes(bank_id)
        models = {m.id: m for m in self.store.knowledge_page_models(bank_id, detail="metadata")}
        mark_stale(self.store, bank_id, list(models.values()))
        for model in models.values():
            model.is_knowledge_page = True
        matching = self._matching_pages(nodes, models, tags, tags_match, groups)
        return KnowledgeTree(kept_nodes(nodes, matching), models)

    get_knowledge_base_tree = knowledge_tree  # the client's (and the reference's) name

    def get_knowledge_page(self, bank_id: str, page_id: str) -> tuple[KnowledgeNode, MentalModel]:
        """A page's node and mental model (full detail). Raises :class:`NotFoundError` (no such page)."""
        node = self.store.get_knowledge_node(bank_id, page_id)
        if node is None or node.mental_model_id is None:
            raise NotFoundError(f"Knowledge page '{page_id}' not found in bank '{bank_id}'")
        return node, self.mental_models.get_mental_model(bank_id, node.mental_model_id)

    def get_knowledge_node(self, bank_id: str, node_id: str) -> tuple[KnowledgeNode, MentalModel | None]:
        """A node and, for a page, its mental model (with ``is_stale``). Raises :class:`NotFoundError`."""
        node = found_in_bank(self.store.get_knowledge_node(bank_id, node_id), "Knowledge node", node_id, bank_id)
        model = (
            None if node.mental_model_id is None else self.mental_models.get_mental_model(bank_id, node.mental_model_id)
        )
        return node, model

    def search_knowledge_base(
        self,
        bank_id: str,
        q: str,
        *,
        limit: int = 10,
        tags: Sequence[str] = (),
        tags_match: TagsMatch = "any",
        tag_groups: list[dict[str, Any]] | None = None,
    ) -> tuple[list[tuple[KnowledgeNode, MentalModel, float]], int]:
        """Pages ranked by hybrid search (BM25 + vector, reciprocal-rank fused, score 0..1), at most ``limit``, and
        how many matched. Tag filters as in :meth:`knowledge_tree`. Raises :class:`NotFoundError` (bank) and
        :class:`InvalidInputError` (blank ``q``, bad groups)."""
        if not q.strip():
            raise InvalidInputError("q", "must not be blank")
        self._require_bank(bank_id)
        groups = tag_groups_arg(tag_groups)
        nodes = [n for n in self.store.list_knowledge_nodes(bank_id) if n.mental_model_id is not None]
        models = {m.id: m for m in self.store.knowledge_page_models(bank_id, detail="content")}
        matching = self._matching_pages(nodes, models, tags, tags_match, groups)
        pages = {
            n.mental_model_id: n
            for n in nodes
            if n.mental_model_id in models and (matching is None or n.id in matching)
        }
        texts = {model_id: search_text(node, models[model_id]) for model_id, node in pages.items()}
        vectors = self._page_vectors(bank_id, {m: vector_text(node, models[m]) for m, node in pages.items()})
        ranked = rank_pages(q, self.embedder.embed([q])[0], texts, vectors)
        hits = [(pages[model_id], models[model_id], score) for model_id, score in ranked]
        return hits[:limit], len(hits)

    def export_knowledge_base(self, bank_id: str) -> list[tuple[str, str]]:
        """The knowledge base as a markdown bundle of ``(path, content)`` files: ``index.md``, one file per page,
        ``log.md``. Raises :class:`NotFoundError` for an unknown bank."""
        self._require_bank(bank_id)
        nodes = self.store.list_knowledge_nodes(bank_id)
        models = {m.id: m for m in self.store.knowledge_page_models(bank_id, detail="content")}
        return bundle(nodes, models, self.store.knowledge_history_log(bank_id))

    # ---------------------------------------------------------------- writes

    def create_knowledge_folder(self, bank_id: str, name: str, *, parent_id: str | None = None) -> KnowledgeNode:
        """Create a folder (bank auto-created) at the root or under ``parent_id``. Raises :class:`InvalidInputError`
        (blank name, a page as parent), :class:`NotFoundError` (unknown parent), :class:`ConflictError` (a sibling
        has the name)."""
        now = utcnow()
        node = KnowledgeNode(
            id=new_node_id(), bank_id=bank_id, kind="folder", name=check_name(name), parent_id=parent_id,
            mental_model_id=None, created_at=now, updated_at=now,
        )  # fmt: skip
        self._insert_node(node)
        return node

    def create_knowledge_page(
        self,
        bank_id: str,
        *,
        name: str,
        source_query: str,
        parent_id: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: dict[str, Any] | None = None,
    ) -> tuple[KnowledgeNode, str, str]:
        """Create a page: its mental model (trigger = ``trigger`` merged over the page default — the bank's
        ``knowledge_page_default_trigger``, else the environment's, else the reference's; ``max_tokens`` default
        4096) and its node, in one transaction, then queue the first refresh. Returns ``(node, mental model id,
        operation id)``. Raises as :meth:`create_knowledge_folder`, and :class:`InvalidInputError` for a bad
        source query, max_tokens or trigger."""
        base = self.resolved_setting(bank_id, "knowledge_page_default_trigger")
        try:
            merged = merge_trigger(page_default_trigger(base), trigger or {})
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidInputError("trigger", f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from exc
        except ValueError as exc:  # a bad bank or environment default
            raise InvalidInputError("trigger", f"knowledge_page_default_trigger: {exc}") from exc
        model = self.mental_models.new_model(
            bank_id, name=check_name(name), source_query=source_query, id=None, tags=tags or (),
            max_tokens=PAGE_DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens, trigger=merged,
        )  # fmt: skip
        node = KnowledgeNode(
            id=new_node_id(), bank_id=bank_id, kind="page", name=model.name, parent_id=parent_id,
            mental_model_id=model.id, created_at=model.created_at, updated_at=model.created_at,
        )  # fmt: skip
        self._insert_node(node, model)
        operation_id = self._submit(bank_id, "refresh_mental_model", {"mental_model_id": model.id}, model.id)
        return node, model.id, operation_id

    def update_knowledge_node(
        self,
        bank_id: str,
        node_id: str,
        *,
        name: str | None = None,
        parent_id: str | Unset | None = UNSET,
        source_query: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: dict[str, Any] | None = None,
    ) -> tuple[KnowledgeNode, MentalModel | None]:
        """Rename, move (``parent_id`` None: to the root; UNSET: stay) and, for a page, change its settings (trigger
        merged over the stored one), all in one transaction; a page's name is its mental model's name. A new
        ``source_query`` queues a refresh (the page is rebuilt for the new question). Returns the node and, for a
        page, its model. Raises :class:`NotFoundError` (node or parent), :class:`InvalidInputError` (blank name, a
        page setting on a folder, a page as parent, a cycle, bad settings), :class:`ConflictError` (name taken)."""
        node = found_in_bank(self.store.get_knowledge_node(bank_id, node_id), "Knowledge node", node_id, bank_id)
        given = {"source_query": source_query, "tags": tags, "max_tokens": max_tokens, "trigger": trigger}
        settings = {k: v for k, v in given.items() if v is not None}
        new_name = node.name if name is None else check_name(name)
        patched: MentalModel | None = None
        if node.mental_model_id is None:
            if settings:
                field = next(iter(settings))
                raise InvalidInputError(field, "only pages have it; this node is a folder")
        elif name is not None or settings:
            current = self.mental_models.get_mental_model(bank_id, node.mental_model_id, with_staleness=False)
            patched = patched_model(
                current, name=new_name if name is not None else None, source_query=source_query, tags=tags,
                max_tokens=max_tokens, trigger=trigger, limits=self.limits,
            )  # fmt: skip
        try:
            stored = self.store.update_knowledge_node(node, name=new_name, parent_id=parent_id, model=patched)
        except AlreadyExists as exc:
            raise ConflictError(str(exc)) from exc
        if stored is None:
            raise NotFoundError(f"Knowledge node '{node_id}' not found in bank '{bank_id}'")
        if stored.mental_model_id is None:
            return stored, None
        if patched is not None and source_query is not None and patched.source_query != current.source_query:
            self.mental_models.refresh_mental_model(bank_id, stored.mental_model_id)
        return stored, self.mental_models.get_mental_model(bank_id, stored.mental_model_id)

    def delete_knowledge_node(self, bank_id: str, node_id: str) -> Removed:
        """Delete a node and its whole subtree, the pages' mental models (and their history) included. Returns how
        many folders and pages went. Raises :class:`NotFoundError`."""
        return found_in_bank(self.store.delete_knowledge_node(bank_id, node_id), "Knowledge node", node_id, bank_id)

    # ---------------------------------------------------------------- helpers

    def _insert_node(self, node: KnowledgeNode, model: MentalModel | None = None) -> None:
        try:
            self.store.insert_knowledge_node(node, model=model)
        except AlreadyExists as exc:
            raise ConflictError(str(exc)) from exc

    @staticmethod
    def _matching_pages(
        nodes: Sequence[KnowledgeNode],
        models: dict[str, MentalModel],
        tags: Sequence[str],
        tags_match: TagsMatch,
        groups: list[dict[str, Any]] | None,
    ) -> set[str] | None:
        """Ids of the page nodes whose model's tags pass the filter (recall's rules), None when there is none."""
        wanted = normalize_tags(tags)
        if not wanted and not groups and tags_match != "exact":
            return None
        out = set()
        for node in nodes:
            model = models.get(node.mental_model_id or "")
            if model is not None and matches(model.tags, wanted, tags_match) and groups_match(model.tags, groups or []):
                out.add(node.id)
        return out

    def _page_vectors(self, bank_id: str, texts: dict[str, str]) -> dict[str, npt.NDArray[np.float32]]:
        """Search vectors of the pages in ``texts`` (``{model id: text}``): the stored ones whose text is unchanged,
        the others embedded now in one batch and stored. The hash covers the embedding model too: a vector another
        model made is never served (it is embedded again with this one)."""
        stored = self.store.page_vectors(bank_id)
        model = f"{self.embedder.name}/{self.embedder.dimension}\n"
        hashes = {model_id: hashlib.sha256((model + text).encode()).hexdigest() for model_id, text in texts.items()}
        stale = [model_id for model_id, h in hashes.items() if stored.get(model_id, ("", None))[0] != h]
        vectors = {model_id: stored[model_id][1] for model_id in hashes if model_id not in stale}
        if stale:
            fresh = self.embedder.embed([texts[model_id] for model_id in stale])
            vectors.update(zip(stale, fresh, strict=True))
            self.store.save_page_vectors(bank_id, [(m, hashes[m], vectors[m]) for m in stale])
        return vectors
