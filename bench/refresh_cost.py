"""``python -m bench refresh-cost PATH [--recall-max-tokens N]``: synthesis input per refresh, delta vs full.

One round per session of a LoCoMo conversation: retain the session and consolidate (as the server does after
every retain), then (a) plan a full refresh of the model at that point (nothing written) and (b) run the real
delta refresh. The figure compared is the synthesis input — the tokens handed to the synthesizer: for full, the
source query and every retrieved fact; for delta, the source query, the facts written since the watermark and the
document outline. A delta refresh exists to read only what is new, so its input should stay flat while a full
refresh re-reads the scope, up to its ``recall_max_tokens`` budget.

Each round also reports the **floor**: the new in-scope facts alone over the full input. Any delta refresh that
reads every memory written since the watermark (spec "What a Refresh Reads") reads at least that much, whatever
its engine, so no delta can beat the floor at that round.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, load_embedder, machine_info, temp_bank, write_json
from mindbank.domain.document import count_tokens
from mindbank.importers import load_locomo, locomo_items

BANK = "bench"
LATE_ROUND = 10  # the acceptance figure looks at round 10 onwards


def _late(rounds: list[dict[str, Any]], key: str) -> dict[str, float | None]:
    values = [r[key] for r in rounds if r["round"] >= LATE_ROUND]
    if not values:
        return {"max": None, "mean": None}
    return {"max": max(values), "mean": round(sum(values) / len(values), 3)}


def run(
    path: Path,
    *,
    recall_max_tokens: int | None = None,
    json_out: Path | None = None,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the benchmark on one LoCoMo file; prints a table and writes JSON. Returns the report.

    ``recall_max_tokens`` sets the model's ``trigger.recall_max_tokens`` (None: the default, 2048)."""
    console = console or Console(width=132)  # eleven columns: wider than a default 80-column terminal
    conv = load_locomo(path)
    speaker = conv.speakers[0]
    embedder, _ = load_embedder()
    trigger: dict[str, Any] = {"mode": "delta"}
    if recall_max_tokens is not None:
        trigger["recall_max_tokens"] = recall_max_tokens
    rounds: list[dict[str, Any]] = []
    with temp_bank(embedder) as mb:
        mb.retain(BANK, locomo_items(conv, [conv.sessions[0].number]))
        model_id, _ = mb.create_mental_model(
            BANK, id="cost", name=speaker, source_query=f"What matters to {speaker} and what is {speaker} working on?",
            tags=[f"speaker:{speaker.lower()}"], trigger=trigger,
        )  # fmt: skip
        mb.run_pending()
        settings = mb.jobs.refresh_settings(BANK)
        for number, session in enumerate(conv.sessions[1:], start=2):
            mb.retain(BANK, locomo_items(conv, [session.number]))
            mb.run_pending()  # the consolidation every retain queues (the model has no automatic refresh)
            model = mb.get_mental_model(BANK, model_id, with_staleness=False)
            started = time.perf_counter()
            full = mb.refresher.plan(model, settings, mode="full")
            full_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            delta = mb.refresher.plan(model, settings)
            mb.refresher.persist(delta, settings)
            delta_ms = (time.perf_counter() - started) * 1000
            full_tokens = max(1, full.synthesis_input_tokens)
            new_facts = sum(count_tokens(h.memory.text) for h in delta.retrieved)
            rounds.append(
                {
                    "round": number,
                    "full_input_tokens": full.synthesis_input_tokens,
                    "delta_input_tokens": delta.synthesis_input_tokens,
                    "delta_new_fact_tokens": new_facts,
                    "delta_outline_tokens": delta.synthesis_input_tokens - new_facts - count_tokens(model.source_query),
                    "ratio": round(delta.synthesis_input_tokens / full_tokens, 3),
                    "floor": round(new_facts / full_tokens, 3),
                    "delta_outcome": delta.outcome,
                    "delta_ops_applied": len(delta.applied),
                    "full_ms": round(full_ms, 1),
                    "delta_ms": round(delta_ms, 1),
                }
            )
    budget = recall_max_tokens or settings.recall_max_tokens
    table = Table(title=f"refresh cost, {conv.sample_id} ({speaker}), recall_max_tokens {budget}: synthesis input")
    columns = ("round", "full", "delta", "new facts", "outline", "delta/full", "floor", "outcome", "ops", "full ms",
               "delta ms")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for r in rounds:
        table.add_row(
            str(r["round"]), str(r["full_input_tokens"]), str(r["delta_input_tokens"]),
            str(r["delta_new_fact_tokens"]), str(r["delta_outline_tokens"]), f"{r['ratio']:.0%}",
            f"{r['floor']:.0%}", r["delta_outcome"], str(r["delta_ops_applied"]), f"{r['full_ms']:.0f}",
            f"{r['delta_ms']:.0f}",
        )  # fmt: skip
    console.print(table)
    ratio, floor = _late(rounds, "ratio"), _late(rounds, "floor")
    summary = {
        "recall_max_tokens": budget,
        "max_ratio_from_round_10": ratio["max"],
        "mean_ratio_from_round_10": ratio["mean"],
        "max_floor_from_round_10": floor["max"],
        "mean_floor_from_round_10": floor["mean"],
    }
    console.print(summary)
    suffix = "" if recall_max_tokens is None else f" --recall-max-tokens {recall_max_tokens}"
    report = {
        "benchmark": "refresh-cost",
        "command": f"python -m bench refresh-cost {path}{suffix}",
        "machine": machine_info(),
        "conversation": conv.sample_id,
        "rounds": rounds,
        "summary": summary,
    }
    default_out = "refresh-cost.json" if recall_max_tokens is None else f"refresh-cost-recall{recall_max_tokens}.json"
    write_json(json_out or RESULTS_DIR / default_out, report)
    return report
