"""Browser tests: Playwright (the pip package) driving Debian's Chromium headless (``/usr/bin/chromium``, installed by
``make test`` as the PostgreSQL server is; no ``playwright install``). Without Chromium or Playwright these tests
skip, except under CI (``CI`` set), where they fail. Screenshots go to ``tests/browser/artifacts/`` (git-ignored)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("MINDBANK_TEST_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).with_name("artifacts")
FLAGS = [
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module. Not per session: Playwright's sync API keeps an event loop running in
    this thread while it is open, which would break every later test that calls ``asyncio.run``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found: `make test` installs Debian's chromium (apt-get install -y chromium)")
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=(["--no-sandbox"] if root else []) + FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (emptied once per session)."""
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return ARTIFACTS
