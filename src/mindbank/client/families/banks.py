"""Client methods over banks: ``list_banks``, ``stats``, the bank's config (get, update, reset) and profile, its
embedding model and re-embedding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mindbank.client._wire import Request, bank_path, clean, endpoint
from mindbank.client.models import BankConfig, BankList, BankStats
from mindbank.client.resource_models import BankEmbeddingModel, BankProfile, ReembedStarted


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

    @endpoint
    def reset_bank_config(self, bank_id: str) -> Request[BankConfig]:
        """Remove every per-bank override."""
        return Request("DELETE", f"{bank_path(bank_id)}/config", BankConfig.model_validate)

    @endpoint
    def get_bank_profile(self, bank_id: str) -> Request[BankProfile]:
        """The bank's name, mission and disposition."""
        return Request("GET", f"{bank_path(bank_id)}/profile", BankProfile.model_validate)

    @endpoint
    def update_bank_profile(
        self, bank_id: str, *, name: str | None = None, mission: str | None = None,
        disposition: Mapping[str, int] | None = None,
    ) -> Request[BankProfile]:  # fmt: skip
        """Create the bank or update its profile (None = keep); ``mission`` is what the LLM engine is told."""
        body = clean(
            {"name": name, "mission": mission, "disposition": None if disposition is None else dict(disposition)}
        )
        return Request("PUT", bank_path(bank_id), BankProfile.model_validate, json=body)

    @endpoint
    def get_embedding_model(self, bank_id: str) -> Request[BankEmbeddingModel]:
        """The embedding model of the bank's vectors, the server's, and the bank's active re-embedding."""
        return Request("GET", f"{bank_path(bank_id)}/embedding-model", BankEmbeddingModel.model_validate)

    @endpoint
    def reembed(self, bank_id: str) -> Request[ReembedStarted]:
        """Queue the bank's move to the server's embedding model (one active per bank); ``wait`` for its
        operation. Recall keeps using the bank's vectors until the switch commits."""
        return Request("POST", f"{bank_path(bank_id)}/reembed", ReembedStarted.model_validate)
