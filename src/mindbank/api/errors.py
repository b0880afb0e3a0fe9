"""The one place domain errors become HTTP responses."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from mindbank.errors import ConflictError, InvalidInputError, NotFoundError


def install_error_handlers(app: FastAPI) -> None:
    """404 for missing things, 409 for conflicts, 422 (FastAPI's validation shape, field in ``loc``) for rules."""

    @app.exception_handler(NotFoundError)
    async def _not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(exc)})

    @app.exception_handler(ConflictError)
    async def _conflict(_: Request, exc: ConflictError) -> JSONResponse:
        return JSONResponse(status_code=409, content={"detail": str(exc)})

    @app.exception_handler(InvalidInputError)
    async def _invalid(_: Request, exc: InvalidInputError) -> JSONResponse:
        detail = [{"type": "value_error", "loc": ["body", exc.field], "msg": exc.message, "input": None}]
        return JSONResponse(status_code=422, content={"detail": detail})
