"""``python -m bench gate-calibration [PATH ...]``: the relevance gate's precision/recall curve on a labelled LoCoMo
set, and the default threshold it supports (the gate skips a refresh whose new facts are irrelevant to the model).

The labelled set: every QA question of categories 1-4 is a source query; its
evidence turns are relevant facts; an equal-sized, fixed-seed sample of turns from the other conversations are
unrelated facts. The gate passes a fact when its score reaches the threshold; "gated" facts cost no LLM call.
Reported per threshold: the share of unrelated facts gated, the share of relevant facts gated, and the gate's
precision and recall as a classifier of relevant facts (recall = 1 - relevant gated). Targets: at least 90 % of
unrelated facts gated with at most 2 % of relevant facts gated.

Signals compared (all on speaker-stripped text, as the gate embeds it):

* ``mindbank`` — the production score, ``RelevanceGate.relevance``: cosine to the source query plus the share of
  the query's content words the fact contains;
* ``query cosine`` — the cosine alone;
* ``previous gate`` — the earlier signal: the best cosine to the query or to any fact the document cites;
  the document is simulated causally as the 10 turns before the fact's first evidence turn most similar to the
  question (what a refresh would have cited before the fact arrived);
* ``query + scope neighbour`` — the cosine plus the fact's best cosine to a turn the scope held before it (the
  scope's own distribution).

The default threshold is the largest on a 0.01 grid whose relevant-gated share is at most 2 % for ``mindbank``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, load_embedder, machine_info, write_json
from mindbank.engine.refresh.relevance import RelevanceGate
from mindbank.importers import load_locomo

SEED = 14
CATEGORIES = (1, 2, 3, 4)
RELEVANT_GATED_MAX = 0.02
UNRELATED_GATED_MIN = 0.90
CITED = 10


def _turn_text(turn: Any) -> str:
    return f"{turn.speaker}: {turn.text}" + (f" [shares a photo: {turn.image_caption}]" if turn.image_caption else "")


def labelled_set(
    paths: Sequence[Path],
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], str], list[tuple[str, str]]]:
    """``(examples, turn texts, turn keys in spoken order)``: one example per QA question of categories 1-4 with
    evidence found in its conversation: ``{conversation, query, relevant: [key], unrelated: [key]}``."""
    convs = [load_locomo(p) for p in paths]
    texts: dict[tuple[str, str], str] = {}
    for conv in convs:
        for session in conv.sessions:
            for turn in session.turns:
                texts[(conv.sample_id, turn.dia_id)] = _turn_text(turn)
    keys = list(texts)
    rng = random.Random(SEED)
    examples = []
    for conv in convs:
        others = [k for k in keys if k[0] != conv.sample_id]
        for qa in conv.qa:
            if qa.category not in CATEGORIES:
                continue
            relevant = [(conv.sample_id, d) for d in dict.fromkeys(qa.evidence) if (conv.sample_id, d) in texts]
            if not relevant:
                continue
            examples.append({
                "conversation": conv.sample_id, "query": qa.question, "relevant": relevant,
                "unrelated": rng.sample(others, len(relevant)),
            })  # fmt: skip
    return examples, texts, keys


def _scores(examples: list[dict[str, Any]], texts: dict[tuple[str, str], str], keys: list[tuple[str, str]],
            gate: RelevanceGate) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Per signal: ``(scores, labels)`` over every (question, fact) pair (label 1 = relevant)."""
    vectors = gate._body_vectors([texts[k] for k in keys])
    row = {k: i for i, k in enumerate(keys)}
    spoken = {k: i for i, k in enumerate(keys)}  # keys are in spoken order within each conversation
    by_conv: dict[str, list[int]] = {}
    for k in keys:
        by_conv.setdefault(k[0], []).append(row[k])
    signals: dict[str, list[float]] = {"mindbank": [], "query cosine": [], "previous gate": [],
                                       "query + scope neighbour": []}  # fmt: skip
    labels: list[int] = []
    for ex in examples:
        query_vec = gate._body_vectors([ex["query"]])[0]
        first = min(spoken[k] for k in ex["relevant"])
        before = np.array([i for i in by_conv[ex["conversation"]] if i < first], dtype=int)
        cited = before[np.argsort(-(vectors[before] @ query_vec))[:CITED]] if before.size else before
        pairs = [(k, 1) for k in ex["relevant"]] + [(k, 0) for k in ex["unrelated"]]
        production = gate.relevance(ex["query"], [texts[k] for k, _ in pairs])
        for (key, label), score in zip(pairs, production, strict=True):
            fact = vectors[row[key]]
            cosine = float(fact @ query_vec)
            signals["mindbank"].append(score)
            signals["query cosine"].append(cosine)
            signals["previous gate"].append(max([cosine, *(vectors[cited] @ fact).tolist()]))
            signals["query + scope neighbour"].append(
                cosine + (float((vectors[before] @ fact).max()) if before.size else 0.0)
            )
            labels.append(label)
    y = np.array(labels)
    return {name: (np.array(values), y) for name, values in signals.items()}


