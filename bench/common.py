"""Shared helpers of the benchmarks: machine description, embedder loading, temporary banks, JSON output."""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mindbank.config import Settings
from mindbank.providers.embeddings.base import Embedder
from mindbank.service.facade import MindBank

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()`` or ``"unknown"``."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, Any]:
    """What the figures were measured on: CPU count and model, OS platform, Python version, and the 1-minute load
    average when the run started (other work on the machine slows the timings)."""
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "load_avg_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def load_embedder() -> tuple[Embedder, float]:
    """Load the configured embedder once (the bundled MiniLM unless ``MINDBANK_EMBEDDING_*`` names another, e.g. a
    llama.cpp server); returns ``(embedder, load seconds)``."""
    from mindbank.config import Settings
    from mindbank.providers.embeddings.factory import build_embedder

    start = time.perf_counter()
    embedder = build_embedder(Settings.from_env())
    return embedder, time.perf_counter() - start


@contextmanager
def temp_bank(embedder: Embedder) -> Iterator[MindBank]:
    """A ``MindBank`` on a fresh SQLite file in a temporary folder, removed afterwards (worker not started)."""
    with tempfile.TemporaryDirectory(prefix="mindbank-bench-") as folder:
        bank = MindBank.open(Settings(database_url=str(Path(folder) / "bench.db")), embedder=embedder)
        try:
            yield bank
        finally:
            bank.close()


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as indented JSON to ``path`` (parent folders created); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def command_line() -> str:
    """The command as run, e.g. ``python -m bench locomo-recall ...``."""
    return " ".join(["python -m bench", *sys.argv[1:]])


@contextmanager
def live_server(bank: MindBank) -> Iterator[str]:
    """Serve ``bank`` over HTTP on a free loopback port (the app's worker running); yields the base URL. Benchmarks
    that measure what a user gets go through this real path."""
    from mindbank.server import serve_in_thread

    with serve_in_thread(bank) as url:
        yield url
