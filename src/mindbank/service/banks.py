"""Banks: profiles, per-bank configuration overrides, live statistics."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from mindbank.config import BANK_OVERRIDABLE
from mindbank.domain.knowledge import page_default_trigger
from mindbank.domain.limits import MAX_DAILY_TOKEN_BUDGET, MAX_INTERVAL_SECONDS, MAX_NAME_CHARS, Limits, check_text
from mindbank.domain.records import Bank
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.governance import Governance


def config_value_problem(key: str, kind: type, value: Any, limits: Limits) -> str | None:
    """Why ``value`` is not acceptable for the bank override ``key`` of type ``kind`` (None when it is): integers
    are token budgets (``max_token_budget``; daily budgets up to ``MAX_DAILY_TOKEN_BUDGET``, 0 refusing every
    automatic refresh) or, for the refresh interval, seconds up to ten years; the one object, a knowledge page's
    default trigger, must be a valid trigger."""
    if kind is dict:  # the one object-valued setting: knowledge_page_default_trigger
        if not isinstance(value, dict):
            return "must be a JSON object"
        try:
            page_default_trigger(value)
        except ValueError as exc:
            return str(exc)
        return None
    if kind is bool:
        return None if isinstance(value, bool) else "must be a boolean"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a{'n integer' if kind is int else ' number'}"
    if kind is int:
        low, top = (1, limits.max_token_budget)
        if key.endswith("_seconds"):
            low, top = 0, MAX_INTERVAL_SECONDS
        elif key.endswith("_daily_token_budget"):
            low, top = 0, MAX_DAILY_TOKEN_BUDGET
        if not isinstance(value, int) or not low <= value <= top:
            return f"must be an integer between {low} and {top}"
    if kind is float and not 0 <= value <= 1:
        return "must be between 0 and 1"
    return None


class BanksService(ServiceCore):
    """Banks: list, read, create or update, delete, profile, per-bank overrides, stats (``governance`` adds the
    refresh spend and budgets to them)."""

    def __init__(self, state: ServiceState, *, governance: Governance) -> None:
        super().__init__(state)
        self.governance = governance

    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count."""
        return self.store.list_banks()

    def get_bank(self, bank_id: str) -> Bank:
        """A bank. Raises :class:`NotFoundError`."""
        bank = self.store.get_bank(bank_id)
        if bank is None:
            raise NotFoundError(f"Bank '{bank_id}' not found")
        return bank

    def put_bank(
        self, bank_id: str, *, name: str | None = None, mission: str | None = None,
        disposition: dict[str, int] | None = None,
    ) -> Bank:  # fmt: skip
        """Create a bank or update its profile (None = keep). Raises :class:`InvalidInputError` for a bank id, name
        or mission past the limits, or a disposition trait outside 1-5."""
        self._check_bank_id(bank_id)
        if name is not None:
            check_text(name, "name", MAX_NAME_CHARS)
        if mission is not None:
            check_text(mission, "mission", self.limits.max_text_chars)
        for trait, level in (disposition or {}).items():
            if trait not in ("skepticism", "literalism", "empathy"):
                raise InvalidInputError(f"disposition.{trait}", "unknown trait (skepticism, literalism, empathy)")
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 5:
                raise InvalidInputError(f"disposition.{trait}", "must be an integer between 1 and 5")
        return self.store.upsert_bank(bank_id, name=name, mission=mission, disposition=disposition)

    def delete_bank(self, bank_id: str) -> int:
        """Delete a bank and everything in it, atomically; returns the number of memories removed.
        Raises :class:`NotFoundError`."""
        removed = self.store.delete_bank(bank_id)
        if removed < 0:
            raise NotFoundError(f"Bank '{bank_id}' not found")
        return removed

    def get_bank_profile(self, bank_id: str) -> Bank:
        """Alias of :meth:`get_bank` (the client's name). Raises :class:`NotFoundError`."""
        return self.get_bank(bank_id)

    def update_bank_profile(
        self, bank_id: str, *, name: str | None = None, mission: str | None = None,
        disposition: dict[str, int] | None = None,
    ) -> Bank:  # fmt: skip
        """Alias of :meth:`put_bank` (the client's name)."""
        return self.put_bank(bank_id, name=name, mission=mission, disposition=disposition)

    def bank_config(self, bank_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(resolved config, overrides)`` for the bank-overridable settings. ``knowledge_page_default_trigger``
        resolves to the whole trigger a new page starts from (the override, or the reference's page default).
        Raises :class:`NotFoundError`."""
        overrides = self.get_bank(bank_id).config
        resolved = {key: overrides.get(key, getattr(self.settings, key)) for key in BANK_OVERRIDABLE}
        key = "knowledge_page_default_trigger"
        # a malformed environment default is reported where it is used (page creation: a 422)
        with contextlib.suppress(ValueError):
            resolved[key] = page_default_trigger(resolved[key])
        return resolved, overrides

    def update_bank_config(self, bank_id: str, updates: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate and merge per-bank overrides (None removes one). Raises :class:`InvalidInputError` naming an
        unknown key or a wrong type, :class:`NotFoundError` for the bank. Nothing is written on error."""
        self.get_bank(bank_id)
        for key, value in updates.items():
            kind = BANK_OVERRIDABLE.get(key)
            if kind is None:
                raise InvalidInputError(f"updates.{key}", f"unknown setting; allowed: {', '.join(BANK_OVERRIDABLE)}")
            if value is None:
                continue
            problem = config_value_problem(key, kind, value, self.limits)
            if problem:
                raise InvalidInputError(f"updates.{key}", problem)
        self.store.update_bank_config(bank_id, updates)
        return self.bank_config(bank_id)

    def reset_bank_config(self, bank_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Remove every per-bank override (the bank then follows the environment); returns ``(resolved config,
        overrides)``. Raises :class:`NotFoundError`."""
        overrides = self.get_bank(bank_id).config
        if overrides:
            self.store.update_bank_config(bank_id, dict.fromkeys(overrides))
        return self.bank_config(bank_id)

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live bank statistics (``last_memory_write_at`` read from the database, never cached), with the refresh
        spend today and in total, the budgets and the failing models. Raises :class:`NotFoundError`."""
        self._require_bank(bank_id)
        return {**self.store.bank_stats(bank_id), **self.governance.bank_view(bank_id, self.clock())}

    def last_memory_write_at(self, bank_id: str) -> datetime | None:
        """The bank's newest memory write stamp (stats' ``last_memory_write_at``)."""
        return self.store.bank_last_memory_write_at(bank_id)

    def stats(self, bank_id: str) -> dict[str, Any]:
        """Alias of :meth:`bank_stats` (the client's name)."""
        return self.bank_stats(bank_id)
