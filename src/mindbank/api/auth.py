"""API keys: when ``MINDBANK_API_KEY`` is set, every request but ``/health`` needs ``Bearer <key>``, either that admin
key or a scoped key created with it (docs/security.md).

A pure ASGI middleware rather than a FastAPI dependency, so it guards everything mounted on the app (the HTTP API,
the MCP endpoints, anything added later) and never buffers a streamed response. It leaves the caller's
:class:`~mindbank.domain.access.Principal` in the ASGI scope under ``PRINCIPAL_SCOPE_KEY``, where the API's
``authorize`` dependency and the MCP endpoints read it. Keys are compared in constant time and never written to a
log or an error message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from mindbank.domain.access import PRINCIPAL_SCOPE_KEY, Principal

# probes stay open so orchestrators need no key; /metrics is guarded (scrapers send the bearer token)
OPEN_PATHS: frozenset[str] = frozenset({"/health", "/health/live", "/health/ready"})
_UNAUTHORIZED = json.dumps({"detail": "Missing or invalid API key (send 'Authorization: Bearer <key>')"}).encode()

Authenticate = Callable[[str], Principal | None]


def bearer_token(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive), or None."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.strip().partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return token.strip()
            return None
    return None


class ApiKeyMiddleware:
    """Answers 401 (``WWW-Authenticate: Bearer``) to any HTTP request whose bearer token ``authenticate`` does not
    accept, and closes such websockets with policy-violation code 1008. Lifespan events and ``open_paths`` pass
    through untouched. ``authenticate(token)`` returns the caller or None (it may read the store: it runs in a
    worker thread)."""

    def __init__(self, app: ASGIApp, *, authenticate: Authenticate, open_paths: Iterable[str] = OPEN_PATHS) -> None:
        self.app = app
        self._authenticate = authenticate
        self._open = frozenset(open_paths)

    async def principal(self, scope: Scope) -> Principal | None:
        """The caller the request in ``scope`` authenticates as, or None."""
        token = bearer_token(scope.get("headers") or ())
        if token is None:
            return None
        try:
            text = token.decode("ascii")
        except UnicodeDecodeError:
            return None
        return await run_in_threadpool(self._authenticate, text)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in self._open:
            await self.app(scope, receive, send)
            return
        principal = await self.principal(scope)
        if principal is not None:
            await self.app({**scope, PRINCIPAL_SCOPE_KEY: principal}, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": _UNAUTHORIZED})
