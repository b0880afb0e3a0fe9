"""Host and Origin checks for every HTTP route (DNS rebinding), and the CORS origins that go with them.

A web page the user visits can make the browser send requests to ``http://127.0.0.1:8888`` (or, after rebinding
its own domain to that address, to ``http://evil.example:8888``). The browser always says who is asking: ``Host``
names the host the page thinks it talks to, ``Origin`` the page's own origin. So, as the MCP SDK does for its
endpoint (and for every route here, MCP included):

* bound to a loopback address (the default ``127.0.0.1``): only loopback host names (``localhost``, ``127.0.0.1``,
  ``[::1]``, any port) and those of ``MINDBANK_ALLOWED_HOSTS`` are answered (else 421), and a request carrying an
  ``Origin`` must come from a loopback origin, an origin of ``MINDBANK_ALLOWED_ORIGINS``, or the server's own
  (same-origin) (else 403);
* bound to another address: ``MINDBANK_ALLOWED_HOSTS`` (default any: a warning is logged at start-up, because
  then only an API key protects the server from rebinding) and the same origin rule without the loopback
  allowance, so a deployment behind a load balancer names its public host and browser origins.

``GET /health`` skips the host check (load balancers probe it by address). Requests without ``Origin`` (curl, SDKs,
agents) only meet the host check. CORS headers are added for the allowed cross-origin callers.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("mindbank")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
LOOPBACK_ORIGIN_REGEX = r"^https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$"
HOST_CHECK_EXEMPT = frozenset({"/health"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name, IPv6 with or without brackets) is a loopback one."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, str | None]:
    """``(host, port)`` of a Host header value (``[::1]:8888``, ``example.com``...); host lowercased."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, None


def parse_list(raw: str) -> tuple[str, ...]:
    """A comma-separated setting as a tuple of trimmed, non-empty, lowercased entries."""
    return tuple(p.strip().lower().rstrip("/") for p in raw.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """Which Host and Origin values an HTTP server answers. Build with :meth:`for_bind`."""

    loopback: bool
    hosts: tuple[str, ...]  # "*", "name", "name:port", "*.suffix"
    origins: tuple[str, ...]  # "*" or "scheme://host[:port]"

    @classmethod
    def for_bind(cls, bind_host: str, allowed_hosts: str = "", allowed_origins: str = "") -> HostPolicy:
        """The policy of a server bound to ``bind_host`` with the two settings (comma lists)."""
        loopback = is_loopback(bind_host)
        hosts = parse_list(allowed_hosts)
        if not hosts and not loopback:
            hosts = ("*",)
        return cls(loopback=loopback, hosts=hosts, origins=parse_list(allowed_origins))

    @property
    def open_to_any_host(self) -> bool:
        """Whether any Host is answered (worth a start-up warning on a non-loopback bind)."""
        return "*" in self.hosts

    def host_allowed(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header is answered."""
        if "*" in self.hosts:
            return True
        if not header:
            return False  # HTTP/1.1 requires Host; a client that omits it is not a browser we must serve
        host, port = _split_host(header)
        if self.loopback and is_loopback(host):
            return True
        for entry in self.hosts:
            if entry.startswith("*.") and host.endswith(entry[1:]):
                return True
            if entry == host or (port is not None and entry == f"{host}:{port}"):
                return True
        return False

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        """Whether a request with this ``Origin`` (None: not a browser's cross-origin call) may proceed."""
        if origin is None:
            return True
        origin = origin.strip().lower().rstrip("/")
        if "*" in self.origins or origin in self.origins:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null" (sandboxed frames, file://) and other oddities
        if self.loopback and is_loopback(parts.hostname):
            return True
        return host_header is not None and parts.netloc == host_header.strip().lower()  # same origin

    def cors_origins(self) -> tuple[Sequence[str], str | None]:
        """``(allow_origins, allow_origin_regex)`` for the CORS middleware."""
        return list(self.origins), LOOPBACK_ORIGIN_REGEX if self.loopback else None


class HostOriginGuard:
    """ASGI middleware enforcing a :class:`HostPolicy` on every HTTP request (421 for a Host, 403 for an Origin),
    with CORS headers for the allowed cross-origin callers inside it."""

    def __init__(self, app: ASGIApp, *, policy: HostPolicy) -> None:
        self.policy = policy
        origins, regex = policy.cors_origins()
        self.app: ASGIApp = app
        if origins or regex:
            self.app = CORSMiddleware(
                app,
                allow_origins=origins,
                allow_origin_regex=regex,
                allow_methods=["*"],
                allow_headers=["*"],
                expose_headers=["Allow"],
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers") or ()}
        host = headers.get(b"host", b"").decode("latin-1") or None
        origin = headers[b"origin"].decode("latin-1") if b"origin" in headers else None
        if scope["path"] not in HOST_CHECK_EXEMPT and not self.policy.host_allowed(host):
            await self._refuse(scope, send, 421, f"Host {host!r} is not allowed here (MINDBANK_ALLOWED_HOSTS)")
            return
        if not self.policy.origin_allowed(origin, host):
            await self._refuse(scope, send, 403, f"Origin {origin!r} is not allowed here (MINDBANK_ALLOWED_ORIGINS)")
            return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, status: int, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"detail": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def warn_if_open(policy: HostPolicy, bind_host: str) -> None:
    """Log a start-up warning when a non-loopback server answers any Host."""
    if not policy.loopback and policy.open_to_any_host:
        log.warning(
            "mindbank listens on %s and answers any Host header: set MINDBANK_ALLOWED_HOSTS to the names clients "
            "use (DNS rebinding protection) and MINDBANK_API_KEY (see docs/security.md)",
            bind_host,
        )
