"""The one place domain errors become HTTP responses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from mindbank.errors import (
    ConflictError,
    EmbeddingProviderError,
    InvalidInputError,
    NotFoundError,
    PayloadTooLargeError,
    RefreshPreviewError,
    TransientError,
    UnsupportedTypeError,
)
from mindbank.providers.llm.base import LLMError

ECHO_CHARS = 200  # how much of a rejected value a 422 repeats back


def clipped(value: Any) -> Any:
    """A rejected value as a 422 repeats it: a string cut to :data:`ECHO_CHARS` characters (a 60,000-character
    bank id is not sent back whole), a long list or object summarised; anything else as is."""
    if isinstance(value, str) and len(value) > ECHO_CHARS:
        return f"{value[:ECHO_CHARS]}… ({len(value)} characters)"
    if isinstance(value, list | dict) and len(value) > 20:
        return f"<{type(value).__name__} of {len(value)} items>"
    return value


def install_error_handlers(app: FastAPI) -> None:
    """404 for missing things, 409 for conflicts, 422 (FastAPI's validation shape, field in ``loc``) for rules, 413
    (the same shape) for a request over a size limit; LLM provider failures 502 (permanent) or 503 (transient: retry
    later); a dry run whose engine failed 502 / 500; 415 for a file type mindbank cannot read."""

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{**e, "input": clipped(e["input"])} if "input" in e else e for e in exc.errors()]
        return JSONResponse(status_code=422, content={"detail": jsonable_encoder(errors)})

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

    @app.exception_handler(PayloadTooLargeError)
    async def _too_large(_: Request, exc: PayloadTooLargeError) -> JSONResponse:
        detail = [{"type": "too_large", "loc": ["body", exc.field], "msg": exc.message, "input": None}]
        return JSONResponse(status_code=413, content={"detail": detail})

    @app.exception_handler(LLMError)
    async def _llm(_: Request, exc: LLMError) -> JSONResponse:
        # the LLM provider failed: 503 when retrying later may help (429, 5xx, timeout), 502 when it will not
        status = 503 if isinstance(exc, TransientError) else 502
        return JSONResponse(status_code=status, content={"detail": f"LLM provider error: {exc}"})

    @app.exception_handler(RefreshPreviewError)
    async def _preview(_: Request, exc: RefreshPreviewError) -> JSONResponse:
        status = 502 if exc.upstream else 500
        return JSONResponse(status_code=status, content={"detail": f"dry run failed ({exc.reason}): {exc}"})

    @app.exception_handler(UnsupportedTypeError)
    async def _unsupported(_: Request, exc: UnsupportedTypeError) -> JSONResponse:
        return JSONResponse(status_code=415, content={"detail": str(exc), "media_type": exc.media_type})

    @app.exception_handler(EmbeddingProviderError)
    async def _embedding(_: Request, exc: EmbeddingProviderError) -> JSONResponse:
        # the embedding server failed: 503 when retrying later may help (unreachable, 429, 5xx), 502 when it will not
        status = 503 if isinstance(exc, TransientError) else 502
        return JSONResponse(status_code=status, content={"detail": str(exc)})

    @app.exception_handler(TransientError)
    async def _transient(_: Request, exc: TransientError) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(exc)})
