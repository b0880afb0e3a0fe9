"""``mindbank.client`` over a bank's embedding model and re-embedding, sync and async, against a live server (the
bundled MiniLM): a bank on the server's model reports a match, and a re-embedding of it completes without switching."""

from __future__ import annotations

import asyncio

import pytest

from mindbank.client import AsyncClient, Client, MindBankHTTPError


def test_embedding_model_and_reembed(server: str) -> None:
    with Client(server) as c:
        c.retain("b", "Ana keeps her boat at the marina.")
        status = c.get_embedding_model("b")
        assert status.model == status.server_model == "all-MiniLM-L6-v2-int8" and status.dimension == 384
        assert status.matches and status.reembed_operation_id is None
        started = c.reembed("b")
        assert started.model == "all-MiniLM-L6-v2-int8" and started.dimension == 384
        done = c.wait("b", started.operation_id)
        assert done.status == "completed" and done.result_metadata is not None
        assert done.result_metadata["switched"] is False and done.result_metadata["memories"] == 1
        with pytest.raises(MindBankHTTPError) as err:
            c.reembed("missing")
        assert err.value.status_code == 404

    async def run() -> None:
        async with AsyncClient(server) as ac:
            status = await ac.get_embedding_model("b")
            assert status.matches
            started = await ac.reembed("b")
            assert (await ac.wait("b", started.operation_id)).status == "completed"

    asyncio.run(run())
