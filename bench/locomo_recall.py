"""LoCoMo evidence recall: does a retriever put a question's evidence turn in its top k?

Each conversation file is retained into a fresh bank, one memory per dialogue turn (long turns become several
facts, and each fact keeps its turn's ``dia_id``). Then every question except the adversarial category 5 is
recalled with each retriever. A question is a hit at k when any of its evidence ``dia_id`` values is among the
``dia_id`` values of the top k results. Questions without evidence cannot be scored and are counted separately.
Figures are averaged over conversations (macro) and over all scored questions (micro).

The questions are used only to score; nothing about them reaches the bank.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, temp_bank, write_json
from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import utcnow
from mindbank.engine.pair_rerank import PAIR_WEIGHT_TUNED
from mindbank.engine.recall import FusionParams, RecallRequest, Retriever, recall
from mindbank.engine.retain.extractive import prepare_documents
from mindbank.importers import LocomoConversation, load_locomo, locomo_items
from mindbank.providers.embeddings.base import Embedder
from mindbank.service.facade import MindBank

BANK = "locomo"
ADVERSARIAL = 5
MAX_TOKENS = Settings().max_token_budget  # the largest budget a request may ask: no cut at 10 results
IndexVariant = Literal["plain", "prev-turn"]


@dataclass(frozen=True, slots=True)
class Config:
    """One ranking to score: a label, the retriever, and (hybrid only) fusion settings.

    ``fusion=None`` goes through the ``MindBank.recall`` facade with the shipped defaults. A value calls the engine's
    ``recall`` directly with those settings, which is how the ablations are measured.
    """

    name: str
    retriever: Retriever
    fusion: FusionParams | None = None


BASELINES = (Config("dense", "dense"), Config("bm25", "bm25"), Config("hybrid", "hybrid"))
# Each arm of the shipped hybrid turned off on its own (dense alone and bm25 alone are the baselines above).
ARMS_OFF: dict[str, dict[str, Any]] = {
    "convex": {"method": "rrf"},
    "prev": {"neighbour_prev": 0.0},
    "next": {"neighbour_next": 0.0},
    "neighbours": {"neighbour_prev": 0.0, "neighbour_next": 0.0},
    "expand": {"expand_top": 0},  # the shipped ranking before the neighbour expansion (the "before" figures)
    "speaker": {"speaker_boost": 0.0},
    "when": {"when_boost": 0.0},
    "period": {"period_boost": 0.0},
    "context": {"context_share": 0.0},
    "cues": {"speaker_boost": 0.0, "when_boost": 0.0, "period_boost": 0.0},
    # the preceding turn's share only for memories without a context (the lexical preceding-text field carries it)
    "prev-in-context": {"neighbour_prev_in_context": 0.0},
}
# Arms measured but off in the shipped hybrid (they did not earn their place), turned on on their own.
ARMS_ON: dict[str, dict[str, Any]] = {
    "phrases": {"phrases": True},  # the query's word pairs as extra lexical terms
    "mmr": {"mmr_lambda": 0.3},  # maximal marginal relevance over the 30 best
    "pair": {"pair_weight": PAIR_WEIGHT_TUNED},  # the turn-pair rerank of the 30 best, at its tuned weight
    # the wide fusion orders every place after the first (head_tail.py), or every place, the first included
    "wide": {"wide": True},
    "wide-head": {"wide": True, "head": 0},
}
ABLATIONS = (
    *(Config(f"hybrid-{arm}", "hybrid", replace(FusionParams(), **off)) for arm, off in ARMS_OFF.items()),
    *(Config(f"hybrid+{arm}", "hybrid", replace(FusionParams(), **on)) for arm, on in ARMS_ON.items()),
)
# The tuning conversations: every weight, list and constant of recall is chosen on these only; the others report.
TUNE = ("conv-26", "conv-30", "conv-41", "conv-42")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # LoCoMo's numbering (5 adversarial)


class _NullEmbedder:
    """Stands in for the embedder when a variant computes embeddings itself: all-zero vectors, instantly."""

    name = "null"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.zeros((len(texts), self.dimension), dtype=np.float32)


def retain_conversation(bank: MindBank, items: list[RetainItem], variant: IndexVariant) -> int:
    """Retain the turns into ``BANK``; returns the number of memories written.

    ``plain`` is the real retain path (``MindBank.retain``). ``prev-turn`` is an experiment that only this
    benchmark runs. It stores the same memories and texts, so BM25 is unchanged, but each fact is embedded
    together with the turn before it in the same session (``"{previous turn}\\n{fact}"``). That measures whether
    retain should embed conversational context.
    """
    if variant == "plain":
        return len(bank.retain(BANK, items).memory_ids)
    documents = prepare_documents(items, _NullEmbedder(bank.embedder.dimension), now=utcnow())
    texts: list[str] = []
    for index, doc in enumerate(documents):
        before = items[index - 1] if index > 0 else None
        same_session = before is not None and before.context == doc.item.context
        prefix = before.content + "\n" if same_session and before is not None else ""
        texts.extend(prefix + memory.text for memory in doc.memories)
    vectors = bank.embedder.embed(texts)
    cursor = 0
    rebuilt = []
    for doc in documents:
        memories = []
        for memory in doc.memories:
            memories.append(replace(memory, embedding=vectors[cursor]))
            cursor += 1
        rebuilt.append(replace(doc, memories=memories))
    return sum(len(ids) for ids in bank.store.write_documents(BANK, rebuilt))


def _run_query(bank: MindBank, config: Config, query: str, limit: int, candidates: int | None) -> list[str]:
    """The ``dia_id`` of each of the top ``limit`` results, best first (one entry per result)."""
    if config.fusion is None and candidates is None:
        hits = bank.recall(BANK, query, max_tokens=MAX_TOKENS, limit=limit, retriever=config.retriever)
    else:
        hits = recall(
            bank.store,
            bank.embedder,
            BANK,
            RecallRequest(query=query, max_tokens=MAX_TOKENS, limit=limit, retriever=config.retriever),
            candidates=candidates or bank.settings.recall_candidates,
            fusion=config.fusion,
        )
    return [h.memory.metadata.get("dia_id", "") for h in hits]


def _latency(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "mean": round(statistics.fmean(ordered), 3),
        "p50": round(ordered[len(ordered) // 2], 3),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
    }


def evaluate_conversation(
    embedder: Embedder,
    conv: LocomoConversation,
    configs: Sequence[Config],
    ks: Sequence[int],
    *,
    variant: IndexVariant = "plain",
    candidates: int | None = None,
) -> dict[str, Any]:
    """Retain ``conv`` into a fresh bank and score every non-adversarial question under each config.

    Returns ``{sample_id, turns, memories, questions, skipped_no_evidence, retain_s, results}``. ``results``
    maps a config name to ``{hits: {k: n}, hit_at: {k: fraction}, latency_ms: {mean, p50, p95}, _timings}``, with
    latency measured per recall call in milliseconds (``_timings``: every call's, in question order).
    """
    items = locomo_items(conv)
    questions = [q for q in conv.qa if q.category != ADVERSARIAL]
    scored = [q for q in questions if q.evidence]
    depth = max(ks)
    with temp_bank(embedder) as bank:
        start = time.perf_counter()
        memories = retain_conversation(bank, items, variant)
        retain_s = time.perf_counter() - start
        results: dict[str, Any] = {}
        for config in configs:
            hits = dict.fromkeys(ks, 0)
            by_category: dict[str, dict[str, int]] = {}
            timings: list[float] = []
            for question in scored:
                began = time.perf_counter()
                found = _run_query(bank, config, question.question, depth, candidates)
                timings.append((time.perf_counter() - began) * 1000)
                evidence = set(question.evidence)
                cell = by_category.setdefault(str(question.category), {"questions": 0, **{str(k): 0 for k in ks}})
                cell["questions"] += 1
                for k in ks:
                    hit = bool(evidence.intersection(found[:k]))
                    hits[k] += hit
                    cell[str(k)] += hit
            results[config.name] = {
                "hits": {str(k): hits[k] for k in ks},
                "hit_at": {str(k): hits[k] / len(scored) if scored else 0.0 for k in ks},
                "by_category": by_category,
                "latency_ms": _latency(timings) if timings else {},
                "_timings": timings,  # popped by run() after pooling across conversations
            }
    return {
        "sample_id": conv.sample_id,
        "turns": len(items),
        "memories": memories,
        "questions": len(scored),
        "skipped_no_evidence": len(questions) - len(scored),
        "retain_s": round(retain_s, 3),
        "results": results,
    }


def _hit_rates(conversations: list[dict[str, Any]], names: Sequence[str], ks: Sequence[int]) -> dict[str, Any]:
    """``{macro, micro, by_category}`` hit@k of ``conversations``: macro is the mean of per-conversation
    fractions, micro and per category (``{category: {questions, k: fraction}}``) pool the questions."""
    macro: dict[str, dict[str, float]] = {}
    micro: dict[str, dict[str, float]] = {}
    categories: dict[str, dict[str, dict[str, float]]] = {}
    total = sum(c["questions"] for c in conversations)
    for name in names:
        rows = [c["results"][name] for c in conversations]
        macro[name] = {str(k): statistics.fmean(r["hit_at"][str(k)] for r in rows) for k in ks} if rows else {}
        micro[name] = {str(k): sum(r["hits"][str(k)] for r in rows) / total if total else 0.0 for k in ks}
        pooled: dict[str, dict[str, float]] = {}
        for row in rows:
            for category, cell in row["by_category"].items():
                into = pooled.setdefault(category, dict.fromkeys(["questions", *map(str, ks)], 0.0))
                for key, value in cell.items():
                    into[key] += value
        categories[name] = {
            c: {"questions": int(v["questions"]), **{str(k): v[str(k)] / v["questions"] for k in ks}}
            for c, v in sorted(pooled.items())
        }
    return {"macro": macro, "micro": micro, "by_category": categories}


def summarise(conversations: list[dict[str, Any]], names: Sequence[str], ks: Sequence[int]) -> dict[str, Any]:
    """Hit@k over all ``conversations`` (:func:`_hit_rates`), over the tuning and the report conversations apart
    (``split``: ``{tune, report}``, each ``{conversations, questions, macro, micro, by_category}``), and per-query
    latency (ms, pooled over all questions) from the ``_timings`` of each result, which are removed here."""
    latency: dict[str, dict[str, float]] = {}
    for name in names:
        pooled = [t for c in conversations for t in c["results"][name].pop("_timings", [])]
        latency[name] = _latency(pooled) if pooled else {}
    split: dict[str, Any] = {}
    for part, members in (
        ("tune", [c for c in conversations if c["sample_id"] in TUNE]),
        ("report", [c for c in conversations if c["sample_id"] not in TUNE]),
    ):
        split[part] = {
            "conversations": [c["sample_id"] for c in members],
            "questions": sum(c["questions"] for c in members),
            **_hit_rates(members, names, ks),
        }
    return {**_hit_rates(conversations, names, ks), "split": split, "latency_ms": latency}


def _table(title: str, rows: dict[str, dict[str, float]], ks: Sequence[int], latency: dict[str, float]) -> Table:
    table = Table(title=title)
    table.add_column("retriever")
    for k in ks:
        table.add_column(f"@{k}", justify="right")
    table.add_column("ms/query", justify="right")
    for name, values in rows.items():
        table.add_row(name, *(f"{values[str(k)]:.3f}" for k in ks), f"{latency.get(name, 0.0):.1f}")
    return table


def run(
    paths: Sequence[Path],
    *,
    ks: Sequence[int] = (1, 5, 10),
    json_out: Path | None = None,
    ablations: bool = False,
    variant: IndexVariant = "plain",
    candidates: int | None = None,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the benchmark over ``paths`` and write the JSON report; returns the report.

    ``ablations`` adds the intermediate hybrid configurations. ``variant`` picks how turns are indexed (see
    :func:`retain_conversation`). ``candidates`` overrides the per-retriever candidate count (default: the
    ``recall_candidates`` setting).
    """
    console = console or Console()
    ks = sorted(set(ks))
    configs = [*BASELINES, *(ABLATIONS if ablations else ())]
    names = [c.name for c in configs]
    embedder, load_s = load_embedder()
    conversations: list[dict[str, Any]] = []
    for path in paths:
        conv = load_locomo(path)
        result = evaluate_conversation(embedder, conv, configs, ks, variant=variant, candidates=candidates)
        result["file"] = str(path)
        conversations.append(result)
        rows = {name: result["results"][name]["hit_at"] for name in names}
        latency = {name: result["results"][name]["latency_ms"].get("mean", 0.0) for name in names}
        title = (
            f"{conv.sample_id}: {result['questions']} questions, {result['turns']} turns, "
            f"{result['memories']} memories (retain {result['retain_s']:.1f} s)"
        )
        console.print(_table(title, rows, ks, latency))
    summary = summarise(conversations, names, ks)
    scored = sum(c["questions"] for c in conversations)
    latency = {name: values.get("mean", 0.0) for name, values in summary["latency_ms"].items()}
    console.print(_table(f"Average over {len(conversations)} conversations (macro)", summary["macro"], ks, latency))
    console.print(_table(f"Average over {scored} questions (micro)", summary["micro"], ks, latency))
    for part, values in summary["split"].items():
        if values["questions"]:
            title = f"{part} ({', '.join(values['conversations'])}): {values['questions']} questions (micro)"
            console.print(_table(title, values["micro"], ks, latency))
    for category, label in CATEGORIES.items():
        rows = {
            n: summary["by_category"][n][str(category)] for n in names if str(category) in summary["by_category"][n]
        }
        if rows:
            count = next(iter(rows.values()))["questions"]
            console.print(_table(f"category {category} ({label}): {count} questions", rows, ks, latency))
    report = {
        "benchmark": "locomo-recall",
        "command": command_line(),
        "machine": machine_info(),
        "embedder": getattr(embedder, "name", type(embedder).__name__),
        "embedder_load_s": round(load_s, 3),
        "settings": {
            "ks": list(ks),
            "candidates": candidates or Settings().recall_candidates,
            "index_variant": variant,
            "default_fusion": asdict(FusionParams()),
            "configs": {c.name: (asdict(c.fusion) if c.fusion else "default") for c in configs},
            "excluded_categories": [ADVERSARIAL],
        },
        "conversations": conversations,
        **summary,
    }
    out = json_out or RESULTS_DIR / "locomo-recall.json"
    write_json(out, report)
    console.print(f"wrote {out}")
    return report
