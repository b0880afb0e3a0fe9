"""Webhook transport: which targets a webhook may reach, and one signed HTTP delivery to such a target.

Server-side request forgery is the risk of a server that POSTs to URLs its users choose, so a target must be
``http(s)``, and every address its host resolves to must be a public one — not private, loopback, link-local,
multicast, reserved or unspecified (IPv4-mapped IPv6 addresses are checked as the IPv4 address they carry) — unless
the operator allows internal targets (``MINDBANK_WEBHOOK_ALLOW_PRIVATE_TARGETS``). The check runs when a webhook is
saved and again at every delivery, and the request is then sent to the very address that was checked (the URL's
host stays in ``Host`` and in TLS SNI/certificate checks), so a DNS answer that changes between check and connect
cannot redirect a delivery inside. Redirects are followed by hand, each hop checked the same way.

Signature (the reference's wire contract): ``X-Hindsight-Signature: sha256=<hex HMAC-SHA256 of the raw body>`` with
the webhook's secret, plus ``X-Hindsight-Signature-V2: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` for
receivers that reject replays by time.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

import httpx

from mindbank.domain.resource_checks import split_webhook_url
from mindbank.errors import InvalidInputError

MAX_REDIRECTS = 3
MAX_RESPONSE_CHARS = 2000  # of a receiver's answer kept in the delivery log
MAX_RESPONSE_BYTES = 8192  # read of a receiver's answer at most; the rest is never downloaded


class UnsafeTarget(ValueError):
    """A webhook URL mindbank will not call: not http(s), no host, unresolvable, or an internal address."""


class DeliveryError(Exception):
    """One delivery attempt failed before a response: connection, timeout, refused target or redirect."""


@dataclass(frozen=True, slots=True)
class DeliveryResponse:
    """A receiver's answer: status and (truncated) body."""

    status_code: int
    body: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300


NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and routes to: IPv4-mapped (``::ffff:a.b.c.d``), IPv4-compatible
    (``::a.b.c.d``), 6to4 (``2002:AABB:CCDD::``), Teredo (server and client) and NAT64 (``64:ff9b::a.b.c.d``,
    ``64:ff9b:1::/48``, the last 32 bits)."""
    carried: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        carried.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        carried.append(address.sixtofour)
    if address.teredo is not None:
        carried.extend(address.teredo)
    packed = int(address)
    if any(address in net for net in NAT64) or (packed >> 32 == 0 and packed > 1):
        carried.append(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
    return carried


def internal_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a delivery to ``address`` could reach inside: private (ULA ``fc00::/7`` included), loopback,
    link-local, multicast, reserved or unspecified, or an IPv6 address carrying such an IPv4 address
    (:func:`embedded_ipv4`)."""
    if not address.is_global or address.is_multicast or address.is_reserved or address.is_unspecified:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        return any(internal_address(inner) for inner in embedded_ipv4(address))
    return False


def resolve_target(url: str, *, allow_private: bool) -> tuple[str, int, list[str]]:
    """``(host, port, addresses)`` of an acceptable target URL; every address is public unless ``allow_private``.

    Raises :class:`UnsafeTarget` naming what is wrong (a malformed URL or one carrying credentials included)."""
    try:
        _, host, port = split_webhook_url(url)
    except InvalidInputError as exc:
        raise UnsafeTarget(exc.message) from exc
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve ({exc})") from exc
    addresses = sorted({str(info[4][0]) for info in infos})
    if not allow_private:
        bad = [a for a in addresses if internal_address(ipaddress.ip_address(a.split("%")[0]))]
        if bad:
            raise UnsafeTarget(
                f"host {host!r} resolves to internal address {bad[0]} (private, loopback and link-local targets "
                "are refused unless MINDBANK_WEBHOOK_ALLOW_PRIVATE_TARGETS is set)"
            )
    return host, port, addresses


