"""Retain throughput: how long one whole LoCoMo conversation takes to retain into a fresh database.

The embedder is loaded once beforehand and its load time is reported separately. Each repeat retains all
dialogue turns in one synchronous ``MindBank.retain`` call (split, embed, commit) into a new SQLite file. One
extra, untimed-in-the-headline run splits the time into preparing (splitting and embedding) and writing, and
writes the turns once more without their ``document_id`` (each fact then carries a repeat key the write looks up:
``write_without_document_ids_s``).

What consolidating the conversation costs is ``python -m bench consolidation`` (``bench/consolidation.py``).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, temp_bank, write_json
from mindbank.domain.timeutil import utcnow
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.importers import load_locomo, locomo_items

BANK = "retain-bench"


def run(
    path: Path, *, repeat: int = 3, json_out: Path | None = None, console: Console | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Time ``repeat`` retains of the conversation at ``path``; print a table, write JSON, return the report.

    Per run: ``seconds`` (wall clock of ``MindBank.retain``), ``memories``, and ``memories_per_s``.
    """
    console = console or Console()
    embedder, load_s = load_embedder()
    conv = load_locomo(path)
    items = locomo_items(conv)
    embedder.embed(["warm-up"])  # first inference allocates buffers; keep that out of the timed runs
    runs: list[dict[str, Any]] = []
    for _ in range(max(1, repeat)):
        with temp_bank(embedder) as bank:
            start = time.perf_counter()
            result = bank.retain(BANK, items)
            seconds = time.perf_counter() - start
        memories = len(result.memory_ids)
        runs.append(
            {"seconds": round(seconds, 3), "memories": memories, "memories_per_s": round(memories / seconds, 1)}
        )
    with temp_bank(embedder) as bank:  # where the time goes: splitting + embedding vs the database write
        start = time.perf_counter()
        documents = prepare_documents(items, embedder, now=utcnow())
        prepare_s = time.perf_counter() - start
        start = time.perf_counter()
        bank.store.write_documents(BANK, documents)
        write_s = time.perf_counter() - start
    with temp_bank(embedder) as bank:  # the same turns without document_id: every fact is looked up as a repeat
        documents = prepare_documents([replace(i, document_id=None) for i in items], embedder, now=utcnow())
        start = time.perf_counter()
        bank.store.write_documents(BANK, documents)
        loose_write_s = time.perf_counter() - start
    seconds = [r["seconds"] for r in runs]
    memories = runs[0]["memories"]
    best = min(seconds)
    summary = {
        "turns": len(items),
        "memories": memories,
        "seconds_best": best,
        "seconds_median": round(statistics.median(seconds), 3),
        "memories_per_s_best": round(memories / best, 1),
        "memories_per_s_median": round(memories / statistics.median(seconds), 1),
        "prepare_s": round(prepare_s, 3),
        "write_s": round(write_s, 3),
        "write_without_document_ids_s": round(loose_write_s, 3),
    }
    table = Table(title=f"retain {conv.sample_id} ({path.name}), embedder load {load_s:.2f} s (not timed)")
    for column in ("run", "turns", "memories", "seconds", "memories/s"):
        table.add_column(column, justify="right")
    for index, r in enumerate(runs, start=1):
        cells = (str(index), str(len(items)), str(r["memories"]), f"{r['seconds']:.2f}", f"{r['memories_per_s']:.1f}")
        table.add_row(*cells)
    console.print(table)
    console.print(
        f"median {summary['seconds_median']:.2f} s = {summary['memories_per_s_median']:.1f} memories/s; "
        f"split+embed {prepare_s:.2f} s, database write {write_s:.3f} s ({loose_write_s:.3f} s without document ids)"
    )
    report = {
        "benchmark": "retain",
        "command": command_line(),
        "machine": machine_info(),
        "embedder": getattr(embedder, "name", type(embedder).__name__),
        "embedder_load_s": round(load_s, 3),
        "file": str(path),
        "sample_id": conv.sample_id,
        "repeat": len(runs),
        "runs": runs,
        **summary,
    }
    out = json_out or RESULTS_DIR / "retain.json"
    write_json(out, report)
    console.print(f"wrote {out}")
    return report
