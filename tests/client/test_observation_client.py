"""``mindbank.client`` over the reference's observation endpoints against a live server: an observation's history,
its scopes, clearing the observations of a memory, every observation, and a bank's memories by type; the async
client sends the same requests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from mindbank.client import AsyncClient, Client, MindBankHTTPError
from mindbank.service.facade import MindBank


def until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for the server's worker (consolidation runs after each write)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the worker did not get there in time"
        time.sleep(0.05)


def test_observations_through_the_client(server: str, mindbank: MindBank) -> None:
    def observations() -> list[dict[str, str]]:
        return [{"id": m.id, "text": m.text} for m in mindbank.list_memories("b", types=["observation"])[0]]

    with Client(server) as c:
        c.retain("b", "Xavier: I live in Paris with my partner.", tags=["user:xavier"])
        until(lambda: c.list_observation_scopes("b").total == 1)
        c.retain("b", "Xavier: I moved to Berlin with my partner.", tags=["user:xavier"])
        until(lambda: any("Berlin" in o["text"] for o in observations()))
        (scope,) = c.list_observation_scopes("b").scopes
        assert scope.tags == ["user:xavier"] and scope.count == 1
        (observation,) = observations()
        (change,) = c.get_observation_history("b", observation["id"])
        assert change.previous_text == "Xavier: I live in Paris with my partner." and change.text == observation["text"]
        assert [f.text for f in change.source_facts_added] == ["Xavier: I moved to Berlin with my partner."]
        paris = change.previous_source_memory_ids[0]
        assert c.get_observation_history("b", paris) == []
        assert [o["id"] for o in c.list_memory_observations("b", paris).items] == [observation["id"]]
        assert c.clear_memory_observations("b", paris).deleted_count == 1
        until(lambda: c.list_observation_scopes("b").total == 1)  # consolidation builds it again
        cleared = c.clear_observations("b")
        assert cleared.success and cleared.deleted_count == 1
        with pytest.raises(MindBankHTTPError) as err:
            c.clear_bank_memories("b", type="opinion")  # type: ignore[arg-type]
        assert err.value.status_code == 422 and "type" in str(err.value)
        until(lambda: c.list_observation_scopes("b").total == 1)
        assert c.clear_bank_memories("b", type="world").deleted_count == 2

    async def run() -> None:
        async with AsyncClient(server) as ac:
            until(lambda: Client(server).list_observation_scopes("b").total == 0)
            assert (await ac.list_observation_scopes("b", limit=5)).limit == 5
            assert (await ac.clear_bank_memories("b")).deleted_count == 0
            assert (await ac.clear_observations("b")).deleted_count == 0

    asyncio.run(run())
