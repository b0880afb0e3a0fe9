"""Directives in bank templates and transfer archives: the one place both read and write them.

Directives (the reference's ``directives`` table: name, content, priority, active flag, tags) are being added to
mindbank by the directives feature of issue 17. Until that lands this module is their whole footprint here: a bank
has none to export, and a template or archive that carries some is refused with a 422 naming the section — never
accepted and silently dropped. When the directives family exists, these three functions call it (matched by name:
an existing directive is updated, a new one created), and nothing else in transfer changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.domain.transfer.archive import DirectiveRecord
from mindbank.errors import InvalidInputError
from mindbank.store.base import Store

UNSUPPORTED = "this server does not store directives yet; leave them out (or import without the bank config)"


def bank_directives(store: Store, bank_id: str) -> list[DirectiveRecord]:
    """The bank's directives as archive records, by name (none while directives are not stored)."""
    return []


def check_directives(directives: Sequence[DirectiveRecord], field: str) -> None:
    """Refuse directives this server cannot store. Raises :class:`InvalidInputError` naming ``field``."""
    if directives:
        raise InvalidInputError(field, UNSUPPORTED)


def apply_directives(
    store: Store, bank_id: str, directives: Sequence[DirectiveRecord], *, dry_run: bool
) -> tuple[list[str], list[str]]:
    """Create or update the bank's directives by name; returns ``(created names, updated names)``. Raises
    :class:`InvalidInputError` (``directives``) while directives are not stored."""
    check_directives(directives, "directives")
    return [], []
