"""``python -m bench transfer``: what moving a bank costs — export to a transfer archive, then restore it into an
empty database (another SQLite file, or the PostgreSQL database of ``--database-url``).

The banks are the synthetic ones of ``python -m bench scale`` (LoCoMo turns replicated to N memories, one document
and chunk each, written through the store). Per size: the seconds to export (one consistent snapshot streamed into
the ZIP) and to restore (check every record, then one transaction; vectors reused, so no embedding), the archive's
size, and the Python heap's peak during each (``tracemalloc``: what the code holds at once, which must stay bounded
as the bank grows, not the archive or the rows).
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, write_json
from bench.scale import BANK, LOCOMO, _corpus, build_bank
from mindbank.config import Settings
from mindbank.engine.transfer.importer import ImportOptions
from mindbank.engine.transfer.writer import ExportOptions
from mindbank.service.facade import MindBank

T = TypeVar("T")


def _measured(fn: Callable[[], T]) -> tuple[T, float, float]:
    """``fn()``, its seconds and the Python heap's peak (MiB) while it ran."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = fn()
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()
    return result, seconds, peak


def run(
    sizes: list[int], *, database_url: str | None = None, json_out: Path | None = None, console: Console | None = None
) -> dict[str, Any]:
    """Build a bank of each size, export it and restore the archive elsewhere; prints a table and writes JSON."""
    console = console or Console()
    embedder, _ = load_embedder()
    items, vectors, _ = _corpus(sorted(LOCOMO.glob("*.json")), embedder)
    rows: list[dict[str, Any]] = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="mindbank-transfer-") as folder:
            source = MindBank.open(Settings(database_url=str(Path(folder) / "source.db"),
                                            enable_auto_consolidation=False), embedder=embedder)  # fmt: skip
            target = MindBank.open(Settings(database_url=database_url or str(Path(folder) / "target.db"),
                                            enable_auto_consolidation=False), embedder=embedder)  # fmt: skip
            try:
                target.store.delete_bank(BANK)
                build_bank(source, items, vectors, size)
                archive = Path(folder) / "bank.zip"
                with archive.open("w+b") as out:
                    _, export_s, export_peak = _measured(partial(source.write_bank_archive, BANK, out, ExportOptions()))
                with archive.open("rb") as inp:
                    restore = ImportOptions("restore", BANK)
                    counts, import_s, import_peak = _measured(partial(target.read_bank_archive, inp, restore))
                assert counts["facts_imported"] == size and counts["vectors_computed"] == 0, counts
                rows.append({
                    "memories": size,
                    "archive_mib": round(archive.stat().st_size / (1 << 20), 1),
                    "export_seconds": round(export_s, 2),
                    "export_peak_mib": round(export_peak, 1),
                    "import_seconds": round(import_s, 2),
                    "import_peak_mib": round(import_peak, 1),
                })  # fmt: skip
            finally:
                target.store.delete_bank(BANK)
                source.close()
                target.close()
    table = Table(title=f"transfer (sqlite -> {'postgres' if database_url else 'sqlite'})")
    for key in rows[0]:
        table.add_column(key, justify="right")
    for r in rows:
        table.add_row(*(str(v) for v in r.values()))
    console.print(table)
    report = {
        "command": command_line(),
        "machine": machine_info(),
        "target": "postgres" if database_url else "sqlite",
        "rows": rows,
    }
    name = "transfer-postgres.json" if database_url else "transfer-sqlite.json"
    write_json(json_out or RESULTS_DIR / name, report)
    return report
