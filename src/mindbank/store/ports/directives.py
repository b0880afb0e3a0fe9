"""Directives: a bank's standing instructions to reflect."""

from __future__ import annotations

from typing import Protocol

from mindbank.domain.resources import Directive


class DirectiveStore(Protocol):
    """Directive rows; updates and deletes return whether the directive existed."""

    def insert_directive(self, directive: Directive) -> None: ...
    def get_directive(self, bank_id: str, directive_id: str) -> Directive | None: ...
    def list_directives(self, bank_id: str, *, active_only: bool) -> list[Directive]: ...
    def update_directive(self, directive: Directive) -> bool: ...
    def delete_directive(self, bank_id: str, directive_id: str) -> bool: ...
