"""Knowledge-base tools: the tree of folders and pages (a page is a mental model), page search and reading,
creating, renaming, moving and deleting nodes, and the markdown export. Shapes are the HTTP API's
(:mod:`mindbank.wire.knowledge`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindbank.domain import fields
from mindbank.domain.knowledge import UNSET
from mindbank.domain.limits import MAX_ID_CHARS, NO_CONTROL_PATTERN, MaxTokens
from mindbank.domain.tags import TagsMatch
from mindbank.mcp.tools.common import BankId, FilterTags, TagList, ToolFamily, ToolInputError, TriggerInput
from mindbank.wire.knowledge import (
    bundle_response,
    deleted_response,
    knowledge_node,
    knowledge_page,
    knowledge_tree,
    search_response,
)

NodeId = Annotated[
    str,
    Field(
        description="Id of a knowledge-base node (folder or page).",
        min_length=1,
        max_length=MAX_ID_CHARS,
        pattern=NO_CONTROL_PATTERN,
    ),
]
ParentId = Annotated[str | None, Field(description="Id of the parent folder (omit for the root).")]
FilterMatch = Annotated[TagsMatch, Field(description="How `tags` match a page's tags (any/all also keep untagged).")]
FilterGroups = Annotated[
    list[dict[str, Any]] | None,
    Field(description="Compound tag filter, recall's tag_groups shape (AND-ed with tags)."),
]


class KnowledgeBaseTools(ToolFamily):
    """Knowledge-base tools: tree, search, page, folder and page creation, node update and delete, export."""

    TOOLS = (
        "get_knowledge_base_tree",
        "search_knowledge_base",
        "get_knowledge_page",
        "create_knowledge_folder",
        "create_knowledge_page",
        "update_knowledge_node",
        "delete_knowledge_node",
        "export_knowledge_base",
    )
    READS = frozenset(
        {"get_knowledge_base_tree", "search_knowledge_base", "get_knowledge_page", "export_knowledge_base"}
    )

    def get_knowledge_base_tree(
        self,
        tags: FilterTags = None,
        tags_match: FilterMatch = "any",
        tag_groups: FilterGroups = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """The knowledge base as a tree of folders and pages (a page is a mental model; read its text with
        get_knowledge_page). Each page says whether it is stale (newer memories in its scope).

        Returns {roots: [{id, kind, name, children, mental_model_id, description, tags, is_stale, ...}]}.
        """
        tree = self.mb.knowledge_tree(bank_id, tags=tags or (), tags_match=tags_match, tag_groups=tag_groups)
        return knowledge_tree(tree)

    def search_knowledge_base(
        self,
        q: Annotated[str, Field(description="What to look for.", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        tags: FilterTags = None,
        tags_match: FilterMatch = "any",
        tag_groups: FilterGroups = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Find knowledge pages by meaning and keywords (hybrid search, best first).

        Returns {results: [{id, name, mental_model_id, source_query, snippet, score, updated_at}], total}.
        """
        hits, total = self.mb.search_knowledge_base(
            bank_id, q, limit=limit, tags=tags or (), tags_match=tags_match, tag_groups=tag_groups
        )
        return search_response(hits, total)

    def get_knowledge_page(
        self, page_id: Annotated[str, Field(description="Id of the page.", min_length=1)], *, bank_id: BankId
    ) -> dict[str, Any]:
        """Read a knowledge page as markdown (frontmatter + body; statements cite [mem:<id>]).

        Returns {id, name, type, description, tags, timestamp, body, markdown, mental_model_id}.
        """
        return knowledge_page(*self.mb.get_knowledge_page(bank_id, page_id))

    def create_knowledge_folder(
        self,
        name: Annotated[str, Field(description="Folder name (unique in its folder).", min_length=1, max_length=256)],
        parent_id: ParentId = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Create a folder in the knowledge base. Returns the new node {id, kind: "folder", name, parent_id, ...}."""
        return knowledge_node(self.mb.create_knowledge_folder(bank_id, name, parent_id=parent_id), None)

    def create_knowledge_page(
        self,
        name: Annotated[str, Field(description="Page name (unique in its folder).", min_length=1, max_length=256)],
        source_query: Annotated[fields.QueryText, Field(description="The question the page answers.")],
        parent_id: ParentId = None,
        tags: TagList = None,
        max_tokens: MaxTokens | None = None,
        trigger: TriggerInput = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Create a knowledge page: a mental model in the tree, built from observations in delta mode and refreshed
        after each consolidation unless trigger says otherwise. Tags scope its memories (a memory must carry all).
        Its first build runs in the background (poll get_operation).

        Returns {page_id, mental_model_id, operation_id, warnings}.
        """
        node, model_id, operation_id = self.mb.create_knowledge_page(
            bank_id,
            name=name,
            source_query=source_query,
            parent_id=parent_id,
            tags=tags,
            max_tokens=max_tokens,
            trigger=None if trigger is None else trigger.model_dump(exclude_unset=True),
        )
        warnings = self.mb.scope_warnings(self.mb.get_mental_model(bank_id, model_id, with_staleness=False))
        return {"page_id": node.id, "mental_model_id": model_id, "operation_id": operation_id, "warnings": warnings}

    def update_knowledge_node(
        self,
        node_id: NodeId,
        name: Annotated[str | None, Field(max_length=256)] = None,
        parent_id: Annotated[str | None, Field(description="Move the node into this folder.")] = None,
        move_to_root: Annotated[bool, Field(description="Move the node to the root.")] = False,
        source_query: Annotated[
            fields.QueryText | None, Field(description="Pages only: a new question (rebuilds it).")
        ] = None,
        tags: Annotated[fields.TagList | None, Field(description="Pages only: replaces its tags ([] clears).")] = None,
        max_tokens: MaxTokens | None = None,
        trigger: TriggerInput = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Rename or move a folder or page, or change a page's settings (trigger fields are merged over the stored
        ones). A page cannot hold other nodes, and a folder cannot move into its own subtree.

        Returns the node {id, kind, name, parent_id, ...}.
        """
        if move_to_root and parent_id is not None:
            raise ToolInputError("give either parent_id or move_to_root, not both")
        node, model = self.mb.update_knowledge_node(
            bank_id,
            node_id,
            name=name,
            parent_id=None if move_to_root else (UNSET if parent_id is None else parent_id),
            source_query=source_query,
            tags=tags,
            max_tokens=max_tokens,
            trigger=None if trigger is None else trigger.model_dump(exclude_unset=True),
        )
        return knowledge_node(node, model)

    def delete_knowledge_node(self, node_id: NodeId, *, bank_id: BankId) -> dict[str, Any]:
        """Delete a page, or a folder with everything under it (pages' mental models included).

        Returns {status: "deleted", node_id, deleted_folders, deleted_pages}.
        """
        return deleted_response(node_id, self.mb.delete_knowledge_node(bank_id, node_id))

    def export_knowledge_base(self, *, bank_id: BankId) -> dict[str, Any]:
        """Export the knowledge base as markdown files (index.md, one file per page, log.md).

        Returns {files: [{path, content}]}.
        """
        return bundle_response(self.mb.export_knowledge_base(bank_id))
