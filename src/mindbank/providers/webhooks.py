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

import hashlib
import hmac
import ipaddress
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

MAX_REDIRECTS = 3
MAX_RESPONSE_CHARS = 2000  # of a receiver's answer kept in the delivery log
SCHEMES = ("http", "https")


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


def _internal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast or address.is_reserved or address.is_unspecified


def resolve_target(url: str, *, allow_private: bool) -> tuple[str, int, list[str]]:
    """``(host, port, addresses)`` of an acceptable target URL; every address is public unless ``allow_private``.

    Raises :class:`UnsafeTarget` naming what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise UnsafeTarget(f"must be an http or https URL, got scheme {parts.scheme or '(none)'!r}")
    host = parts.hostname
    if not host:
        raise UnsafeTarget("has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget(f"has an invalid port: {exc}") from exc
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve ({exc})") from exc
    addresses = sorted({str(info[4][0]) for info in infos})
    if not allow_private:
        bad = [a for a in addresses if _internal(ipaddress.ip_address(a.split("%")[0]))]
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


def deliver(
    url: str, body: bytes, headers: Mapping[str, str], *, params: Mapping[str, str] | None = None, timeout: float,
    allow_private: bool,
) -> DeliveryResponse:  # fmt: skip
    """POST ``body`` to ``url`` (pinned to a checked address; redirects followed by hand, each hop checked).

    Raises :class:`DeliveryError` when no response came back (connection, timeout, an unsafe hop, too many
    redirects); any HTTP status is a response."""
    target = url
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                host, _, addresses = resolve_target(target, allow_private=allow_private)
            except UnsafeTarget as exc:
                raise DeliveryError(f"refused target {target}: {exc}") from exc
            request_headers = {**headers, "Host": urlsplit(target).netloc}
            extensions = {"sni_hostname": host} if urlsplit(target).scheme == "https" else {}
            try:
                response = client.post(
                    _pinned(target, addresses[0]), content=body, headers=request_headers, params=params,
                    extensions=extensions,
                )  # fmt: skip
            except httpx.HTTPError as exc:
                raise DeliveryError(f"{type(exc).__name__}: {exc}") from exc
            if response.is_redirect and response.headers.get("location"):
                target = urljoin(target, response.headers["location"])
                params = None  # a redirect names its own query
                continue
            return DeliveryResponse(response.status_code, response.text[:MAX_RESPONSE_CHARS])
    raise DeliveryError(f"more than {MAX_REDIRECTS} redirects")
