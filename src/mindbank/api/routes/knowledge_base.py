"""The knowledge base: a tree of folders and pages (a page is a mental model) — tree, folders, pages, node patch and
delete, hybrid page search, markdown export. Wire-compatible with the reference's ``/knowledge-base`` routes."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.exceptions import RequestValidationError

from mindbank.api.deps import Bank, same_named, trigger_patch
from mindbank.api.knowledge_schemas import CreateFolderRequest, CreatePageRequest, UpdateNodeRequest
from mindbank.api.openapi import errors
from mindbank.domain.fields import FilterTag
from mindbank.domain.knowledge import UNSET
from mindbank.domain.limits import scan_json
from mindbank.domain.tags import TagsMatch
from mindbank.wire.knowledge import (
    bundle_response,
    deleted_response,
    knowledge_node,
    knowledge_page,
    knowledge_tree,
    search_response,
)

router = APIRouter(prefix="/v1/default/banks/{bank_id}/knowledge-base", tags=["knowledge-base"])

Tags = Annotated[
    list[FilterTag] | None,
    Query(max_length=10, description="Only pages carrying these tags (matched per `tags_match`, like recall)."),
]
TagGroups = Annotated[
    str | None,
    Query(description="JSON-encoded compound tag filter (recall's `tag_groups` shape), AND-ed with `tags`."),
]


def _groups(raw: str | None) -> list[dict[str, Any]] | None:
    """The ``tag_groups`` query parameter decoded (shape checked by the service). A value that is not a JSON list
    is a 422 naming the parameter."""
    if raw is None or not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except RecursionError as exc:  # nesting the decoder cannot follow: far past the depth limit
        raise RequestValidationError(
            [{"type": "json_too_deep", "loc": ("query", "tag_groups"), "msg": "nests too deep", "input": None}]
        ) from exc
    except ValueError as exc:
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "tag_groups"), "msg": f"not valid JSON: {exc}", "input": raw}]
        ) from exc
    problem = scan_json(value)
    if problem is not None:
        where, kind, message = problem
        loc = ("query", "tag_groups", *where)
        raise RequestValidationError([{"type": kind, "loc": loc, "msg": message, "input": None}])
    if not isinstance(value, list):
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "tag_groups"), "msg": "must be a JSON list", "input": raw}]
        )
    return value


@router.get("/tree")
def get_knowledge_base_tree(
    bank_id: str, mb: Bank, tags: Tags = None, tags_match: TagsMatch = "any", tag_groups: TagGroups = None
) -> dict[str, Any]:
    """The tree of folders and pages; each page carries ``is_stale`` (the staleness rule, one batched read for the
    whole tree). A tag filter keeps the matching pages and the folders on their path."""
    tree = mb.knowledge_tree(bank_id, tags=tags or (), tags_match=tags_match, tag_groups=_groups(tag_groups))
    return knowledge_tree(tree)


@router.post("/folders", status_code=201, responses=errors(409))
def create_knowledge_folder(bank_id: str, body: CreateFolderRequest, mb: Bank) -> dict[str, Any]:
    """Create a folder (bank auto-created); 404 unknown parent, 422 a page as parent, 409 a sibling's name."""
    return knowledge_node(mb.create_knowledge_folder(bank_id, body.name, parent_id=body.parent_id), None)


@router.post("/pages", status_code=201, responses=errors(409))
def create_knowledge_page(bank_id: str, body: CreatePageRequest, mb: Bank) -> dict[str, Any]:
    """Create a page: its mental model (page default trigger, ``trigger`` merged over it) and tree node; the first
    refresh is queued. ``warnings`` says when its scope matches no memories."""
    node, model_id, operation_id = mb.create_knowledge_page(
        bank_id,
        trigger=trigger_patch(body.trigger),
        **same_named(body, "name", "source_query", "parent_id", "tags", "max_tokens"),
    )
    warnings = mb.scope_warnings(mb.get_mental_model(bank_id, model_id, with_staleness=False))
    return {"page_id": node.id, "mental_model_id": model_id, "operation_id": operation_id, "warnings": warnings}


@router.get("/pages/{page_id}")
def get_knowledge_page(bank_id: str, page_id: str, mb: Bank) -> dict[str, Any]:
    """A page as a markdown document (frontmatter + body)."""
    return knowledge_page(*mb.get_knowledge_page(bank_id, page_id))


@router.patch("/nodes/{node_id}")
def update_knowledge_node(bank_id: str, node_id: str, body: UpdateNodeRequest, mb: Bank) -> dict[str, Any]:
    """Rename, move (``parent_id``: null = root; 422 under a page or into its own subtree; 404 unknown parent) and,
    for a page, change its settings; a new ``source_query`` queues a refresh."""
    node, model = mb.update_knowledge_node(
        bank_id,
        node_id,
        name=body.name,
        parent_id=body.parent_id if "parent_id" in body.model_fields_set else UNSET,
        source_query=body.source_query,
        tags=body.tags,
        max_tokens=body.max_tokens,
        trigger=None if body.trigger is None else body.trigger.model_dump(exclude_unset=True),
    )
    return knowledge_node(node, model)


@router.delete("/nodes/{node_id}")
def delete_knowledge_node(bank_id: str, node_id: str, mb: Bank) -> dict[str, Any]:
    """Delete a node and its whole subtree, the pages' mental models included."""
    return deleted_response(node_id, mb.delete_knowledge_node(bank_id, node_id))


@router.get("/search")
def search_knowledge_base(
    bank_id: str,
    mb: Bank,
    q: Annotated[str, Query(min_length=1, description="Search query")],
    limit: Annotated[int, Query(ge=1, le=50, description="Maximum results to return")] = 10,
    tags: Tags = None,
    tags_match: TagsMatch = "any",
    tag_groups: TagGroups = None,
) -> dict[str, Any]:
    """Hybrid page search: BM25 and vector rankings fused by reciprocal rank (score 0..1)."""
    hits, total = mb.search_knowledge_base(
        bank_id, q, limit=limit, tags=tags or (), tags_match=tags_match, tag_groups=_groups(tag_groups)
    )
    return search_response(hits, total)


@router.get("/export")
def export_knowledge_base(bank_id: str, mb: Bank) -> dict[str, Any]:
    """A portable markdown bundle: ``index.md``, one file per page under its folders' path, ``log.md``."""
    return bundle_response(mb.export_knowledge_base(bank_id))
