"""Directives: standing instructions a bank gives its LLM engine (reference ``/directives``).

An active directive goes into the reflect agent's and the mental-model refresh's prompts when it applies to the
request's tags (:func:`~mindbank.domain.resources.directive_applies`), highest priority first. The extractive engine
stores directives but cannot follow them (docs/llm.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from mindbank.domain.resources import Directive, directive_applies, order_directives
from mindbank.domain.tags import matches, normalize_tags
from mindbank.domain.timeutil import utcnow
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore

MAX_DIRECTIVES = 1000  # per bank: every prompt of the bank reads them all
MAX_DIRECTIVE_CHARS = 20_000


def _check_text(field: str, value: str, limit: int) -> str:
    if not value.strip():
        raise InvalidInputError(field, "must not be blank")
    if len(value) > limit:
        raise InvalidInputError(field, f"must be at most {limit} characters")
    return value.strip()


class DirectivesService(ServiceCore):
    """Directive methods of :class:`~mindbank.service.facade.MindBank`."""

    def create_directive(
        self, bank_id: str, *, name: str, content: str, priority: int = 0, is_active: bool = True,
        tags: Sequence[str] = (),
    ) -> Directive:  # fmt: skip
        """Store a directive (bank auto-created). Raises :class:`InvalidInputError` for a blank name or content, a
        text over its limit, or a bank already holding ``MAX_DIRECTIVES``."""
        name = _check_text("name", name, 256)
        content = _check_text("content", content, MAX_DIRECTIVE_CHARS)
        if self.store.bank_exists(bank_id) and len(self.store.list_directives(bank_id, active_only=False)) >= (
            MAX_DIRECTIVES
        ):
            raise InvalidInputError("name", f"a bank holds at most {MAX_DIRECTIVES} directives")
        now = utcnow()
        directive = Directive(
            id=str(uuid.uuid4()), bank_id=bank_id, name=name, content=content, priority=priority,
            is_active=is_active, tags=normalize_tags(tags), created_at=now, updated_at=now,
        )  # fmt: skip
        self.store.insert_directive(directive)
        return directive

    def get_directive(self, bank_id: str, directive_id: str) -> Directive:
        """One directive. Raises :class:`NotFoundError`."""
        found = self.store.get_directive(bank_id, directive_id)
        if found is None:
            raise NotFoundError(f"Directive '{directive_id}' not found in bank '{bank_id}'")
        return found

    def list_directives(
        self, bank_id: str, *, tags: Sequence[str] = (), tags_match: Literal["any", "all", "exact"] = "any",
        active_only: bool = True, limit: int = 100, offset: int = 0,
    ) -> tuple[list[Directive], int]:  # fmt: skip
        """A page of directives, highest priority first, and the total. With ``tags``, the directives whose tags
        match them (``tags_match``) plus the untagged (global) ones, as the reference lists them."""
        wanted = normalize_tags(tags)
        found = [
            d
            for d in self.store.list_directives(bank_id, active_only=active_only)
            if not wanted or not d.tags or matches(d.tags, wanted, tags_match)
        ]
        ordered = order_directives(found)
        return ordered[offset : offset + limit], len(ordered)

    def update_directive(
        self, bank_id: str, directive_id: str, *, name: str | None = None, content: str | None = None,
        priority: int | None = None, is_active: bool | None = None, tags: Sequence[str] | None = None,
    ) -> Directive:  # fmt: skip
        """Change the given fields (None = keep). Raises :class:`NotFoundError`, :class:`InvalidInputError`."""
        current = self.get_directive(bank_id, directive_id)
        updated = replace(
            current,
            name=current.name if name is None else _check_text("name", name, 256),
            content=current.content if content is None else _check_text("content", content, MAX_DIRECTIVE_CHARS),
            priority=current.priority if priority is None else priority,
            is_active=current.is_active if is_active is None else is_active,
            tags=current.tags if tags is None else normalize_tags(tags),
            updated_at=utcnow(),
        )
        if not self.store.update_directive(updated):
            raise NotFoundError(f"Directive '{directive_id}' not found in bank '{bank_id}'")
        return updated

    def delete_directive(self, bank_id: str, directive_id: str) -> None:
        """Delete a directive. Raises :class:`NotFoundError`."""
        if not self.store.delete_directive(bank_id, directive_id):
            raise NotFoundError(f"Directive '{directive_id}' not found in bank '{bank_id}'")

    def applicable_directives(self, bank_id: str, tags: Sequence[str], *, apply_all: bool = False) -> list[Directive]:
        """The active directives a request scoped to ``tags`` follows, in prompt order (``apply_all``: every active
        directive, whatever its tags)."""
        active = self.store.list_directives(bank_id, active_only=True)
        return order_directives([d for d in active if apply_all or directive_applies(d.tags, tags)])
