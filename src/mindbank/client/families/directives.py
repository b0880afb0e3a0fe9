"""Client methods over a bank's directives: standing instructions the LLM engine follows."""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.client._wire import Request, bank_path, child_path, clean, endpoint, listed
from mindbank.client.resource_models import Directive, DirectiveList, SuccessResponse


class DirectiveMethods:
    """``create_directive``, ``list_directives``, ``get_directive``, ``update_directive``, ``delete_directive``."""

    @endpoint
    def create_directive(
        self, bank_id: str, name: str, content: str, *, priority: int = 0, is_active: bool = True,
        tags: Sequence[str] | None = None,
    ) -> Request[Directive]:  # fmt: skip
        """Create a directive (higher ``priority`` goes first; ``tags`` scope it, empty is global)."""
        body = {"name": name, "content": content, "priority": priority, "is_active": is_active,
                "tags": list(tags or ())}  # fmt: skip
        return Request("POST", f"{bank_path(bank_id)}/directives", Directive.model_validate, json=body)

    @endpoint
    def list_directives(
        self, bank_id: str, *, tags: Sequence[str] | None = None, tags_match: str | None = None,
        active_only: bool = True, limit: int = 100, offset: int = 0,
    ) -> Request[DirectiveList]:  # fmt: skip
        """Directives, highest priority first (with ``tags``: those matching plus the global ones)."""
        params = clean({"tags": listed(tags), "tags_match": tags_match, "active_only": active_only, "limit": limit,
                        "offset": offset})  # fmt: skip
        return Request("GET", f"{bank_path(bank_id)}/directives", DirectiveList.model_validate, params=params)

    @endpoint
    def get_directive(self, bank_id: str, directive_id: str) -> Request[Directive]:
        """One directive."""
        return Request("GET", child_path(bank_id, "directives", directive_id), Directive.model_validate)

    @endpoint
    def update_directive(
        self, bank_id: str, directive_id: str, *, name: str | None = None, content: str | None = None,
        priority: int | None = None, is_active: bool | None = None, tags: Sequence[str] | None = None,
    ) -> Request[Directive]:  # fmt: skip
        """Change the given fields of a directive."""
        body = clean({"name": name, "content": content, "priority": priority, "is_active": is_active,
                      "tags": None if tags is None else list(tags)})  # fmt: skip
        return Request("PATCH", child_path(bank_id, "directives", directive_id), Directive.model_validate, json=body)

    @endpoint
    def delete_directive(self, bank_id: str, directive_id: str) -> Request[SuccessResponse]:
        """Delete a directive."""
        return Request("DELETE", child_path(bank_id, "directives", directive_id), SuccessResponse.model_validate)
