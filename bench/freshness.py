"""``python -m bench freshness PATH``: how long after a retain is accepted the auto-refreshing models cite it.

Imports a LoCoMo conversation session by session into the embedded default with the in-process worker running
and one ``refresh_after_consolidation`` model per speaker (extractive engine, no rate limit). For every memory a
model ends up citing, the lag is the time from its retain call returning to the first poll that finds it cited.
Polling runs every 10 ms, so figures carry up to 10 ms of sampling error.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.common import RESULTS_DIR, load_embedder, machine_info, temp_bank, write_json
from mindbank.domain.document import StructuredDocument
from mindbank.importers import load_locomo, locomo_items

BANK = "fresh"
POLL_SECONDS = 0.01
SETTLE_SECONDS = 10.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _cited(mb: Any, model_ids: list[str]) -> set[str]:
    ids: set[str] = set()
    for model_id in model_ids:
        model = mb.store.get_mental_model(BANK, model_id)
        if model is not None and model.structured_document:
            ids |= set(StructuredDocument.from_dict(model.structured_document).memory_ids())
    return ids


def run(path: Path, *, json_out: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Run on one LoCoMo file; prints and writes the lag distribution (milliseconds)."""
    console = console or Console()
    conv = load_locomo(path)
    embedder, _ = load_embedder()
    lags: list[float] = []
    with temp_bank(embedder) as mb:
        mb.retain(BANK, locomo_items(conv, [conv.sessions[0].number]))
        model_ids = []
        for speaker in conv.speakers:
            model_id, _ = mb.create_mental_model(
                BANK, name=speaker, source_query=f"What matters to {speaker} and what is {speaker} working on?",
                tags=[f"speaker:{speaker.lower()}"], trigger={"refresh_after_consolidation": True},
            )  # fmt: skip
            model_ids.append(model_id)
        mb.run_pending()
        mb.start_worker()
        for session in conv.sessions[1:]:
            result = mb.retain(BANK, locomo_items(conv, [session.number]))
            accepted = time.perf_counter()
            waiting = set(result.memory_ids)
            deadline = accepted + SETTLE_SECONDS
            while waiting and time.perf_counter() < deadline:
                seen = waiting & _cited(mb, model_ids)
                now = time.perf_counter()
                lags.extend((now - accepted) * 1000 for _ in seen)
                waiting -= seen
                pending, _ = mb.list_operations(BANK, status="pending", limit=1)
                running, _ = mb.list_operations(BANK, status="processing", limit=1)
                if not pending and not running and not (waiting & _cited(mb, model_ids)):
                    break  # settled: the rest will never be cited (not informative, or over budget)
                time.sleep(POLL_SECONDS)
    summary = {
        "cited_memories": len(lags),
        "p50_ms": round(_percentile(lags, 0.5), 1) if lags else None,
        "p95_ms": round(_percentile(lags, 0.95), 1) if lags else None,
        "max_ms": round(max(lags), 1) if lags else None,
    }
    console.print(f"freshness lag on {conv.sample_id}: {summary}")
    report = {
        "benchmark": "freshness",
        "command": f"python -m bench freshness {path}",
        "machine": machine_info(),
        "conversation": conv.sample_id,
        "summary": summary,
    }
    write_json(json_out or RESULTS_DIR / "freshness.json", report)
    return report
