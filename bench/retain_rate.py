"""Retain throughput of two source trees in one run: what a change costs retain, measured under the same load.

On a shared machine two throughput runs minutes apart differ by the load, not by the code. So the comparison runs
both trees in the same run, alternating: each repetition retains the conversation (one call, a fresh SQLite bank)
once with the ``before`` tree's ``src`` and once with this tree's, each in its own Python process (so each imports
its own ``mindbank``), the order swapped every repetition so a load drift falls on both sides alike. Reported: each
side's memories/s of wall time and of CPU time (``time.process_time``: what the retain itself took, whatever the
machine's load), each the median of ``repeat``, the ratio of the medians after / before and the median of the
per-repetition ratios (paired: the two runs of a repetition saw nearly the same load); the 1-minute load average at
the start and the end of the comparison says how busy the machine was.

``python -m bench consolidation PATH... --before-src DIR`` runs it (``DIR`` is the ``src`` folder of the other tree,
e.g. from ``git archive <commit> src | tar -x -C /tmp/before``); ``python -m bench.retain_rate PATH`` is one
measurement (the child process), printing ``{"memories_per_s": …, "memories_per_cpu_s": …, "memories": …,
"mindbank": <package path>}``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_ROOT = Path(__file__).resolve().parent.parent
SRC = BENCH_ROOT / "src"
BANK = "retain-rate-bench"


def measure(path: Path) -> dict[str, Any]:
    """One retain of the conversation at ``path`` in one call into a fresh bank with the bundled MiniLM embedder:
    memories/s (embedder load and warm-up not timed) and which ``mindbank`` package did it."""
    import mindbank
    from bench.common import temp_bank
    from mindbank.importers import load_locomo, locomo_items
    from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()  # the bundled model, constructed the same way in older trees
    embedder.embed(["warm-up"])
    items = locomo_items(load_locomo(path))
    with temp_bank(embedder) as bank:
        start, cpu = time.perf_counter(), time.process_time()
        n = len(bank.retain(BANK, items).memory_ids)
        seconds, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    return {
        "memories_per_s": round(n / seconds, 2), "memories_per_cpu_s": round(n / cpu_s, 2), "memories": n,
        "mindbank": str(Path(mindbank.__file__).parent),
    }  # fmt: skip


def _child(path: Path, src: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(BENCH_ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "bench.retain_rate", str(path)],
        env=env, cwd=BENCH_ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(found["mindbank"]).resolve() != (src / "mindbank").resolve():
        raise RuntimeError(f"the child imported {found['mindbank']}, not the tree under {src}")
    return found


def compare(path: Path, before_src: Path, repeat: int = 5) -> dict[str, Any]:
    """Retain throughput of ``before_src`` and of this tree, alternating, ``repeat`` times each (module
    docstring). Raises ``subprocess.CalledProcessError`` when a child fails and ``RuntimeError`` when a child
    imported another ``mindbank`` than the tree it was given."""
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    load_start = os.getloadavg()[0]
    for i in range(repeat):
        sides = [("before", before_src), ("after", SRC)]
        for side, src in sides if i % 2 == 0 else sides[::-1]:
            runs[side].append(_child(path, src))
    out: dict[str, Any] = {"file": str(path), "repeat": repeat, "before_src": str(before_src)}
    for key in ("memories_per_s", "memories_per_cpu_s"):
        before, after = ([r[key] for r in runs[side]] for side in ("before", "after"))
        out[f"before_{key}"], out[f"after_{key}"] = before, after
        out[f"before_{key}_median"], out[f"after_{key}_median"] = statistics.median(before), statistics.median(after)
        out[f"after_over_before_{key}"] = round(statistics.median(after) / statistics.median(before), 3)
        # each repetition's two runs are minutes apart at most: their ratio cancels most of a load drift
        out[f"after_over_before_{key}_paired_median"] = round(
            statistics.median(a / b for a, b in zip(after, before, strict=True)), 3
        )
    out["load_avg_1m"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    return out


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
