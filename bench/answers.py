"""``python -m bench answers PATH...``: does a mental model answer its own question, at least as well as ``/recall``?

**Definition.** Each conversation goes into a fresh bank through the real HTTP API (a live server on loopback, its
worker running): every turn retained with its ``dia_id`` in metadata and its session date as time
(``locomo_items``), the consolidations it queues settled. Questions: LoCoMo QA of categories 1–4 whose evidence
names at least one turn of the conversation, in file order; ``--questions`` (default 30) of them drawn with
``random.Random(7).sample``. For each, one model: ``source_query`` = the question, no tags, the default
``max_tokens``; created (its first refresh is full, timed from the create call to the operation's completion) and
read back over HTTP.

* Cited turns: the distinct ``dia_id`` of the memories a document (or a bullet) cites; an observation counts for
  its source memories.
* Document hit: the document cites one of the question's evidence turns. First-5 hit: one of the first five
  bullets (markdown list lines, document order) does.
* The comparison is ``POST /memories/recall`` on the same bank with the question, the model's tags and fact types
  (none) and a ``max_tokens`` large enough to return every result; its results are walked best first and their
  turns collected until ``n`` distinct turns are held (recall@n). First 5 bullets compare with recall@m,
  ``m`` = the distinct turns those bullets cite (at least 5), so citing more does not buy hits; the whole document
  with recall@k, ``k`` = the distinct turns the document cites.
* Figures: hit rates over all questions (micro), per category, the median turns a document cites, and the refresh
  time (median and worst, seconds).

**Knowledge pages** (``--pages``): for each question also a knowledge page (``POST /knowledge-base/pages``) with
the question as ``source_query``, its default trigger (it reads observations only) and ``max_tokens`` 2048, the
models' default; its document hit is scored like a model's, and the summary gives the pages' hit rate and its
ratio to the models' (``pages_vs_models``).

**Evidence arriving later** (``--after``): in another fresh bank per conversation, every turn except the sampled
questions' evidence turns is retained; the same models are created with ``trigger`` ``{"mode": "delta",
"refresh_after_consolidation": true, "keep_trace": true}`` (their first refresh is full); then the evidence turns
are retained (in conversation order, with their own dates), and the automatic refreshes that follow
(relevance gate, then the delta
editor) run to completion. Per question: whether the document now cites one of its evidence turns (``quoted``), and
per evidence turn whether it is cited; a turn not cited is listed with the reason the refresh trace gives.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, live_server, load_embedder, machine_info, temp_bank, write_json
from bench.mm_quality import OP_TIMEOUT, _memory_turns, _retain, _settle, bullets, cited_turns
from mindbank.client import Client
from mindbank.config import Settings
from mindbank.importers import LocomoConversation, LocomoQuestion, load_locomo, locomo_items
from mindbank.providers.embeddings.base import Embedder

BANK = "answers"
CATEGORIES = (1, 2, 3, 4)
QUESTIONS = 30
SEED = 7
FIRST = 5
PAGE_MAX_TOKENS = 2048  # the models' default max_tokens: pages compared at the same size
RECALL_MAX_TOKENS = Settings().max_token_budget  # every result a recall can return: no cut before k turns

Memories = dict[str, tuple[str | None, tuple[str, ...]]]


def questions(conv: LocomoConversation, count: int = QUESTIONS) -> list[LocomoQuestion]:
    """The sampled questions of ``conv`` (module docstring): categories 1–4 with evidence in the conversation,
    in file order, ``random.Random(7).sample`` of ``count`` (all of them when there are fewer)."""
    turns = {t.dia_id for s in conv.sessions for t in s.turns}
    eligible = [q for q in conv.qa if q.category in CATEGORIES and set(q.evidence) & turns]
    if len(eligible) <= count:
        return eligible
    return random.Random(SEED).sample(eligible, count)


def turns_until(result_turns: Sequence[set[str]], n: int) -> set[str]:
    """The turns of ranked results, walked best first until ``n`` distinct turns are held (recall@n)."""
    held: set[str] = set()
    for turns in result_turns:
        for turn in sorted(turns):
            if len(held) >= n:
                return held
            held.add(turn)
    return held


def first_bullets_turns(content: str, memories: Memories, first: int = FIRST) -> set[str]:
    """The distinct turns the first ``first`` bullets of ``content`` cite."""
    return cited_turns("\n".join(bullets(content)[:first]), memories)


def score_question(
    question: LocomoQuestion, content: str, recall_turns: Sequence[set[str]], memories: Memories, turns: set[str]
) -> dict[str, Any]:
    """Every figure of one question's model (module docstring)."""
    evidence = set(question.evidence) & turns
    cited = cited_turns(content, memories)
    head = first_bullets_turns(content, memories)
    m = max(FIRST, len(head))
    k = len(cited)
    return {
        "question": question.question,
        "category": question.category,
        "evidence": sorted(evidence),
        "cited_turns": k,
        "first_turns": len(head),
        "doc_hit": bool(evidence & cited),
        "first_hit": bool(evidence & head),
        "recall_m": bool(evidence & turns_until(recall_turns, m)),
        "recall_5": bool(evidence & turns_until(recall_turns, FIRST)),
        "recall_k": bool(evidence & turns_until(recall_turns, k)) if k else False,
    }


