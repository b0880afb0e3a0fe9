"""Client methods over banks: ``list_banks``, ``stats``, ``get_bank_config``, ``update_bank_config``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mindbank.client._wire import Request, bank_path, endpoint
from mindbank.client.models import BankConfig, BankList, BankStats


class BankMethods:
    """``list_banks``, ``stats`` and a bank's settings."""

    @endpoint
    def stats(self, bank_id: str) -> Request[BankStats]:
        """Live bank statistics."""
        return Request("GET", f"{bank_path(bank_id)}/stats", BankStats.model_validate)

    @endpoint
    def list_banks(self) -> Request[BankList]:
        """Every bank with its memory count."""
        return Request("GET", "/v1/default/banks", BankList.model_validate)

    @endpoint
    def get_bank_config(self, bank_id: str) -> Request[BankConfig]:
        """Resolved settings of a bank and its own overrides."""
        return Request("GET", f"{bank_path(bank_id)}/config", BankConfig.model_validate)

    @endpoint
    def update_bank_config(self, bank_id: str, updates: Mapping[str, Any]) -> Request[BankConfig]:
        """Set per-bank overrides (a None value removes one)."""
        body = {"updates": dict(updates)}
        return Request("PATCH", f"{bank_path(bank_id)}/config", BankConfig.model_validate, json=body)