def signature_headers(secret: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    """The signature headers of ``body`` under ``secret`` (module docstring)."""
    stamp = str(int(time.time() if now is None else now))
    key = secret.encode()
    timed = hmac.new(key, f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {
        "X-Hindsight-Signature": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
        "X-Hindsight-Signature-V2": f"t={stamp},v1={timed}",
    }


def _pinned(url: str, address: str) -> str:
    """``url`` with its host replaced by ``address`` (the checked IP), port kept."""
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


def _host_header(parts: SplitResult) -> str:
    """``Host`` for a target: its host and explicit port, never userinfo."""
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port}" if parts.port else host


class _Deadline:
    """One delivery's total time budget. httpx's timeouts bound each read, not the sum, so a receiver dripping a
    byte at a time could hold a delivery forever; at the deadline this shuts down every socket the delivery opened
    (found through httpcore's ``trace`` extension), which ends whatever read is waiting on it."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def left(self) -> float:
        return self.at - time.monotonic()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore trace hook: remember each new connection's socket."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            with self._lock:
                self._sockets.append(sock)
                if self.fired:
                    self._shutdown(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def _read_capped(response: httpx.Response) -> str:
    """At most :data:`MAX_RESPONSE_BYTES` of a streamed response body (the rest is never read)."""
    received = bytearray()
    try:
        for chunk in response.iter_raw():
            received += chunk
            if len(received) >= MAX_RESPONSE_BYTES:
                break
    except httpx.HTTPError:
        pass  # the status came back; the body is only kept for the log (the deadline may have cut it)
    return bytes(received[:MAX_RESPONSE_BYTES]).decode("utf-8", "replace")[:MAX_RESPONSE_CHARS]


def deliver(
    url: str, body: bytes, headers: Mapping[str, str], *, params: Mapping[str, str] | None = None, timeout: float,
    allow_private: bool,
) -> DeliveryResponse:  # fmt: skip
    """POST ``body`` to ``url`` (pinned to a checked address; redirects followed by hand, each hop checked).

    ``timeout`` (seconds) is the whole delivery's budget, redirects and the answer included: each connect, write
    and read gets what is left of it, and the answer is read up to :data:`MAX_RESPONSE_BYTES` while time is left,
    so a receiver that drips bytes or answers gigabytes holds a delivery no longer than ``timeout`` (the sockets
    are shut down then: :class:`_Deadline`) and costs no more memory than the cap. Raises :class:`DeliveryError`
    when no response came back (connection, timeout, an unsafe hop, too many redirects); any HTTP status is a
    response."""
    target = url
    with _Deadline(timeout) as deadline, httpx.Client(follow_redirects=False, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            left = deadline.left()
            if left <= 0:
                raise DeliveryError(f"no answer within {timeout:g} s")
            try:
                host, _, addresses = resolve_target(target, allow_private=allow_private)
            except UnsafeTarget as exc:
                raise DeliveryError(f"refused target {target}: {exc}") from exc
            parts = urlsplit(target)
            request_headers = {**headers, "Host": _host_header(parts)}
            extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
            request = client.build_request(
                "POST", _pinned(target, addresses[0]), content=body, headers=request_headers, params=params,
                extensions={**extensions, "timeout": httpx.Timeout(left).as_dict(), "trace": deadline.trace},
            )  # fmt: skip
            try:
                response = client.send(request, stream=True)
            except httpx.HTTPError as exc:
                if deadline.fired:
                    raise DeliveryError(f"no answer within {timeout:g} s") from exc
                raise DeliveryError(f"{type(exc).__name__}: {exc}") from exc
            try:
                if response.is_redirect and response.headers.get("location"):
                    target = urljoin(target, response.headers["location"])
                    params = None  # a redirect names its own query
                    continue
                return DeliveryResponse(response.status_code, _read_capped(response))
            finally:
                response.close()
    raise DeliveryError(f"more than {MAX_REDIRECTS} redirects")
