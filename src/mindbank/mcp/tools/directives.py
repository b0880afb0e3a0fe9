"""Directive tools: list, create and delete the bank's directives (the reference's ``list_directives``,
``create_directive``, ``delete_directive`` tools). With an LLM configured, active directives that apply to a
request go into reflect and refresh prompts; the extractive engine stores them but cannot follow them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindbank.domain import fields
from mindbank.domain.resource_checks import INT32_MAX, INT32_MIN, MAX_DIRECTIVE_CHARS
from mindbank.mcp.tools.common import BankId, FilterTags, Offset, ToolFamily
from mindbank.wire.resources import directive_response


class DirectiveTools(ToolFamily):
    """Directive tools: list, create and delete standing instructions for the LLM engine."""

    TOOLS = ("list_directives", "create_directive", "delete_directive")
    READS = frozenset({"list_directives"})

    def list_directives(
        self,
        tags: FilterTags = None,
        active_only: Annotated[bool, Field(description="Only active directives.")] = True,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Offset = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the bank's directives, highest priority first (with tags: those matching plus the global ones).

        Returns {items: [{id, name, content, priority, is_active, tags, ...}], total, limit, offset}.
        """
        items, total = self.mb.list_directives(
            bank_id, tags=tags or (), active_only=active_only, limit=limit, offset=offset
        )
        return {"items": [directive_response(d) for d in items], "total": total, "limit": limit, "offset": offset}

    def create_directive(
        self,
        name: Annotated[fields.NameText, Field(description="A short name.")],
        content: Annotated[
            str,
            Field(description="The instruction the LLM should follow.", min_length=1, max_length=MAX_DIRECTIVE_CHARS),
        ],
        priority: Annotated[int, Field(description="Higher goes first in prompts.", ge=INT32_MIN, le=INT32_MAX)] = 0,
        is_active: bool = True,
        tags: Annotated[
            fields.TagList | None,
            Field(description="Scope: empty is global; tagged applies to requests sharing a tag."),
        ] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Create a directive: a standing instruction for reflect answers and mental-model refreshes (LLM engine).

        Returns the directive {id, name, content, priority, is_active, tags, created_at, updated_at}.
        """
        created = self.mb.create_directive(
            bank_id, name=name, content=content, priority=priority, is_active=is_active, tags=tags or ()
        )
        return directive_response(created)

    def delete_directive(self, directive_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Delete a directive.

        Returns {success, directive_id}.
        """
        self.mb.delete_directive(bank_id, directive_id)
        return {"success": True, "directive_id": directive_id}
