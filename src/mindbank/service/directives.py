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

from mindbank.domain.resource_checks import MAX_DIRECTIVES, check_directive
from mindbank.domain.resources import Directive, directive_applies, order_directives
from mindbank.domain.tags import matches, normalize_tags
from mindbank.domain.timeutil import utcnow
from mindbank.errors import InvalidInputError
from mindbank.service.core import ServiceCore, changed_in_bank, found_in_bank


class DirectivesService(ServiceCore):
    """Directive methods of the service."""

    def create_directive(
        self, bank_id: str, *, name: str, content: str, priority: int = 0, is_active: bool = True,
        tags: Sequence[str] = (),
    ) -> Directive:  # fmt: skip
        """Store a directive (bank auto-created). Raises :class:`InvalidInputError` naming the field (blank or
        oversized text, tags over the request limits, a priority outside 32 bits: ``domain.resource_checks``), or
        for a bank already holding ``MAX_DIRECTIVES``."""
        name, content, tags = check_directive(name=name, content=content, priority=priority, tags=tags)
        if self.store.bank_exists(bank_id) and len(self.store.list_directives(bank_id, active_only=False)) >= (
            MAX_DIRECTIVES
        ):
            raise InvalidInputError("name", f"a bank holds at most {MAX_DIRECTIVES} directives")
        now = utcnow()
        directive = Directive(
            id=str(uuid.uuid4()), bank_id=bank_id, name=name, content=content, priority=priority,
            is_active=is_active, tags=tags, created_at=now, updated_at=now,
        )  # fmt: skip
        self.store.insert_directive(directive)
        return directive

    def get_directive(self, bank_id: str, directive_id: str) -> Directive:
        """One directive. Raises :class:`NotFoundError`."""
        return found_in_bank(self.store.get_directive(bank_id, directive_id), "Directive", directive_id, bank_id)

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
        name, content, new_tags = check_directive(
            name=current.name if name is None else name, content=current.content if content is None else content,
            priority=current.priority if priority is None else priority, tags=current.tags if tags is None else tags,
        )  # fmt: skip
        updated = replace(
            current, name=name, content=content, priority=current.priority if priority is None else priority,
            is_active=current.is_active if is_active is None else is_active, tags=new_tags, updated_at=utcnow(),
        )  # fmt: skip
        changed_in_bank(self.store.update_directive(updated), "Directive", directive_id, bank_id)
        return updated

    def delete_directive(self, bank_id: str, directive_id: str) -> None:
        """Delete a directive. Raises :class:`NotFoundError`."""
        changed_in_bank(self.store.delete_directive(bank_id, directive_id), "Directive", directive_id, bank_id)

    def applicable_directives(self, bank_id: str, tags: Sequence[str], *, apply_all: bool = False) -> list[Directive]:
        """The active directives a request scoped to ``tags`` follows, in prompt order (``apply_all``: every active
        directive, whatever its tags)."""
        active = self.store.list_directives(bank_id, active_only=True)
        return order_directives([d for d in active if apply_all or directive_applies(d.tags, tags)])
