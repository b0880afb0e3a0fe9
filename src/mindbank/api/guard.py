"""What every HTTP route gets without declaring anything: request limits, parameter hygiene, and honest 405s.

* :class:`BodyGuard` (ASGI middleware, composed in ``mindbank.server``): answers 400 for a request head (URL and
  headers) over 64 KiB, applies the app's
  :class:`~mindbank.domain.limits.Limits` to the request (``limits.using``), answers 413 for a body over
  ``max_body_bytes`` (by ``Content-Length`` or while it streams in), and for a JSON body of the HTTP API names what
  no schema can: invalid UTF-8 (``utf8_invalid``), nesting deeper than ``max_json_depth`` (``json_too_deep``), a
  NUL character anywhere (``string_nul``) and integers outside 64 bits (``int_out_of_range``), each a 422 in
  FastAPI's validation shape with the JSON path in ``loc``. Other paths (MCP) get the size and depth limits, and
  their NUL characters are refused by the MCP tool layer as tool errors.
* :func:`check_parameters` (an app-wide dependency): a NUL in any query parameter, and a control character or
  more than 256 characters in any path parameter, is a 422 naming it; a ``bank_id`` path parameter must be a valid
  bank id
  (``limits.check_bank_id``), so a new route with ``{bank_id}`` in its path is covered without declaring it.
* :func:`install_method_handlers`: a 405 lists every method the path accepts in ``Allow`` (Starlette lists only
  the first route's), and ``OPTIONS`` on an existing path answers 204 with ``Allow``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindbank.domain import limits as L
from mindbank.errors import InvalidInputError

JSON_CONTENT_TYPES = ("application/json", "+json")


def _detail(loc: Iterable[str | int], kind: str, message: str) -> dict[str, Any]:
    return {"detail": [{"type": kind, "loc": list(loc), "msg": message, "input": None}]}


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class _TooLarge(Exception):
    pass


# the documented request head limit (URL and headers), whatever HTTP parser the server runs (h11 enforces its own
# limit, httptools none): checked here so every deployment answers the same 400
MAX_HEAD_BYTES = 65_536


def head_bytes(scope: Scope) -> int:
    """The size of a request head as sent: request line and headers (each ``name: value`` and its CRLF)."""
    line = len(scope.get("raw_path") or scope["path"].encode()) + len(scope.get("query_string") or b"") + 16
    return line + sum(len(name) + len(value) + 4 for name, value in scope.get("headers") or ())


class BodyGuard:
    """Request limits for every HTTP request (see the module docstring). ``json_prefixes``: path prefixes whose
    JSON bodies are also scanned for bad UTF-8, NUL characters and 64-bit overflow (the HTTP API's)."""

    def __init__(self, app: ASGIApp, *, limits: L.Limits, json_prefixes: Iterable[str] = ("/v1/",)) -> None:
        self.app = app
        self.limits = limits
        self.json_prefixes = tuple(json_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with L.using(self.limits):
            await self._handle(scope, receive, send)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if head_bytes(scope) > MAX_HEAD_BYTES:
            detail = f"request head (URL and headers) is over {MAX_HEAD_BYTES // 1024} KiB"
            await _send_json(send, 400, {"detail": detail})
            return
        limit = self.limits.max_body_bytes
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE") and declared in (None, b"0"):
            await self.app(scope, receive, send)  # no body to read: skip the buffering
            return
        try:
            body, more = await self._read(receive, limit)
        except _TooLarge:
            await self._too_large(send)
            return
        problem = self._inspect(scope, headers, body) if body else None
        if problem is not None:
            await _send_json(send, 422, problem)
            return
        await self.app(scope, self._replay(body, more, receive), send)

    async def _read(self, receive: Receive, limit: int) -> tuple[bytes, bool]:
        """The whole body (raises _TooLarge past ``limit``); the flag says a disconnect came instead of the end."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b"".join(chunks), True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False

    @staticmethod
    def _replay(body: bytes, disconnected: bool, receive: Receive) -> Receive:
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                if disconnected:
                    return {"type": "http.disconnect"}
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect, as the server would deliver it

        return replay

    def _inspect(self, scope: Scope, headers: dict[bytes, bytes], body: bytes) -> dict[str, Any] | None:
        content_type = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        if content_type and not content_type.endswith(JSON_CONTENT_TYPES):
            return None  # not JSON: the route's own parsing answers
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _detail(["body"], "utf8_invalid", f"request body is not valid UTF-8 (byte {exc.start})")
        try:
            document = json.loads(text)
        except RecursionError:
            return _detail(["body"], "json_too_deep", f"JSON nests deeper than {self.limits.max_json_depth} levels")
        except ValueError:
            if "\x00" in text and scope["path"].startswith(self.json_prefixes):
                # a raw NUL inside a string makes the JSON malformed: name it rather than where parsing stopped
                return _detail(["body"], "string_nul", "NUL characters are not accepted (a raw NUL byte in the body)")
            return None  # malformed JSON: FastAPI names the position (json_invalid)
        if not scope["path"].startswith(self.json_prefixes):
            return None  # MCP: its SDK answers in JSON-RPC, and its tools refuse NUL characters themselves
        problem = L.scan_json(document, self.limits)
        if problem is None:
            return None
        path, kind, message = problem
        return _detail(["body", *path], kind, message)

    async def _too_large(self, send: Send) -> None:
        await _send_json(
            send,
            413,
            {
                "detail": f"request body is larger than {self.limits.max_body_bytes} bytes (MINDBANK_MAX_BODY_BYTES); "
                "split it, e.g. retain fewer items per request"
            },
        )


async def check_parameters(request: Request) -> None:
    """App-wide dependency: a 422 naming any path or query parameter with a NUL or control character, and a
    ``bank_id`` path parameter that is not a valid bank id. A coroutine although it awaits nothing: FastAPI runs a
    plain function dependency on its thread pool, a hand-off that cost more than the check itself."""
    errors: list[dict[str, Any]] = []
    for name, value in request.path_params.items():
        try:
            if name == "bank_id":
                L.check_bank_id(value)
            else:
                L.check_identifier(value, name, L.MAX_ID_CHARS)
        except InvalidInputError as exc:
            errors.append({"type": "value_error", "loc": ["path", name], "msg": exc.message, "input": value})
    for name, value in request.query_params.multi_items():
        if "\x00" in value or "\x00" in name:
            errors.append({"type": "string_nul", "loc": ["query", name], "msg": "must not contain NUL", "input": None})
    if errors:
        raise RequestValidationError(errors)


def _flat_routes(routes: Iterable[Any]) -> Iterator[Any]:
    """Every route with a path template and methods, included routers opened up (in routing order)."""
    for route in routes:
        nested = getattr(route, "effective_route_contexts", None)  # FastAPI's included routers
        if callable(nested):
            yield from _flat_routes(nested())
        elif getattr(route, "path_regex", None) is not None:
            yield route


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods of the resource at ``path``: those of every route sharing the path template of the first route
    whose template matches (e.g. ``/banks/{bank_id}``), OPTIONS included; none for an unknown path. A URL a later
    template also matches (``/memories/list`` is a ``/memories/{memory_id}`` too) lists only its own template's."""
    routes = [r for r in _flat_routes(app.router.routes) if r.path_regex.match(path)]
    if not routes:
        return []
    template = routes[0].path
    methods = {m for r in routes if r.path == template for m in (getattr(r, "methods", None) or ())}
    return sorted(methods | {"OPTIONS"}) if methods else []


def install_method_handlers(app: FastAPI) -> None:
    """405 with the full ``Allow`` list; ``OPTIONS`` on a known path: 204 with ``Allow``."""
    from fastapi.exception_handlers import http_exception_handler

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code != 405:
            return await http_exception_handler(request, exc)
        allow = ", ".join(allowed_methods(app, request.url.path))
        if request.method == "OPTIONS":
            return Response(status_code=204, headers={"Allow": allow})
        return JSONResponse({"detail": "Method Not Allowed"}, status_code=405, headers={"Allow": allow})