def _result_turns(results: Sequence[Any], memories: Memories) -> list[set[str]]:
    out = []
    for r in results:
        out.append(cited_turns(f"[mem:{r.id}]", memories))
    return out


def answer_models(
    conv: LocomoConversation, embedder: Embedder, count: int = QUESTIONS, pages: bool = False
) -> tuple[list[dict[str, Any]], list[float]]:
    """One model per sampled question of ``conv``: each question's figures, and each first refresh's seconds.
    ``pages``: also one knowledge page per question (``--pages``, module docstring): ``page_hit`` and
    ``page_cited_turns`` in each row."""
    turns = {t.dia_id for s in conv.sessions for t in s.turns}
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    with temp_bank(embedder) as mb, live_server(mb) as url, Client(url, timeout=OP_TIMEOUT) as client:
        _retain(client, BANK, locomo_items(conv))
        memories = _memory_turns(url, BANK)
        for number, question in enumerate(questions(conv, count)):
            started = time.perf_counter()
            created = client.create_mental_model(BANK, name=f"q{number}", source_query=question.question)
            op = client.wait(BANK, created.operation_id, timeout=OP_TIMEOUT, poll_interval=0.02)
            times.append(time.perf_counter() - started)
            if op.status != "completed":
                raise RuntimeError(f"the refresh of {question.question!r} ended {op.status}: {op.error_message}")
            content = client.get_mental_model(BANK, created.mental_model_id).content or ""
            recalled = client.recall(BANK, question.question, max_tokens=RECALL_MAX_TOKENS).results
            row = score_question(question, content, _result_turns(recalled, memories), memories, turns)
            row["conversation"] = conv.sample_id
            row["first_lines"] = content.splitlines()[:8]
            if pages:
                row |= _page_figures(client, question, number, memories, turns)
            rows.append(row)
    return rows, times


def _page_figures(
    client: Client, question: LocomoQuestion, number: int, memories: Memories, turns: set[str]
) -> dict[str, Any]:
    """A knowledge page for ``question`` at its default trigger and :data:`PAGE_MAX_TOKENS`: whether its body cites
    an evidence turn (an observation counts for its sources) and how many turns it cites."""
    created = client.create_knowledge_page(BANK, f"p{number}", question.question, max_tokens=PAGE_MAX_TOKENS)
    if created.operation_id:
        client.wait(BANK, created.operation_id, timeout=OP_TIMEOUT, poll_interval=0.02)
    body = client.get_knowledge_page(BANK, created.page_id).body or ""
    cited = cited_turns(body, memories)
    return {"page_hit": bool(set(question.evidence) & turns & cited), "page_cited_turns": len(cited)}


def evidence_after(conv: LocomoConversation, embedder: Embedder, count: int = QUESTIONS) -> list[dict[str, Any]]:
    """The ``--after`` part for ``conv`` (module docstring): one row per question."""
    turns = {t.dia_id for s in conv.sessions for t in s.turns}
    asked = questions(conv, count)
    held = {e for q in asked for e in q.evidence if e in turns}
    items = locomo_items(conv)
    trigger = {"mode": "delta", "refresh_after_consolidation": True, "keep_trace": True}
    rows: list[dict[str, Any]] = []
    with temp_bank(embedder) as mb, live_server(mb) as url, Client(url, timeout=OP_TIMEOUT) as client:
        _retain(client, BANK, [i for i in items if i.metadata.get("dia_id") not in held])
        models = []
        for number, question in enumerate(asked):
            created = client.create_mental_model(BANK, name=f"q{number}", source_query=question.question,
                                                 trigger=trigger)  # fmt: skip
            client.wait(BANK, created.operation_id, timeout=OP_TIMEOUT)
            models.append(created.mental_model_id)
        _retain(client, BANK, [i for i in items if i.metadata.get("dia_id") in held])
        _settle(client, BANK)
        memories = _memory_turns(url, BANK)
        by_turn = {dia: mid for mid, (dia, _) in memories.items() if dia}
        for question, model_id in zip(asked, models, strict=True):
            model = client.get_mental_model(BANK, model_id)
            cited = cited_turns(model.content or "", memories)
            evidence = sorted(set(question.evidence) & turns)
            response = model.reflect_response or {}
            reasons = {e["id"]: e["reason"] for e in (response.get("trace") or {}).get("left_out") or []}
            skipped = response.get("refresh_skipped")
            rows.append(
                {
                    "conversation": conv.sample_id,
                    "question": question.question,
                    "category": question.category,
                    "evidence": evidence,
                    "quoted": bool(set(evidence) & cited),
                    "turns_quoted": [e for e in evidence if e in cited],
                    "left_out": {
                        e: reasons.get(by_turn.get(e, ""), f"refresh skipped: {skipped}" if skipped else "not cited")
                        for e in evidence
                        if e not in cited
                    },
                }
            )
    return rows


