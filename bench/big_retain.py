"""One large memory (1 MB by default) retained async into a ``mindbank serve`` process on a fresh SQLite file:
accepted → completed, with the server's embedder as configured by ``MINDBANK_EMBEDDING_*`` (inherited by the server
process), so the bundled MiniLM and an external embedding server compare on the same text.

    python -m bench big-retain [--chars 1000000] [--json bench/results/big-retain.json] [--timeout 900]
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.common import RESULTS_DIR, command_line, machine_info, write_json
from bench.load import BIG_CHARS, Server, big_async_retain


def run(
    *, chars: int = BIG_CHARS, json_out: Path | None = None, console: Console | None = None, timeout_s: float = 900.0
) -> dict[str, Any]:
    """Start a server, retain one ``chars``-character memory async, report the time to completion (seconds);
    ``timeout_s`` is how long to wait for it (a slow external embedder needs more than the default)."""
    console = console or Console()
    embedding = {k: v for k, v in os.environ.items() if k.startswith("MINDBANK_EMBEDDING_") and "KEY" not in k}
    with tempfile.TemporaryDirectory(prefix="mindbank-big-") as tmp:
        server = Server(str(Path(tmp) / "big.db"), Path(tmp) / "server.log")
        try:
            big = big_async_retain(server.base, chars, timeout_s=timeout_s)
        finally:
            server.stop()
    report = {"benchmark": "big-retain", "command": command_line(), "machine": machine_info(),
              "embedding": embedding or {"MINDBANK_EMBEDDING_PROVIDER": "local"}, **big}  # fmt: skip
    console.print(
        f"{chars:,}-character async retain ({report['embedding'].get('MINDBANK_EMBEDDING_MODEL', 'MiniLM')}): "
        f"{big['accepted_to_completed_s']} s, {big['memories']} memories, status {big['status']}"
    )
    write_json(json_out or RESULTS_DIR / "big-retain.json", report)
    return report
