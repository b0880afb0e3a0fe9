"""Knowledge-base response shapes shared by the HTTP API and MCP (the reference's ``KnowledgeNode``,
``KnowledgeTreeResponse``, ``KnowledgePageResponse``, ``KnowledgePageSearchResponse`` and
``KnowledgePageBundleResponse``), from domain records. Pure functions; no surface imports another.
"""

from __future__ import annotations

from typing import Any

from mindbank.domain.knowledge import (
    KnowledgeNode,
    KnowledgeTree,
    Removed,
    children_of,
    page_markdown,
    page_meta,
    snippet,
)
from mindbank.domain.projection import project
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import to_iso


def knowledge_node(
    node: KnowledgeNode, model: MentalModel | None, children: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One ``KnowledgeNode``. A page carries its model's question (``description``), tags, last refresh
    (``timestamp``), ``is_stale`` (as computed by the staleness rule, None when not computed), last failure and
    stored (effective) trigger; a folder has none of these (``timestamp`` is its last update)."""
    return {
        **project(node, ("id", "kind", "name", "parent_id", "mental_model_id")),
        "managed": False,
        "description": model.source_query if model is not None else None,
        "tags": list(model.tags) if model is not None else [],
        "timestamp": to_iso(model.last_refreshed_at if model is not None else node.updated_at),
        "is_stale": model.is_stale if model is not None else None,
        "last_refresh_failed_at": to_iso(model.last_refresh_failed_at) if model is not None else None,
        "trigger": model.trigger if model is not None else None,
        "children": children or [],
    }


def knowledge_tree(tree: KnowledgeTree) -> dict[str, Any]:
    """``KnowledgeTreeResponse``: ``{roots: [KnowledgeNode with nested children]}``, folders first then by name."""
    kids = children_of(tree.nodes)

    def build(node: KnowledgeNode) -> dict[str, Any]:
        model = tree.models.get(node.mental_model_id) if node.mental_model_id else None
        return knowledge_node(node, model, [build(child) for child in kids.get(node.id, [])])

    return {"roots": [build(node) for node in kids.get(None, [])]}


def knowledge_page(node: KnowledgeNode, model: MentalModel) -> dict[str, Any]:
    """``KnowledgePageResponse``: the page as a markdown document (``markdown``: frontmatter + body, "No content
    yet." for an empty body) and its stored ``body``; ``mental_model_id`` beyond the reference."""
    return {**page_meta(node, model), "body": model.content, "markdown": page_markdown(node, model, empty_notice=True)}


def search_response(hits: list[tuple[KnowledgeNode, MentalModel, float]], total: int) -> dict[str, Any]:
    """``KnowledgePageSearchResponse``: ranked results (fused score 0..1) and how many pages matched."""
    return {
        "results": [
            {
                "id": node.id,
                "name": node.name,
                "mental_model_id": model.id,
                "source_query": model.source_query,
                "snippet": snippet(model.content),
                "score": round(score, 6),
                "updated_at": to_iso(model.last_refreshed_at),
            }
            for node, model, score in hits
        ],
        "total": total,
    }


def bundle_response(files: list[tuple[str, str]]) -> dict[str, Any]:
    """``KnowledgePageBundleResponse``: ``{files: [{path, content}]}``."""
    return {"files": [{"path": path, "content": content} for path, content in files]}


def deleted_response(node_id: str, removed: Removed) -> dict[str, Any]:
    """The answer to deleting a node: what went with it (folders, pages with their mental models)."""
    return {"status": "deleted", "node_id": node_id, "deleted_folders": removed.folders, "deleted_pages": removed.pages}
