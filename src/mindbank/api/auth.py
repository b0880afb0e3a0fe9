"""Optional API key: when ``MINDBANK_API_KEY`` is set, every request but ``/health`` needs ``Bearer <key>``.

A pure ASGI middleware rather than a FastAPI dependency, so it guards everything mounted on the app (the HTTP API,
the MCP endpoints, anything added later) and never buffers a streamed response. The key is compared in constant
time and never written to a log or an error message.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

# probes stay open so orchestrators need no key; /metrics is guarded (scrapers send the bearer token)
OPEN_PATHS: frozenset[str] = frozenset({"/health", "/health/live", "/health/ready"})
_UNAUTHORIZED = json.dumps({"detail": "Missing or invalid API key (send 'Authorization: Bearer <key>')"}).encode()


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
    """Answers 401 (``WWW-Authenticate: Bearer``) to any HTTP request without the right bearer token, and closes
    websockets with policy-violation code 1008. Lifespan events and ``open_paths`` pass through untouched."""

    def __init__(self, app: ASGIApp, *, api_key: str, open_paths: Iterable[str] = OPEN_PATHS) -> None:
        if not api_key:
            raise ValueError("api_key must not be empty")
        self.app = app
        self._key = api_key.encode()
        self._open = frozenset(open_paths)

    def authorized(self, scope: Scope) -> bool:
        """Whether the request in ``scope`` carries the key (constant-time comparison)."""
        token = bearer_token(scope.get("headers") or ())
        # compare_digest on bytes of any length: it only leaks whether the lengths differ, never where they do
        return token is not None and hmac.compare_digest(token, self._key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in self._open or self.authorized(scope):
            await self.app(scope, receive, send)
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
