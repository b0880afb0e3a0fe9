"""Scoped API keys (``store/api_keys.py`` implements them the same on both backends)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from mindbank.domain.access import ApiKey


class ApiKeyStore(Protocol):
    """API key rows; ``revoke_api_key`` returns whether a live key was revoked."""

    def insert_api_key(self, key: ApiKey) -> None: ...
    def get_api_key(self, key_id: str) -> ApiKey | None: ...
    def list_api_keys(self) -> list[ApiKey]: ...
    def revoke_api_key(self, key_id: str, at: datetime) -> bool: ...
