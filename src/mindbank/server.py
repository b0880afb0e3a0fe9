"""The server application: the HTTP API, the MCP endpoint, the control plane at ``/ui`` and the API-key guard around
them, with the in-process worker's lifetime. The composition root of the surfaces (none of them imports another)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext

from fastapi import FastAPI

from mindbank import ui
from mindbank.api.app import create_api
from mindbank.api.auth import OPEN_PATHS, ApiKeyMiddleware
from mindbank.mcp.http import McpHttp
from mindbank.mcp.tools import parse_enabled_tools
from mindbank.service import MindBank


def create_app(mb: MindBank, *, run_worker: bool = True) -> FastAPI:
    """A FastAPI app serving ``mb`` over HTTP and (``MINDBANK_MCP_ENABLED``) MCP. With ``run_worker`` the in-process
    worker and scheduler run while the app is up. Raises ``ValueError`` for an unknown tool in
    ``MINDBANK_MCP_ENABLED_TOOLS``."""
    mcp = (
        McpHttp(mb, host=mb.settings.host, enabled_tools=parse_enabled_tools(mb.settings.mcp_enabled_tools))
        if mb.settings.mcp_enabled
        else None
    )

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
    if mb.settings.api_key:  # outermost, so it guards every route, MCP included (/health stays open)
        # the control plane's files hold no data: they stay open, and the page asks for the key its requests send
        app.add_middleware(ApiKeyMiddleware, api_key=mb.settings.api_key, open_paths=OPEN_PATHS | ui.public_paths())
    return app
