"""Client methods over the knowledge base: tree, folders, pages, node update and delete, page search, export."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mindbank.client._wire import Request, Trigger, bank_path, child_path, clean, endpoint, listed, model_settings_body
from mindbank.client.models import (
    CreateKnowledgePageResponse,
    DeleteNodeResponse,
    KnowledgeBundle,
    KnowledgeNode,
    KnowledgePage,
    KnowledgeSearchResponse,
    KnowledgeTree,
)

TagsMatch = str


def _kb(bank_id: str) -> str:
    return f"{bank_path(bank_id)}/knowledge-base"


def _filters(
    tags: Sequence[str] | None, tags_match: TagsMatch | None, tag_groups: Sequence[Mapping[str, Any]] | None
) -> dict[str, Any]:
    """The tag-filter query parameters; ``tag_groups`` travels as one JSON-encoded parameter (a GET has no body)."""
    groups = json.dumps(list(tag_groups)) if tag_groups else None
    return clean({"tags": listed(tags), "tags_match": tags_match, "tag_groups": groups})


class KnowledgeBaseMethods:
    """Every knowledge-base method."""

    @endpoint
    def get_knowledge_base_tree(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] | None = None,
        tags_match: TagsMatch | None = None,
        tag_groups: Sequence[Mapping[str, Any]] | None = None,
    ) -> Request[KnowledgeTree]:
        """The tree of folders and pages, each page with ``is_stale``; a tag filter keeps matching pages."""
        params = _filters(tags, tags_match, tag_groups)
        return Request("GET", f"{_kb(bank_id)}/tree", KnowledgeTree.model_validate, params=params)

    @endpoint
    def create_knowledge_folder(
        self, bank_id: str, name: str, *, parent_id: str | None = None
    ) -> Request[KnowledgeNode]:
        """Create a folder at the root or under ``parent_id``."""
        body = clean({"name": name, "parent_id": parent_id})
        return Request("POST", f"{_kb(bank_id)}/folders", KnowledgeNode.model_validate, json=body)

    @endpoint
    def create_knowledge_page(
        self,
        bank_id: str,
        name: str,
        source_query: str,
        *,
        parent_id: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: Trigger | None = None,
    ) -> Request[CreateKnowledgePageResponse]:
        """Create a page (a mental model in the tree); ``trigger`` is merged over the page default. Its first
        refresh is queued (``operation_id``; see ``wait``)."""
        body = model_settings_body(
            name=name, source_query=source_query, parent_id=parent_id, tags=tags, max_tokens=max_tokens, trigger=trigger
        )
        return Request("POST", f"{_kb(bank_id)}/pages", CreateKnowledgePageResponse.model_validate, json=body)

    @endpoint
    def get_knowledge_page(self, bank_id: str, page_id: str) -> Request[KnowledgePage]:
        """A page as a markdown document (frontmatter + body)."""
        path = child_path(bank_id, "knowledge-base/pages", page_id)
        return Request("GET", path, KnowledgePage.model_validate)

    @endpoint
    def update_knowledge_node(
        self,
        bank_id: str,
        node_id: str,
        *,
        name: str | None = None,
        parent_id: str | None = None,
        move_to_root: bool = False,
        source_query: str | None = None,
        tags: Sequence[str] | None = None,
        max_tokens: int | None = None,
        trigger: Trigger | None = None,
    ) -> Request[KnowledgeNode]:
        """Rename, move (into ``parent_id``, or to the root with ``move_to_root``) and, for a page, change its
        settings (``trigger`` merged over the stored one). Raises ``ValueError`` for both ``parent_id`` and
        ``move_to_root``."""
        if move_to_root and parent_id is not None:
            raise ValueError("give either parent_id or move_to_root, not both")
        body = model_settings_body(
            name=name, parent_id=parent_id, source_query=source_query, tags=tags, max_tokens=max_tokens, trigger=trigger
        )
        if move_to_root:
            body["parent_id"] = None  # a present null: "move to the root"
        path = child_path(bank_id, "knowledge-base/nodes", node_id)
        return Request("PATCH", path, KnowledgeNode.model_validate, json=body)

    @endpoint
    def delete_knowledge_node(self, bank_id: str, node_id: str) -> Request[DeleteNodeResponse]:
        """Delete a node and its whole subtree (pages' mental models included)."""
        path = child_path(bank_id, "knowledge-base/nodes", node_id)
        return Request("DELETE", path, DeleteNodeResponse.model_validate)

    @endpoint
    def search_knowledge_base(
        self,
        bank_id: str,
        q: str,
        *,
        limit: int | None = None,
        tags: Sequence[str] | None = None,
        tags_match: TagsMatch | None = None,
        tag_groups: Sequence[Mapping[str, Any]] | None = None,
    ) -> Request[KnowledgeSearchResponse]:
        """Hybrid page search (BM25 + vector), best first."""
        params = {"q": q, **clean({"limit": limit}), **_filters(tags, tags_match, tag_groups)}
        return Request("GET", f"{_kb(bank_id)}/search", KnowledgeSearchResponse.model_validate, params=params)

    @endpoint
    def export_knowledge_base(self, bank_id: str) -> Request[KnowledgeBundle]:
        """The knowledge base as markdown files: ``index.md``, one file per page, ``log.md``."""
        return Request("GET", f"{_kb(bank_id)}/export", KnowledgeBundle.model_validate)
