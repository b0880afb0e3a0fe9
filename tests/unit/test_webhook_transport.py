"""The webhook transport: internal targets refused (every resolved address checked), redirects followed by hand
with each hop checked, signatures."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mindbank.providers.webhooks import DeliveryError, UnsafeTarget, deliver, resolve_target, signature_headers


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server: /loop redirects to itself forever, /hop redirects to /ok, /out to a private address."""
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            paths.append(self.path)
            target = {"/loop": "/loop", "/hop": "/ok", "/out": "http://10.0.0.1/x"}.get(self.path.split("?")[0])
            self.send_response(302 if target else 200)
            if target:
                self.send_header("Location", target)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", paths
    httpd.shutdown()
    httpd.server_close()


def test_redirects_are_followed_and_each_hop_checked(server: tuple[str, list[str]]) -> None:
    base, paths = server
    assert deliver(f"{base}/hop", b"{}", {}, params={"a": "1"}, timeout=5, allow_private=True).status_code == 200
    assert paths == ["/hop?a=1", "/ok"]
    with pytest.raises(DeliveryError, match="redirects"):
        deliver(f"{base}/loop", b"{}", {}, timeout=5, allow_private=True)
    with pytest.raises(DeliveryError, match="refused target"):
        deliver(f"{base}/ok", b"{}", {}, timeout=5, allow_private=False)  # checked again at delivery time


def test_internal_addresses_are_refused() -> None:
    assert resolve_target("https://93.184.215.14/hook", allow_private=False)[2] == ["93.184.215.14"]
    for url in ("http://127.0.0.2/", "http://[fe80::1]/", "http://224.0.0.1/", "http://100.64.0.1/"):
        with pytest.raises(UnsafeTarget):
            resolve_target(url, allow_private=False)
    assert resolve_target("http://127.0.0.2/", allow_private=True)[2] == ["127.0.0.2"]
    with pytest.raises(UnsafeTarget, match="port"):
        resolve_target("http://example.com:99999/", allow_private=True)


def test_signature_headers() -> None:
    headers = signature_headers("k", b'{"a":1}', now=1700000000)
    assert headers["X-Hindsight-Signature"] == "sha256=" + hmac.new(b"k", b'{"a":1}', hashlib.sha256).hexdigest()
    expected = hmac.new(b"k", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    assert headers["X-Hindsight-Signature-V2"] == f"t=1700000000,v1={expected}"


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:127.0.0.1",  # IPv4-mapped
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a00:1::",  # 6to4 of 10.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
        "64:ff9b:1::a00:1",  # local-use NAT64 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo whose client is 127.0.0.1
        "fd00::1",  # ULA
        "fe80::1",  # link-local
        "::1",
        "::",
        "::127.0.0.1",  # IPv4-compatible
    ],
)
def test_every_ipv6_form_of_an_internal_address_is_refused(address: str) -> None:
    with pytest.raises(UnsafeTarget, match="internal address"):
        resolve_target(f"http://[{address}]/hook", allow_private=False)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://[::1", "not a valid URL"),
        ("http://user:pw@93.184.215.14/", "credentials"),
        ("http://@93.184.215.14/", "credentials"),
        ("ftp://93.184.215.14/", "scheme"),
        ("http:///path", "no host"),
        ("http://93.184.215.14/a b", "spaces"),
    ],
)
def test_malformed_urls_are_refused_by_name(url: str, message: str) -> None:
    with pytest.raises(UnsafeTarget, match=message):
        resolve_target(url, allow_private=True)


@pytest.fixture
def hostile() -> Iterator[str]:
    """A loopback receiver: /huge answers 50 MB, /drip a byte every 0.2 s forever, /headers drips its headers."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                if self.path == "/headers":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    for _ in range(200):
                        self.wfile.write(b"X")
                        self.wfile.flush()
                        time.sleep(0.2)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(50 << 20))
                self.end_headers()
                if self.path == "/huge":
                    for _ in range(50):
                        self.wfile.write(b"x" * (1 << 20))
                else:
                    for _ in range(200):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        time.sleep(0.2)
            except OSError:
                pass  # the client hung up: what the test wants

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_receiver_cannot_hold_a_delivery_or_flood_it(hostile: str) -> None:
    huge = deliver(f"{hostile}/huge", b"{}", {}, timeout=10, allow_private=True)
    assert huge.status_code == 200 and len(huge.body) <= 2000  # read up to the cap, never the 50 MB
    for path in ("/drip", "/headers"):
        started = time.monotonic()
        try:
            deliver(f"{hostile}{path}", b"{}", {}, timeout=1, allow_private=True)
        except DeliveryError as exc:
            assert "within 1 s" in str(exc)
        assert time.monotonic() - started < 10, path  # one total deadline (the drip lasts 40 s), not one per read
