"""The webhook transport: internal targets refused (every resolved address checked), redirects followed by hand
with each hop checked, signatures."""

from __future__ import annotations

import hashlib
import hmac
import threading
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
