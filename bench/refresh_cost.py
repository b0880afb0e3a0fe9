"""``python -m bench refresh-cost PATH``: synthesis input per refresh, delta vs full, round by round.

One round per session of a LoCoMo conversation: retain the session, then (a) plan a full refresh of the model at
that point (nothing written) and (b) run the real delta refresh. The figure compared is the synthesis input — the
tokens handed to the synthesizer: for full, the source query and every retrieved fact; for delta, the source query,
the facts written since the watermark and the document outline. A delta refresh exists to read only what is new,
so its input should stay small while a full refresh re-reads the scope.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, load_embedder, machine_info, temp_bank, write_json
from mindbank.importers import load_locomo, locomo_items

BANK = "bench"


def run(path: Path, *, json_out: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Run the benchmark on one LoCoMo file; prints a table and writes JSON. Returns the report."""
    console = console or Console()
    conv = load_locomo(path)
    speaker = conv.speakers[0]
    embedder, _ = load_embedder()
    rounds: list[dict[str, Any]] = []
    with temp_bank(embedder) as mb:
        mb.retain(BANK, locomo_items(conv, [conv.sessions[0].number]))
        model_id, _ = mb.create_mental_model(
            BANK, id="cost", name=speaker, source_query=f"What matters to {speaker} and what is {speaker} working on?",
            tags=[f"speaker:{speaker.lower()}"], trigger={"mode": "delta"},
        )  # fmt: skip
        mb.run_pending()
        settings = mb._refresh_settings(BANK)
        for number, session in enumerate(conv.sessions[1:], start=2):
            mb.retain(BANK, locomo_items(conv, [session.number]))
            model = mb.get_mental_model(BANK, model_id, with_staleness=False)
            started = time.perf_counter()
            full = mb.refresher.plan(model, settings, mode="full")
            full_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            delta = mb.refresher.plan(model, settings)
            mb.refresher.persist(delta, settings)
            delta_ms = (time.perf_counter() - started) * 1000
            rounds.append(
                {
                    "round": number,
                    "full_input_tokens": full.synthesis_input_tokens,
                    "delta_input_tokens": delta.synthesis_input_tokens,
                    "ratio": round(delta.synthesis_input_tokens / max(1, full.synthesis_input_tokens), 3),
                    "delta_outcome": delta.outcome,
                    "delta_ops_applied": len(delta.applied),
                    "full_ms": round(full_ms, 1),
                    "delta_ms": round(delta_ms, 1),
                }
            )
    table = Table(title=f"refresh cost, {conv.sample_id} ({speaker}), synthesis input tokens")
    for column in ("round", "full", "delta", "delta/full", "delta outcome", "ops", "full ms", "delta ms"):
        table.add_column(column, justify="right")
    for r in rounds:
        table.add_row(
            str(r["round"]), str(r["full_input_tokens"]), str(r["delta_input_tokens"]), f"{r['ratio']:.0%}",
            r["delta_outcome"], str(r["delta_ops_applied"]), f"{r['full_ms']:.0f}", f"{r['delta_ms']:.0f}",
        )  # fmt: skip
    console.print(table)
    late = [r["ratio"] for r in rounds if r["round"] >= 10]
    summary = {"max_ratio_from_round_10": max(late) if late else None, "mean_ratio_from_round_10": (
        round(sum(late) / len(late), 3) if late else None)}  # fmt: skip
    console.print(summary)
    report = {
        "benchmark": "refresh-cost",
        "command": f"python -m bench refresh-cost {path}",
        "machine": machine_info(),
        "conversation": conv.sample_id,
        "rounds": rounds,
        "summary": summary,
    }
    write_json(json_out or RESULTS_DIR / "refresh-cost.json", report)
    return report
