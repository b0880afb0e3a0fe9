"""The HTTP API as a FastAPI application: routers, error handlers, ``/health`` and ``/version``.

It knows nothing of MCP, the control plane or the worker: ``mindbank.server`` composes those around it. Every route
gets, without declaring anything: parameter hygiene (``guard.check_parameters``), scoped-key authorization
(``access.authorize``), the full ``Allow`` list on 405 and OPTIONS, and its app-wide errors in the OpenAPI document
(``openapi.install_openapi``); see docs/security.md "Adding a route".
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import Depends, FastAPI

from mindbank.api.access import SCOPED, authorize
from mindbank.api.errors import install_error_handlers
from mindbank.api.guard import check_parameters, install_method_handlers
from mindbank.api.observability import RequestMetricsMiddleware
from mindbank.api.openapi import install_openapi
from mindbank.api.routes import (
    api_keys,
    banks,
    curation,
    directives,
    documents,
    files,
    health,
    knowledge_base,
    llm_request_log,
    llm_requests,
    memories,
    mental_models,
    observations,
    operations,
    operations_admin,
    reflect,
    templates,
    transfer,
    webhooks,
)
from mindbank.service.facade import MindBank
from mindbank.version import __version__

# one line per router: a new endpoint family is a module under routes/ and an entry here
ROUTERS = (memories, mental_models, operations, banks, reflect, llm_requests, documents, directives, files, webhooks,
           operations_admin, llm_request_log, health, api_keys, knowledge_base,
           transfer, templates, curation, observations)  # fmt: skip


def create_api(
    mb: MindBank, *, lifespan: Callable[[FastAPI], AbstractAsyncContextManager[Any]] | None = None
) -> FastAPI:
    """A FastAPI app serving ``mb``'s HTTP API (``app.state.mindbank`` is ``mb``); ``lifespan`` as FastAPI takes it."""
    app = FastAPI(
        title="mindbank",
        version=__version__,
        lifespan=lifespan,
        dependencies=[Depends(check_parameters), Depends(authorize)],
    )
    app.state.mindbank = mb
    install_error_handlers(app)
    app.add_middleware(RequestMetricsMiddleware, metrics=mb.metrics)
    install_method_handlers(app)
    install_openapi(app, auth=bool(mb.settings.api_key))
    for module in ROUTERS:
        app.include_router(module.router)

    @app.get("/health", openapi_extra=SCOPED)
    def health() -> dict[str, str]:
        return {"status": "healthy", "database": "connected"}

    @app.get("/version", openapi_extra=SCOPED)
    def version() -> dict[str, str]:
        return {"api_version": __version__}

    return app
