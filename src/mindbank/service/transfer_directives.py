"""Directives in bank templates: the bank's directives as template entries, and a template's directives applied by
name (the reference's rule: an existing directive with the same name is updated, a new one created).

Transfer archives carry directives as rows (with their ids, like every other row of the bank); a template carries
only what a person would write, so it goes through the directive methods and their checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindbank.domain.resources import Directive, order_directives
from mindbank.domain.transfer.template import TemplateDirective
from mindbank.service.directives import DirectivesService


def bank_directives(service: DirectivesService, bank_id: str) -> list[dict[str, Any]]:
    """The bank's directives (active or not) as template entries, highest priority first."""
    return [
        TemplateDirective(
            name=d.name, content=d.content, priority=d.priority, is_active=d.is_active, tags=list(d.tags)
        ).model_dump()
        for d in order_directives(service.store.list_directives(bank_id, active_only=False))
    ]


def apply_directives(
    service: DirectivesService, bank_id: str, directives: Sequence[TemplateDirective], *, dry_run: bool
) -> tuple[list[str], list[str]]:
    """Create or update the bank's directives by name (with ``dry_run``, only say which); returns ``(created names,
    updated names)``. A name the bank holds more than once updates the oldest of them."""
    existing: dict[str, Directive] = {}
    if service.store.bank_exists(bank_id):
        stored = service.store.list_directives(bank_id, active_only=False)
        for row in sorted(stored, key=lambda d: (d.created_at, d.id)):
            existing.setdefault(row.name, row)
    created = [d.name for d in directives if d.name not in existing]
    updated = [d.name for d in directives if d.name in existing]
    if dry_run:
        return created, updated
    for d in directives:
        if d.name in existing:
            service.update_directive(bank_id, existing[d.name].id, name=d.name, content=d.content,
                                     priority=d.priority, is_active=d.is_active, tags=d.tags)  # fmt: skip
        else:
            service.create_directive(bank_id, name=d.name, content=d.content, priority=d.priority,
                                     is_active=d.is_active, tags=d.tags)  # fmt: skip
    return created, updated
