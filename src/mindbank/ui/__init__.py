"""The control plane: a static web app served at ``/ui`` that shows and steers banks, the knowledge base and mental
models through the public HTTP API, called from the browser (nothing here reads the database or imports another
surface; :mod:`mindbank.server` mounts it).

The app is plain ES modules, CSS and one HTML page under ``static/`` (no build step, no third-party script, no CDN).
Its responses carry a Content-Security-Policy that allows requests to this server only, so the page cannot reach
anything else even if a memory's text tried to make it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.responses import RedirectResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).with_name("static")
PREFIX = "/ui"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class _Headers:
    """Adds the control plane's security headers to every response of the static app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["content-security-policy"] = CONTENT_SECURITY_POLICY
                headers["x-content-type-options"] = "nosniff"
                headers["referrer-policy"] = "no-referrer"
                headers["cache-control"] = "no-cache"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def public_paths(prefix: str = PREFIX) -> frozenset[str]:
    """Every path the control plane serves: its static files hold no data, so they stay reachable without the API
    key (the page then asks for the key, and every data request carries it)."""

    def files() -> Iterator[str]:
        for path in STATIC.rglob("*"):
            if path.is_file():
                yield f"{prefix}/{path.relative_to(STATIC).as_posix()}"

    return frozenset({prefix, f"{prefix}/", *files()})


def routes(prefix: str = PREFIX) -> list[Route | Mount]:
    """The routes to add to the server app: ``/ui`` redirects to ``/ui/``, which serves ``index.html``."""

    def to_index(_: object) -> RedirectResponse:
        return RedirectResponse(f"{prefix}/", status_code=307)

    return [
        Route(prefix, to_index, include_in_schema=False),
        Mount(prefix, app=_Headers(StaticFiles(directory=STATIC, html=True)), name="ui"),
    ]
