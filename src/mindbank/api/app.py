"""Application factory: routers, error handlers and the worker's lifetime."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from mindbank import __version__
from mindbank.api.errors import install_error_handlers
from mindbank.api.routes import banks, memories, mental_models, operations
from mindbank.service import MindBank


def create_app(mb: MindBank, *, run_worker: bool = True) -> FastAPI:
    """A FastAPI app serving ``mb``. With ``run_worker`` the in-process worker runs while the app is up."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if run_worker:
            mb.start_worker()
        try:
            yield
        finally:
            mb.worker.stop()

    app = FastAPI(title="mindbank", version=__version__, lifespan=lifespan)
    app.state.mindbank = mb
    install_error_handlers(app)
    for module in (memories, mental_models, operations, banks):
        app.include_router(module.router)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy", "database": "connected"}

    @app.get("/version")
    def version() -> dict[str, str]:
        return {"api_version": __version__}

    return app
