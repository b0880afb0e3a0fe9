"""The OpenAPI document says what the server does: every error a route can answer, and the limits it enforces.

Two halves:

* :func:`errors` — what a route declares itself: ``@router.get(..., responses=errors(404, 409))`` adds those
  statuses with the ``{"detail": "..."}`` body and a standard description. A route declares the errors of its own
  logic: 404 for a missing model, memory or operation, 409 for a conflict, 502/503 for an LLM provider.
* :func:`install_openapi` — what every route gets from the app-wide machinery, added to the generated document so no
  route can forget it: 400 for every route (a request head over 64 KiB, a malformed body), 422 for any route
  with parameters or a body (validation, ``api/guard.py``), 413 for a body
  over ``MINDBANK_MAX_BODY_BYTES``, 404 for any route under ``{bank_id}`` (a bank outside a scoped key's scope, or
  missing), 401 (API key), 403 (an origin, a read-only or scoped key) and 421 (a host; ``api/origin.py``) for every
  route but ``/health``; and every ``{bank_id}`` path parameter carries the bank id rule, every other path
  parameter the identifier rule (no control characters).

A new route therefore only declares the errors its own code raises (``errors(...)``), and marks a POST that writes
nothing with ``openapi_extra=READ`` (``api/access.py``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from mindbank.api.auth import OPEN_PATHS
from mindbank.domain import limits as L


class ErrorResponse(BaseModel):
    """The body of every error but 422: ``{"detail": "<what went wrong>"}``."""

    detail: str


DESCRIPTIONS: dict[int, str] = {
    400: "Malformed request, or a request head (URL and headers) over 64 KiB",
    401: "Missing or invalid API key (MINDBANK_API_KEY is set)",
    403: "Origin not allowed, read-only API key on a write, or a route the key may not use",
    404: "Not found (or a bank outside the API key's scope)",
    409: "Conflict with the current state",
    410: "Gone: the reference removed this route; detail names the one to use",
    413: "Request body larger than MINDBANK_MAX_BODY_BYTES (or a file over its own limit)",
    415: "Unsupported media type: the type is named in detail",
    421: "Host not allowed (MINDBANK_ALLOWED_HOSTS)",
    422: "Validation error: the field is named in loc",
    500: "The engine failed",
    502: "The LLM provider failed (permanent)",
    503: "The LLM provider failed (transient: retry later)",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route answering the given error statuses with ``{"detail": ...}``."""
    return {code: {"model": ErrorResponse, "description": DESCRIPTIONS[code]} for code in codes}


_ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}
_VALIDATION_REF = {"$ref": "#/components/schemas/HTTPValidationError"}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def _response(code: int) -> dict[str, Any]:
    schema = _VALIDATION_REF if code == 422 else _ERROR_REF
    return {"description": DESCRIPTIONS[code], "content": {"application/json": {"schema": schema}}}


def _path_parameter_schema(name: str) -> dict[str, Any]:
    limits = L.current_limits()
    if name == "bank_id":
        return {"minLength": 1, "maxLength": limits.max_bank_id_chars, "pattern": limits.bank_id_pattern}
    return {"minLength": 1, "maxLength": L.MAX_ID_CHARS, "pattern": L.NO_CONTROL_PATTERN}


def complete(document: dict[str, Any], *, auth: bool = False) -> dict[str, Any]:
    """Add the app-wide errors and path parameter rules to a generated OpenAPI ``document`` (in place); with
    ``auth`` (``MINDBANK_API_KEY`` set) also the bearer security scheme every route but the probes requires."""
    if auth:
        document.setdefault("components", {})["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    components = document.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("ErrorResponse", ErrorResponse.model_json_schema())
    for path, item in document.get("paths", {}).items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            codes: set[int] = set()
            codes |= {403, 421}  # Host and Origin checks guard every route
            if path not in OPEN_PATHS:  # the probes answer without a key
                codes.add(401)
                if auth:
                    operation["security"] = [{"bearer": []}]
            if operation.get("parameters") or operation.get("requestBody"):
                codes.add(422)
            codes.add(400)  # a request head over 64 KiB (api/guard.py), a malformed body or multipart form
            if operation.get("requestBody"):
                codes.add(413)
            if "{bank_id}" in path:
                codes.add(404)
            responses = operation.setdefault("responses", {})
            for code in sorted(codes):
                responses.setdefault(str(code), _response(code))
            if 422 in codes and "HTTPValidationError" not in components:
                from fastapi.openapi.utils import validation_error_definition, validation_error_response_definition

                components["ValidationError"] = validation_error_definition
                components["HTTPValidationError"] = validation_error_response_definition
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("schema", {}).get("type") == "string":
                    parameter["schema"].update(_path_parameter_schema(parameter["name"]))
    return document


def install_openapi(app: FastAPI, *, auth: bool = False) -> None:
    """Make ``app.openapi()`` return the completed document (generated once, on first use); ``auth``: the server
    requires an API key."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(generate(), auth=auth)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to replace the schema
