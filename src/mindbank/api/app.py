"""The HTTP API as a FastAPI application: routers, error handlers, ``/health`` and ``/version``.

It knows nothing of MCP, the control plane or the worker: ``mindbank.server`` composes those around it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI

from mindbank.api.errors import install_error_handlers
from mindbank.api.routes import (
    banks,
    llm_requests,
    memories,
    mental_models,
    operations,
    reflect,
    templates,
    transfer,
)
from mindbank.service import MindBank
from mindbank.version import __version__

# one line per router: a new endpoint family is a module under routes/ and an entry here
ROUTERS = (memories, mental_models, operations, banks, reflect, llm_requests, transfer, templates)


def create_api(
    mb: MindBank, *, lifespan: Callable[[FastAPI], AbstractAsyncContextManager[Any]] | None = None
) -> FastAPI:
    """A FastAPI app serving ``mb``'s HTTP API (``app.state.mindbank`` is ``mb``); ``lifespan`` as FastAPI takes it."""
    app = FastAPI(title="mindbank", version=__version__, lifespan=lifespan)
    app.state.mindbank = mb
    install_error_handlers(app)
    for module in ROUTERS:
        app.include_router(module.router)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy", "database": "connected"}

    @app.get("/version")
    def version() -> dict[str, str]:
        return {"api_version": __version__}

    return app
