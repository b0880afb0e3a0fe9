"""Application factory: routers, error handlers and the worker's lifetime."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext

from fastapi import FastAPI

from mindbank import __version__
from mindbank.api.auth import ApiKeyMiddleware
from mindbank.api.errors import install_error_handlers
from mindbank.api.routes import banks, llm_requests, memories, mental_models, operations, reflect
from mindbank.service import MindBank


def create_app(mb: MindBank, *, run_worker: bool = True) -> FastAPI:
    """A FastAPI app serving ``mb``. With ``run_worker`` the in-process worker runs while the app is up."""

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        if run_worker:
            mb.start_worker()
        try:
            mcp = application.state.mcp
            async with mcp.run() if mcp is not None else nullcontext():  # MCP session managers live with the app
                yield
        finally:
            mb.stop_worker()

    app = FastAPI(title="mindbank", version=__version__, lifespan=lifespan)
    app.state.mindbank = mb
    install_error_handlers(app)
    for module in (memories, mental_models, operations, banks, reflect, llm_requests):
        app.include_router(module.router)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy", "database": "connected"}

    @app.get("/version")
    def version() -> dict[str, str]:
        return {"api_version": __version__}

    app.state.mcp = None
    if mb.settings.mcp_enabled:
        from mindbank.mcp.http import McpHttp  # imported here: mindbank.mcp itself imports the API's shapes
        from mindbank.mcp.tools import parse_enabled_tools

        app.state.mcp = McpHttp(
            mb, host=mb.settings.host, enabled_tools=parse_enabled_tools(mb.settings.mcp_enabled_tools)
        )
        app.router.routes.extend(app.state.mcp.routes())
    if mb.settings.api_key:  # outermost, so it guards every route, MCP included (/health stays open)
        app.add_middleware(ApiKeyMiddleware, api_key=mb.settings.api_key)
    return app
