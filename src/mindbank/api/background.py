"""Serve the app on a free loopback port from a background thread: for tests and benchmarks that drive the real
HTTP path in-process (``mindbank serve`` runs uvicorn in the foreground instead)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from mindbank.api.app import create_app
from mindbank.service import MindBank

START_TIMEOUT_S = 30.0


@contextmanager
def serve_in_thread(mb: MindBank, *, run_worker: bool = True) -> Iterator[str]:
    """Serve ``mb`` on 127.0.0.1 (a free port) while the block runs; yields the base URL. With ``run_worker`` the
    app's in-process worker runs too. Raises ``RuntimeError`` when the server does not start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(create_app(mb, run_worker=run_worker), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the in-process server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
