"""``Client`` and ``AsyncClient`` are built from the same method families: same names, signatures and requests."""

from __future__ import annotations

import asyncio
import inspect
import json

import httpx

from mindbank.client import AsyncClient, Client
from mindbank.client._wire import endpoint
from mindbank.client.families import Families


def _endpoints() -> list[str]:
    return sorted(n for n in dir(Families) if isinstance(inspect.getattr_static(Families, n), endpoint))


def test_both_clients_offer_every_family_method_with_one_signature() -> None:
    names = _endpoints()
    assert "retain" in names and "get_operation" in names
    sync, async_ = Client("http://test"), AsyncClient("http://test")
    try:
        for name in names:
            method, coroutine = getattr(sync, name), getattr(async_, name)
            assert not inspect.iscoroutinefunction(method) and inspect.iscoroutinefunction(coroutine), name
            assert inspect.signature(method) == inspect.signature(coroutine), name
            assert "Request" not in str(inspect.signature(method).return_annotation), name
            assert method.__doc__ and method.__doc__ == coroutine.__doc__, name
    finally:
        sync.close()
        asyncio.run(async_.aclose())


def test_both_clients_send_the_same_request() -> None:
    seen: list[tuple[str, str, bytes]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), request.content))
        return httpx.Response(200, json={"success": True, "bank_id": "b", "items_count": 1, "is_async": False})

    with Client("http://test", transport=httpx.MockTransport(answer)) as c:
        c.retain("b/x", "hello", tags=[], metadata={"k": "v"})

    async def run() -> None:
        async with AsyncClient("http://test", transport=httpx.MockTransport(answer)) as c:
            await c.retain("b/x", "hello", tags=[], metadata={"k": "v"})

    asyncio.run(run())
    assert seen[0] == seen[1]
    method, url, body = seen[0]
    assert method == "POST" and url == "http://test/v1/default/banks/b%2Fx/memories"
    assert json.loads(body) == {"items": [{"content": "hello", "tags": [], "metadata": {"k": "v"}}], "async": False}
