"""Optional API key: with ``MINDBANK_API_KEY`` set, HTTP and MCP need ``Authorization: Bearer <key>``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mindbank.api.auth import bearer_token
from mindbank.client import Client, MindBankHTTPError
from mindbank.config import Settings

KEY = "s3cret-key-do-not-log"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Overrides the shared fixture: the same fresh database, with an API key."""
    return Settings(database_url=str(tmp_path / "auth.db"), worker_poll_seconds=0.02, api_key=KEY)


def test_http_requires_the_key(server: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"{server}/v1/default/banks"
    assert httpx.get(f"{server}/health").status_code == 200  # liveness stays open
    missing = httpx.get(url)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert "API key" in missing.json()["detail"]
    assert httpx.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": f"Basic {KEY}"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": f"Bearer {KEY}x"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert httpx.get(url, headers={"authorization": f"bearer {KEY}"}).status_code == 200
    assert KEY not in caplog.text


def test_client_sends_the_key(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Client(server) as anonymous, pytest.raises(MindBankHTTPError) as denied:
        anonymous.list_banks()
    assert denied.value.status_code == 401 and KEY not in str(denied.value)
    with Client(server, api_key="nope") as wrong, pytest.raises(MindBankHTTPError):
        wrong.list_banks()
    with Client(server, api_key=KEY) as right:
        assert right.retain("b", "Hal: I keep bees.").success
    monkeypatch.setenv("MINDBANK_API_KEY", KEY)
    with Client(server) as from_env:
        assert from_env.list_banks().total == 1


def test_mcp_requires_the_key(server: str) -> None:
    assert httpx.post(f"{server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401
    assert httpx.post(f"{server}/mcp/b", headers={"Authorization": "Bearer wrong"}, json={}).status_code == 401

    async def connect(key: str) -> list[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
        async with http, McpClient(streamable_http_client(f"{server}/mcp", http_client=http)) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert "create_mental_model" in asyncio.run(connect(KEY))
    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK reports the 401 as an MCPError in a task group
        asyncio.run(connect("wrong"))
    assert any(isinstance(e, MCPError) for e in _leaves(refused.value))


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def test_key_is_not_in_settings_repr() -> None:
    assert KEY not in repr(Settings(api_key=KEY))
    assert Settings.from_env({"MINDBANK_API_KEY": KEY}).api_key == KEY


def test_bearer_token_parsing() -> None:
    assert bearer_token([(b"authorization", b"Bearer abc")]) == b"abc"
    assert bearer_token([(b"Authorization", b"bearer  abc ")]) == b"abc"
    assert bearer_token([(b"authorization", b"Basic abc")]) is None
    assert bearer_token([(b"authorization", b"Bearer ")]) is None
    assert bearer_token([]) is None
