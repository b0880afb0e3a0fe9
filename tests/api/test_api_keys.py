"""Scoped API keys over HTTP on both stores, and through MCP, the Python client and the CLI on a live server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from conftest import Served
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from mindbank.client import Client, MindBankHTTPError
from mindbank.service.facade import MindBank

ADMIN = "admin-secret-for-tests"
BASE = "/v1/default/banks"
ITEM = {"items": [{"content": "Alice adores green tea."}]}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create_key(s: Served, banks: list[str], **fields: Any) -> str:
    r = s.http.post("/v1/default/api-keys", json={"banks": banks, **fields}, headers=bearer(ADMIN))
    assert r.status_code == 201, r.text
    return r.json()["key"]  # type: ignore[no-any-return]


def test_scoped_keys_over_http(served: Callable[..., Served]) -> None:
    s = served(api_key=ADMIN)
    admin = bearer(ADMIN)
    for bank in ("team-a", "other"):
        assert s.http.post(f"{BASE}/{bank}/memories", json=ITEM, headers=admin).status_code == 200
    writer = bearer(create_key(s, ["team-*"], name="team writer"))
    reader = bearer(create_key(s, ["team-a"], read_only=True))

    # a bank outside the scope does not exist for the key; listing shows only the key's banks
    assert s.http.get(f"{BASE}/other/stats", headers=writer).status_code == 404
    assert s.http.post(f"{BASE}/other/memories", json=ITEM, headers=writer).status_code == 404
    assert s.http.delete(f"{BASE}/other", headers=writer).status_code == 404
    assert [b["bank_id"] for b in s.http.get(BASE, headers=writer).json()["banks"]] == ["team-a"]
    assert {b["bank_id"] for b in s.http.get(BASE, headers=admin).json()["banks"]} == {"team-a", "other"}
    # a read-write prefix key creates banks inside its scope
    assert s.http.put(f"{BASE}/team-new", json={"name": "New"}, headers=writer).status_code == 200
    assert s.http.post(f"{BASE}/team-b/memories", json=ITEM, headers=writer).status_code == 200
    assert s.mb.store.bank_exists("team-b")

    # read-only: GET, recall, reflect, dry runs and scope previews; no writes
    assert s.http.get(f"{BASE}/team-a/memories/list", headers=reader).status_code == 200
    assert s.http.post(f"{BASE}/team-a/memories/recall", json={"query": "tea"}, headers=reader).status_code == 200
    assert s.http.post(f"{BASE}/team-a/reflect", json={"query": "tea?"}, headers=reader).status_code == 200
    preview = s.http.post(f"{BASE}/team-a/mental-models/scope-preview", json={}, headers=reader)
    assert preview.status_code == 200
    before = s.dump()
    assert s.http.post(f"{BASE}/team-a/memories", json=ITEM, headers=reader).status_code == 403
    assert s.http.delete(f"{BASE}/team-a", headers=reader).status_code == 403
    assert s.http.post(f"{BASE}/team-b/memories/recall", json={"query": "x"}, headers=reader).status_code == 404
    # key management and routes across banks are the admin's
    assert s.http.get("/v1/default/api-keys", headers=writer).status_code == 403
    assert s.http.post("/v1/default/api-keys", json={"banks": ["*"]}, headers=writer).status_code == 403
    assert s.dump() == before

    # stored hashed, listed without secrets, revoked at once
    keys = s.http.get("/v1/default/api-keys", headers=admin).json()
    assert keys["total"] == 2 and all("key" not in k for k in keys["items"])
    assert writer["Authorization"].split()[1] not in json.dumps(s.dump(), default=str)
    writer_id = next(k["id"] for k in keys["items"] if k["name"] == "team writer")
    revoked = s.http.delete(f"/v1/default/api-keys/{writer_id}", headers=admin)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert s.http.get(BASE, headers=writer).status_code == 401
    assert s.http.delete(f"/v1/default/api-keys/{writer_id}", headers=admin).status_code == 404
    assert s.http.get(BASE, headers=bearer("mbk_0000000000000000_forged")).status_code == 401


def test_key_validation_and_no_admin_key(served: Callable[..., Served]) -> None:
    s = served(api_key=ADMIN)
    for body, field in (({"banks": []}, "banks"), ({"banks": ["a/b"]}, "banks"), ({"banks": ["*"], "x": 1}, "x")):
        r = s.http.post("/v1/default/api-keys", json=body, headers=bearer(ADMIN))
        assert r.status_code == 422 and field in r.text, r.text
    open_server = served()  # no admin key: no authentication, so scoped keys would restrict nothing
    r = open_server.http.post("/v1/default/api-keys", json={"banks": ["*"]})
    assert r.status_code == 409 and "MINDBANK_API_KEY" in r.json()["detail"]
    assert open_server.mb.list_api_keys() == []


@pytest.fixture
def settings(tmp_path):  # type: ignore[no-untyped-def]
    """The live server of the tests below runs with the admin key."""
    from mindbank.config import Settings

    return Settings(database_url=str(tmp_path / "keys.db"), worker_poll_seconds=0.02, api_key=ADMIN)


def test_mcp_honours_scoped_keys(server: str, mindbank: MindBank) -> None:
    for bank in ("team-a", "other"):
        mindbank.put_bank(bank, name=bank)
    key, reader = (
        mindbank.create_api_key(banks=["team-*"])[1],
        mindbank.create_api_key(banks=["team-a"], read_only=True)[1],
    )

    async def scenario() -> None:
        async with (
            httpx.AsyncClient(headers=bearer(key)) as http,
            McpClient(streamable_http_client(f"{server}/mcp/", http_client=http)) as client,
        ):
            banks = (await client.call_tool("list_banks", {})).structured_content
            assert [b["bank_id"] for b in banks["banks"]] == ["team-a"]
            denied = await client.call_tool("get_bank_stats", {"bank_id": "other"})
            assert denied.is_error and "not found" in denied.content[0].text  # type: ignore[union-attr]
            ok = await client.call_tool("retain", {"bank_id": "team-a", "content": "Alice adores tea."})
            assert not ok.is_error
            nul = await client.call_tool("recall", {"bank_id": "team-a", "query": "te\x00a"})
            assert nul.is_error and "NUL" in nul.content[0].text  # type: ignore[union-attr]
        async with httpx.AsyncClient(headers=bearer(reader)) as http:
            async with McpClient(streamable_http_client(f"{server}/mcp/team-a/", http_client=http)) as client:
                assert not (await client.call_tool("recall", {"query": "tea"})).is_error
                for read in ("list_documents", "get_knowledge_base_tree", "list_directives", "list_mental_models"):
                    assert not (await client.call_tool(read, {})).is_error, read  # every read tool, every family
                write = await client.call_tool("retain", {"content": "more"})
                assert write.is_error and "read-only" in write.content[0].text  # type: ignore[union-attr]
                # the listing says which tools such a key may call
                hints = {t.name: t.annotations.read_only_hint for t in (await client.list_tools()).tools}  # type: ignore[union-attr]
                assert hints["recall"] is True and hints["get_knowledge_base_tree"] is True and hints["retain"] is False
            # a bank outside the scopes is a 404 at its MCP URL, as over HTTP (whether it exists or not)
            for bank in ("other", "nobody-has-this"):
                outside = await http.post(f"{server}/mcp/{bank}/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert outside.status_code == 404, outside.text

    asyncio.run(scenario())


def test_client_manages_keys(server: str) -> None:
    with Client(server, api_key=ADMIN) as admin:
        created = admin.create_api_key(["team-*"], read_only=True, name="ro")
        assert created.key.startswith("mbk_") and created.read_only and created.banks == ["team-*"]
        with Client(server, api_key=created.key) as scoped, pytest.raises(MindBankHTTPError) as denied:
            scoped.retain("team-x", "hello")
        assert denied.value.status_code == 403
        listed = admin.list_api_keys()
        assert [k.name for k in listed.items] == ["ro"] and not hasattr(listed.items[0], "key")
        assert admin.revoke_api_key(created.id).revoked_at is not None
        with Client(server, api_key=created.key) as revoked, pytest.raises(MindBankHTTPError) as gone:
            revoked.list_banks()
        assert gone.value.status_code == 401