def _rate(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else None


def summarise(rows: Sequence[dict[str, Any]], times: Sequence[float]) -> dict[str, Any]:
    """The file set's figures: hit rates (micro) overall and per category, median turns cited, refresh time."""

    def figures(part: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {
            "questions": len(part),
            "first5": _rate(part, "first_hit"),
            "recall_m": _rate(part, "recall_m"),
            "recall_5": _rate(part, "recall_5"),
            "document": _rate(part, "doc_hit"),
            "recall_k": _rate(part, "recall_k"),
            "median_cited_turns": statistics.median(r["cited_turns"] for r in part) if part else None,
        }

    out = figures(rows)
    paged = [r for r in rows if "page_hit" in r]
    if paged:
        out["pages_document"] = _rate(paged, "page_hit")
        out["pages_median_cited_turns"] = statistics.median(r["page_cited_turns"] for r in paged)
        models = _rate(paged, "doc_hit")
        out["pages_vs_models"] = round(out["pages_document"] / models, 3) if models else None
    out["per_category"] = {c: figures([r for r in rows if r["category"] == c]) for c in CATEGORIES}
    out["refresh_median_s"] = round(statistics.median(times), 3) if times else None
    out["refresh_max_s"] = round(max(times), 3) if times else None
    return out


def run(
    paths: Sequence[Path],
    *,
    count: int = QUESTIONS,
    after: bool = False,
    only_after: bool = False,
    pages: bool = False,
    json_out: Path | None = None,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the benchmark on ``paths`` and write ``bench/results/answers.json`` (or ``json_out``); ``only_after``:
    the ``--after`` part alone; ``pages``: also a knowledge page per question (``--pages``)."""
    console = console or Console(width=140)
    embedder, _ = load_embedder()
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    after = after or only_after
    for path in [] if only_after else paths:
        conv = load_locomo(path)
        started = time.perf_counter()
        found, spent = answer_models(conv, embedder, count, pages)
        rows.extend(found)
        times.extend(spent)
        part = summarise(found, spent)
        console.print(
            f"{conv.sample_id}: {len(found)} questions, first5 {part['first5']:.3f} vs recall@m {part['recall_m']:.3f}"
            f", document {part['document']:.3f} vs recall@k {part['recall_k']:.3f}, median cited "
            f"{part['median_cited_turns']} ({time.perf_counter() - started:.0f} s)"
        )
    summary = summarise(rows, times)
    table = Table(title="does a model answer its question? (hit rates; recall of the same size)")
    for column in ("category", "questions", "first 5", "recall@m", "recall@5", "document", "recall@k", "median cited"):
        table.add_column(column, justify="right")
    for label, part in [("all", summary), *((str(c), summary["per_category"][c]) for c in CATEGORIES)]:
        if not part["questions"] or only_after:
            continue
        table.add_row(
            label, str(part["questions"]), f"{part['first5']:.3f}", f"{part['recall_m']:.3f}",
            f"{part['recall_5']:.3f}", f"{part['document']:.3f}", f"{part['recall_k']:.3f}",
            str(part["median_cited_turns"]),
        )  # fmt: skip
    if rows:
        console.print(table)
        console.print(f"refresh: median {summary['refresh_median_s']} s, max {summary['refresh_max_s']} s")
        if "pages_document" in summary:
            console.print(
                f"knowledge pages (default trigger, {PAGE_MAX_TOKENS} tokens): document {summary['pages_document']:.3f}"
                f" = {summary['pages_vs_models']} x the models' {summary['document']:.3f}; median cited "
                f"{summary['pages_median_cited_turns']}"
            )
    report = {
        "benchmark": "answers",
        "command": command_line(),
        "machine": machine_info(),
        "summary": summary,
        "questions": rows,
    }
    if after:
        late: list[dict[str, Any]] = []
        for path in paths:
            late.extend(evidence_after(load_locomo(path), embedder, count))
        turns = [e for r in late for e in r["evidence"]]
        quoted = [e for r in late for e in r["turns_quoted"]]
        report["after"] = {
            "questions": len(late),
            "quoted": _rate(late, "quoted"),
            "evidence_turns": len(turns),
            "turns_quoted": round(len(quoted) / len(turns), 4) if turns else None,
            "rows": late,
        }
        console.print(
            f"evidence retained after the model's refresh: {report['after']['quoted']:.3f} of questions quoted "
            f"(turns: {report['after']['turns_quoted']:.3f} of {len(turns)})"
        )
    out = json_out or RESULTS_DIR / "answers.json"
    write_json(out, report)
    console.print(f"report: {out}")
    return report
