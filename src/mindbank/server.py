"""The server application: the HTTP API, the MCP endpoint, the control plane at ``/ui`` and the guards around them,
with the in-process worker's lifetime. The composition root of the surfaces (none of them imports another).

Every request meets, outermost first: the Host and Origin checks with CORS (``api/origin.py``), the API key
(``api/auth.py``: admin or scoped key, when ``MINDBANK_API_KEY`` is set), and the request limits
(``api/guard.py``: body size, UTF-8, JSON depth, NUL characters); then the API's app-wide dependencies (parameter
hygiene, scoped-key authorization), the MCP endpoint or the control plane's static files. Anything mounted on the
app later gets the same.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any

import uvicorn
from fastapi import FastAPI
from threadpoolctl import threadpool_limits

from mindbank import ui
from mindbank.api.app import create_api
from mindbank.api.auth import OPEN_PATHS, ApiKeyMiddleware
from mindbank.api.guard import BodyGuard
from mindbank.api.origin import HostOriginGuard, HostPolicy, warn_if_open
from mindbank.mcp.http import McpHttp
from mindbank.mcp.tools import parse_enabled_tools
from mindbank.service.facade import MindBank

# uvicorn options of every mindbank server. uvicorn picks httptools (HTTP parsing in C) and uvloop when they are
# installed, as mindbank's dependencies make them: with h11 and asyncio's own loop a recall spent about 0.5 ms
# more server CPU in parsing, the loop and writing its 70 KB response. Where h11 is what runs, a request head (URL
# and headers) may be up to 64 KiB, room for every query parameter at its documented limit (h11's default, 16 KiB,
# refuses some with a bare 400); under httptools the same 64 KiB is enforced by api/guard.py.
UVICORN_OPTIONS: dict[str, Any] = {"h11_max_incomplete_event_size": 65_536}
START_TIMEOUT_S = 30.0  # how long serve_in_thread waits for its server to start


MALLOC_ARENAS = 2  # glibc M_ARENA_MAX for a serving process (what MALLOC_ARENA_MAX=2 in the environment does)
_M_ARENA_MAX = -8  # glibc's mallopt parameter number


def serving_threads() -> None:
    """Tune the process for serving many requests at once (process-wide; called by ``mindbank serve``,
    :func:`create_app` and ``mindbank worker``):

    * one BLAS thread per call: the parallelism of a server is its concurrent requests; a multi-threaded OpenBLAS
      call from each of them (the vector search's matrix product) contends for the same cores, and on a busy 2-core
      machine one 2,000-row product took 24 ms instead of 0.2 ms;
    * at most ``MALLOC_ARENAS`` glibc malloc arenas: by default every busy request thread may get an arena of its
      own, and the server's RSS grew 10-17 % from one 60 s load run to the next; with two it stayed flat (+0.2 %).
      Only on glibc, and only when ``MALLOC_ARENA_MAX`` is not set by the operator.
    """
    threadpool_limits(limits=1, user_api="blas")
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return
    libc_name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(libc_name) if libc_name else None
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


def freeze_startup_objects() -> None:
    """Move every object alive now out of the garbage collector's view (``gc.freeze``), after a collection: called
    by ``mindbank serve`` once the service and the app are built, whose objects (routes, schemas, the embedding
    model's Python side, about 150,000 of them) live as long as the process. Otherwise each full collection walks
    them all, and in a recall loop one took 200 ms in the middle of a request; after the freeze it walks the few
    objects made since. Not for a process that builds and drops many apps (tests): their cycles would never be
    collected."""
    gc.collect()
    gc.freeze()


def create_app(mb: MindBank, *, run_worker: bool = True) -> FastAPI:
    """A FastAPI app serving ``mb`` over HTTP and (``MINDBANK_MCP_ENABLED``) MCP. With ``run_worker`` the in-process
    worker and scheduler run while the app is up. Raises ``ValueError`` for an unknown tool in
    ``MINDBANK_MCP_ENABLED_TOOLS``."""
    serving_threads()
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
    app.router.routes.extend(ui.routes())  # the control plane: static files calling the HTTP API from the browser
    # added innermost first: the last one added runs first
    app.add_middleware(BodyGuard, limits=mb.limits)
    if settings.api_key:  # guards every route, MCP included (/health stays open)
        # the control plane's files hold no data: they stay open, and the page asks for the key its requests send
        app.add_middleware(ApiKeyMiddleware, authenticate=mb.authenticate, open_paths=OPEN_PATHS | ui.public_paths())
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
