"""Directives: ``GET/POST /directives``, ``GET/PATCH/DELETE /directives/{id}`` (the reference's shapes:
``DirectiveResponse``, ``DirectiveListResponse``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import Field

from mindbank.api.deps import Bank, deleted_response, same_named
from mindbank.api.schemas import RequestBody
from mindbank.domain.fields import FilterTag, Offset, TagList
from mindbank.domain.resource_checks import INT32_MAX, INT32_MIN, MAX_DIRECTIVE_CHARS, MAX_DIRECTIVE_NAME_CHARS
from mindbank.wire.resources import directive_response

Priority = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX, description="Higher goes first in prompts (32-bit).")]
router = APIRouter(prefix="/v1/default/banks/{bank_id}/directives", tags=["directives"])


class CreateDirectiveRequest(RequestBody):
    """``CreateDirectiveRequest``."""

    name: str = Field(max_length=MAX_DIRECTIVE_NAME_CHARS)
    content: str = Field(max_length=MAX_DIRECTIVE_CHARS)
    priority: Priority = 0
    is_active: bool = True
    tags: TagList = Field(default_factory=list)


class UpdateDirectiveRequest(RequestBody):
    """``UpdateDirectiveRequest``: the fields given change."""

    name: str | None = Field(default=None, max_length=MAX_DIRECTIVE_NAME_CHARS)
    content: str | None = Field(default=None, max_length=MAX_DIRECTIVE_CHARS)
    priority: Priority | None = None
    is_active: bool | None = None
    tags: TagList | None = None


@router.get("")
def list_directives(
    bank_id: str,
    mb: Bank,
    tags: Annotated[list[FilterTag] | None, Query(max_length=10)] = None,
    tags_match: Literal["any", "all", "exact"] = "any",
    active_only: bool = True,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[Offset, Query()] = 0,
) -> dict[str, Any]:
    """Directives, highest priority first; with ``tags``, the matching ones plus the global (untagged) ones."""
    items, total = mb.list_directives(
        bank_id, tags=tags or (), tags_match=tags_match, active_only=active_only, limit=limit, offset=offset
    )
    return {"items": [directive_response(d) for d in items], "total": total, "limit": limit, "offset": offset}


@router.post("")
def create_directive(bank_id: str, body: CreateDirectiveRequest, mb: Bank) -> dict[str, Any]:
    """Create a directive (bank auto-created)."""
    created = mb.create_directive(
        bank_id, name=body.name, content=body.content, priority=body.priority, is_active=body.is_active,
        tags=body.tags,
    )  # fmt: skip
    return directive_response(created)


@router.get("/{directive_id}")
def get_directive(bank_id: str, directive_id: str, mb: Bank) -> dict[str, Any]:
    """One directive."""
    return directive_response(mb.get_directive(bank_id, directive_id))


@router.patch("/{directive_id}")
def update_directive(bank_id: str, directive_id: str, body: UpdateDirectiveRequest, mb: Bank) -> dict[str, Any]:
    """Change the given fields of a directive."""
    updated = mb.update_directive(
        bank_id, directive_id, **same_named(body, "name", "content", "priority", "is_active", "tags")
    )
    return directive_response(updated)


@router.delete("/{directive_id}")
def delete_directive(bank_id: str, directive_id: str, mb: Bank) -> dict[str, Any]:
    """Delete a directive."""
    mb.delete_directive(bank_id, directive_id)
    return deleted_response("Directive", directive_id)
