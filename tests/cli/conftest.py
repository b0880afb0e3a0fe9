"""A live mindbank server on 127.0.0.1 (uvicorn in a thread) for the CLI tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn

from mindbank.api import create_app
from mindbank.service import MindBank


@contextmanager
def live_server(mb: MindBank, *, run_worker: bool = True) -> Iterator[str]:
    """Serve ``mb`` on a free loopback port; yields the base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(create_app(mb, run_worker=run_worker), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def server(mindbank: MindBank) -> Iterator[str]:
    """Base URL of a live server with its worker running."""
    with live_server(mindbank) as url:
        yield url


@pytest.fixture
def idle_server(mindbank: MindBank) -> Iterator[str]:
    """Base URL of a live server whose worker is off: queued operations stay pending."""
    with live_server(mindbank, run_worker=False) as url:
        yield url
