"""The server application: the HTTP API, the MCP endpoint and the guards around them, with the in-process worker's
lifetime. The composition root of the surfaces (none of them imports another).

Every request meets, outermost first: the Host and Origin checks with CORS (``api/origin.py``), the API key
(``api/auth.py``: admin or scoped key, when ``MINDBANK_API_KEY`` is set), and the request limits
(``api/guard.py``: body size, UTF-8, JSON depth, NUL characters); then the API's app-wide dependencies (parameter
hygiene, scoped-key authorization) or the MCP endpoint. Anything mounted on the app later gets the same.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any

import uvicorn
from fastapi import FastAPI

from mindbank.api.app import create_api
from mindbank.api.auth import ApiKeyMiddleware
from mindbank.api.guard import BodyGuard
from mindbank.api.origin import HostOriginGuard, HostPolicy, warn_if_open
from mindbank.mcp.http import McpHttp
from mindbank.mcp.tools import parse_enabled_tools
from mindbank.service import MindBank

# uvicorn options of every mindbank server: a request head (URL and headers) may be up to 64 KiB, room for every
# query parameter at its documented limit (h11's default, 16 KiB, refuses some with a bare 400)
UVICORN_OPTIONS: dict[str, Any] = {"h11_max_incomplete_event_size": 65_536}
START_TIMEOUT_S = 30.0  # how long serve_in_thread waits for its server to start


def create_app(mb: MindBank, *, run_worker: bool = True) -> FastAPI:
    """A FastAPI app serving ``mb`` over HTTP and (``MINDBANK_MCP_ENABLED``) MCP. With ``run_worker`` the in-process
    worker and scheduler run while the app is up. Raises ``ValueError`` for an unknown tool in
    ``MINDBANK_MCP_ENABLED_TOOLS``."""
    settings = mb.settings
    policy = HostPolicy.for_bind(settings.host, settings.allowed_hosts, settings.allowed_origins)
    mcp = McpHttp(mb, enabled_tools=parse_enabled_tools(settings.mcp_enabled_tools)) if settings.mcp_enabled else None

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        if run_worker:
            mb.start_worker()
        try:
            async with mcp.run() if mcp is not None else nullcontext():  # MCP session managers live with the app
                yield
        finally:
            mb.stop_worker()

    app = create_api(mb, lifespan=lifespan)
    app.state.mcp = mcp
    if mcp is not None:
        app.router.routes.extend(mcp.routes())
    # added innermost first: the last one added runs first
    app.add_middleware(BodyGuard, limits=mb.limits)
    if settings.api_key:  # guards every route, MCP included (/health stays open)
        app.add_middleware(ApiKeyMiddleware, authenticate=mb.authenticate)
    app.add_middleware(HostOriginGuard, policy=policy)
    warn_if_open(policy, settings.host)
    return app


@contextmanager
def serve_in_thread(mb: MindBank, *, run_worker: bool = True) -> Iterator[str]:
    """Serve ``mb`` (:func:`create_app`) on 127.0.0.1, a free port, from a background thread while the block runs;
    yields the base URL. For tests and benchmarks that drive the real HTTP path in-process (``mindbank serve`` runs
    uvicorn in the foreground instead). With ``run_worker`` the app's in-process worker runs too. Raises
    ``RuntimeError`` when the server does not start within ``START_TIMEOUT_S`` seconds."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    app = create_app(mb, run_worker=run_worker)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **UVICORN_OPTIONS))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the in-process server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
