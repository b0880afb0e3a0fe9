"""``python -m bench chunk-neighbours``: what ``include.chunks.neighbours`` costs beside ``include.chunks`` alone.

One LoCoMo conversation is retained (``MindBank.retain``, one document per turn) into a bank, its questions are
recalled once each (``max_tokens`` 4096, about a hundred results), and for each result list the chunks are read
(:func:`mindbank.engine.chunk_context.result_chunks`, ``max_tokens`` 8192) without and with neighbours, alternately,
``--rounds`` times. Reported: medians of this thread's CPU time and of wall time for each, the paired median of the
difference, and a digest of the neighbour output, so that two trees run on the same database can be compared result
for result. With ``--database`` (a SQLite path or a postgresql:// URL) a bank already there is reused, so two trees
can be measured on one bank (memory ids are random: a fresh bank breaks score ties differently).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, load_embedder, machine_info, write_json
from mindbank.config import Settings
from mindbank.domain.scope import MemoryFilter
from mindbank.engine.chunk_context import result_chunks
from mindbank.importers import load_locomo, locomo_items
from mindbank.service.facade import MindBank

BANK = "chunk-neighbours"


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def run(
    path: Path, *, database: str | None = None, questions: int = 60, rounds: int = 3, json_out: Path | None = None
) -> dict[str, Any]:
    """Measure and print one JSON report; see the module docstring."""
    embedder, _ = load_embedder()
    conv = load_locomo(path)
    asked = [q.question for q in conv.qa if q.category != 5][:questions]
    with tempfile.TemporaryDirectory(prefix="mindbank-chunks-") as folder:
        url = database or str(Path(folder) / "chunks.db")
        mb = MindBank.open(Settings(database_url=url, enable_auto_consolidation=False), embedder=embedder)
        try:
            if not mb.store.bank_exists(BANK):
                mb.retain(BANK, locomo_items(conv))
            hit_lists = [mb.recall(BANK, q, max_tokens=4096) for q in asked]
            flt = MemoryFilter()
            digest = hashlib.sha256()
            cpu: dict[bool, list[float]] = {False: [], True: []}
            wall: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(rounds):
                for hits in hit_lists:
                    for neighbours in (False, True):
                        c0, w0 = time.thread_time(), time.perf_counter()
                        out = result_chunks(mb.store, BANK, hits, flt, max_tokens=8192, neighbours=neighbours)
                        cpu[neighbours].append(time.thread_time() - c0)
                        wall[neighbours].append(time.perf_counter() - w0)
                        if neighbours:
                            digest.update(json.dumps(out).encode())
        finally:
            mb.close()
    report = {
        "benchmark": "chunk-neighbours",
        "backend": "postgres" if database and database.startswith("postgres") else "sqlite",
        "command": f"python -m bench chunk-neighbours {path.name}" + (" --database URL" if database else ""),
        "machine": machine_info(),
        "recalls": len(hit_lists),
        "results_median": statistics.median(len(h) for h in hit_lists),
        "cpu_ms": {"chunks": _ms(cpu[False]), "with_neighbours": _ms(cpu[True]),
                   "paired_difference": _ms([b - a for a, b in zip(cpu[False], cpu[True], strict=True)])},
        "wall_ms": {"chunks": _ms(wall[False]), "with_neighbours": _ms(wall[True]),
                    "paired_difference": _ms([b - a for a, b in zip(wall[False], wall[True], strict=True)])},
        "neighbours_digest": digest.hexdigest()[:16],
    }  # fmt: skip
    print(json.dumps(report))
    write_json(json_out or RESULTS_DIR / "chunk-neighbours.json", report)
    return report
