"""Client methods over scoped API keys (admin key only): ``create_api_key``, ``list_api_keys``, ``revoke_api_key``."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from mindbank.client._wire import Request, clean, endpoint
from mindbank.client.models import ApiKeyInfo, ApiKeyList, CreatedApiKey

KEYS_PATH = "/v1/default/api-keys"


class ApiKeyMethods:
    """``create_api_key``, ``list_api_keys`` and ``revoke_api_key`` (the client must hold the admin key)."""

    @endpoint
    def create_api_key(
        self, banks: Sequence[str], *, read_only: bool = False, name: str | None = None
    ) -> Request[CreatedApiKey]:
        """A key limited to ``banks`` (bank ids, ``prefix*`` or ``*``); its ``key`` (the token) is shown only
        here. Raises ``MindBankHTTPError`` 409 when the server has no admin key."""
        body = clean({"banks": list(banks), "read_only": read_only, "name": name})
        return Request("POST", KEYS_PATH, CreatedApiKey.model_validate, json=body)

    @endpoint
    def list_api_keys(self) -> Request[ApiKeyList]:
        """Every key, revoked ones too, without secrets."""
        return Request("GET", KEYS_PATH, ApiKeyList.model_validate)

    @endpoint
    def revoke_api_key(self, key_id: str) -> Request[ApiKeyInfo]:
        """Revoke a key at once (404 when unknown or already revoked)."""
        return Request("DELETE", f"{KEYS_PATH}/{quote(key_id, safe='')}", ApiKeyInfo.model_validate)