def point(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    """The gate at ``threshold``: shares gated, precision and recall (passing = predicted relevant)."""
    passed = scores >= threshold
    relevant, unrelated = labels == 1, labels == 0
    tp = int((passed & relevant).sum())
    fp = int((passed & unrelated).sum())
    return {
        "threshold": round(threshold, 3),
        "unrelated_gated": round(float((~passed & unrelated).sum() / unrelated.sum()), 4),
        "relevant_gated": round(float((~passed & relevant).sum() / relevant.sum()), 4),
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / int(relevant.sum()), 4),
    }


def best_tradeoff(scores: np.ndarray, labels: np.ndarray, grid: Sequence[float]) -> dict[str, Any]:
    """The largest grid threshold keeping relevant gated <= 2 %, and the threshold that gates 90 % of unrelated."""
    safe = [t for t in grid if point(scores, labels, t)["relevant_gated"] <= RELEVANT_GATED_MAX]
    at_safe = point(scores, labels, max(safe)) if safe else None
    at_90 = point(scores, labels, float(np.quantile(scores[labels == 0], UNRELATED_GATED_MIN)))
    meets = bool(at_safe and at_safe["unrelated_gated"] >= UNRELATED_GATED_MIN)
    return {"at_relevant_gated_max": at_safe, "at_unrelated_gated_90": at_90, "meets_both_targets": meets}


def run(paths: Sequence[Path], *, json_out: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Build the set, score every signal, print the curve and the summary, write JSON; returns the report."""
    console = console or Console(width=120)
    started = time.perf_counter()
    examples, texts, keys = labelled_set(paths)
    embedder, _ = load_embedder()
    gate = RelevanceGate(None, embedder)  # type: ignore[arg-type] - scoring only reads the embedder
    signals = _scores(examples, texts, keys, gate)
    grid = [round(i * 0.01, 2) for i in range(-10, 61)]
    curves = {name: [point(s, y, t) for t in grid] for name, (s, y) in signals.items()}
    summary = {name: best_tradeoff(s, y, grid) for name, (s, y) in signals.items()}
    production = summary["mindbank"]["at_relevant_gated_max"]
    table = Table(title="relevance gate on the labelled LoCoMo set (mindbank signal)")
    for column in ("threshold", "unrelated gated", "relevant gated", "precision", "recall"):
        table.add_column(column, justify="right")
    for p in curves["mindbank"]:
        if p["threshold"] * 100 % 2 == 0 and 0 <= p["threshold"] <= 0.4:
            table.add_row(f"{p['threshold']:.2f}", f"{p['unrelated_gated']:.1%}", f"{p['relevant_gated']:.1%}",
                          f"{p['precision']:.3f}", f"{p['recall']:.3f}")  # fmt: skip
    console.print(table)
    for name, result in summary.items():
        console.print(name, result)
    relevant = sum(len(e["relevant"]) for e in examples)
    report = {
        "benchmark": "gate-calibration",
        "command": "python -m bench gate-calibration " + " ".join(str(p) for p in paths),
        "machine": machine_info(),
        "set": {"questions": len(examples), "relevant_facts": relevant, "unrelated_facts": relevant, "seed": SEED},
        "default_threshold": None if production is None else production["threshold"],
        "summary": summary,
        "curves": curves,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_json(json_out or RESULTS_DIR / "gate-calibration.json", report)
    return report


def default_paths() -> list[Path]:
    """Every LoCoMo conversation under ``../shared/data/locomo`` (from the repository root)."""
    return sorted(Path("../shared/data/locomo").glob("*.json"))
