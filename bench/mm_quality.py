"""``python -m bench mm-quality PATH...``: is a mental model worth reading? Evidence share against random quotes,
question and thin bullets, headings, delta churn and refresh time (each defined below).

**Quality** (every file). Each conversation goes into a fresh bank through the real HTTP API (a live server on
loopback, its worker running): every turn retained with its ``dia_id`` in metadata and its session date as time
(``locomo_items``). Then one model per speaker, "What matters most to X, and what is X working on?", tags
``[speaker:x]``, ``max_tokens`` 2048, created (its first refresh is full) and read back over HTTP.

* Questions: LoCoMo QA of categories 1–4, evidence ids parsed with ``split_evidence``, ids not in the conversation
  ignored; a question is *about X* when at least one evidence id is a turn of X.
* Cited turns: the distinct ``dia_id`` of the memories the document cites (``[mem:id]``); an observation counts for
  its source memories.
* Hit: at least one of the question's evidence turns is cited. Evidence share = hits / questions about X.
* Baseline: the same number ``n`` of X's turns drawn at random, as an exact expectation per question,
  ``1 − C(N−k, n) / C(N, n)`` (``N`` = X's turns, ``k`` = X's evidence turns for that question, ``n`` = X's turns the
  document cites), averaged over the questions about X.
* Bullets: markdown list lines (``- `` or ``* ``, nested ones included). Before judging one, its citations, its
  parenthesised notes carrying a year (the date and "mentioned 3 times, last 4 May 2025"), a leading
  ``earlier``/``now`` label and a leading ``Name:`` speaker prefix are stripped. A question bullet ends with ``?``;
  a thin bullet has fewer than 6 content words (words not in the NLTK English stopword list, below).
* A figure for a file set is the mean over its speaker models; the ratio is mean share / mean baseline.

**Delta churn** (``--churn``, default the input named conv-41): a model per speaker (``trigger.mode: delta``), a
full refresh after the first half of the sessions, then one delta refresh after each further session; churn = the
share of the previous document's lines (non-blank) absent from the new one; a line whose repeat count changed is
absent (its text changed).

**Refresh time** (``--timing``, default the input named conv-43): in a fresh process (nothing cached from the
quality runs), the whole conversation retained in-process (vectors stored), one untagged model created (its
first refresh timed: ``first_refresh_s``, cold), then ``--repeat`` full refreshes each timed from queueing to
completion (``refresh_mental_model`` + the worker running the operation: settings, scope read, salience,
selection, headings with their embeddings, persist); wall seconds and the process's CPU seconds (all threads),
which do not depend on what else the machine runs.
"""

from __future__ import annotations

import math
import multiprocessing
import re
import statistics
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, live_server, load_embedder, machine_info, temp_bank, write_json
from mindbank.client import Client
from mindbank.domain.document import cited_memory_ids
from mindbank.domain.records import RetainItem
from mindbank.importers import LocomoConversation, load_locomo, locomo_items, split_halves
from mindbank.importers.locomo import speaker_tag
from mindbank.providers.embeddings.base import Embedder

BANK = "mmq"
MAX_TOKENS = 2048
CATEGORIES = (1, 2, 3, 4)
THIN_WORDS = 6
RETAIN_BATCH = 100
OP_TIMEOUT = 600.0

# The NLTK English stopword list (179 words), the "standard English stopword list" of the thin-bullet rule. It is
# the benchmark's own, independent of the engine's word lists, so the engine cannot grade itself.
NLTK_STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
    himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this
    that that'll these those am is are was were be been being have has had having do does did doing a an the and but
    if or because as until while of at by for with about against between into through during before after above
    below to from up down in out on off over under again further then once here there when where why how all any both
    each few more most other some such no nor not only own same so than too very s t can will just don don't should
    should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't
    haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't
    weren weren't won won't wouldn wouldn't""".split()
)

_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")
_CITATION = re.compile(r"\[mem:[A-Za-z0-9_-]+\]")
_DATED_NOTE = re.compile(r"\((?:[^()]*\b\d{4}\b[^()]*)\)")
_LABEL = re.compile(r"^\s*\**(?:earlier|now|before|previously|update[sd]?)\**\s*[:—-]\s*", re.IGNORECASE)
_SPEAKER = re.compile(r"^\s*[A-Z][\w .'-]{0,40}:\s")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


# ---------------------------------------------------------------------------------------------- pure measures
def bullets(content: str) -> list[str]:
    """The list lines of a markdown document (nested ones included), marker removed."""
    return [m.group(1) for line in content.splitlines() if (m := _BULLET.match(line))]


def bullet_body(bullet: str) -> str:
    """What a bullet quotes: citations, dated parenthetical notes, an ``earlier``/``now`` label and a speaker
    prefix stripped, whitespace collapsed."""
    text = _CITATION.sub(" ", bullet)
    text = _DATED_NOTE.sub(" ", text)
    text = " ".join(text.replace("*", " ").split())
    text = _LABEL.sub("", text)
    text = _SPEAKER.sub("", text, count=1)
    return text.strip(" \t—-")


def is_question(bullet: str) -> bool:
    """A bullet that is a question: its quote ends with ``?`` (closing quotes and ellipses ignored)."""
    return bullet_body(bullet).rstrip(" \"'”’…").endswith("?")


def content_words(text: str) -> list[str]:
    """Words of ``text`` not in the NLTK English stopword list (lowercased, typographic apostrophes folded)."""
    return [w for w in _WORD.findall(text.lower().replace("\u2019", "'")) if w not in NLTK_STOPWORDS]


def is_thin(bullet: str) -> bool:
    """A bullet that says little: fewer than 6 content words once stripped (:func:`bullet_body`)."""
    return len(content_words(bullet_body(bullet))) < THIN_WORDS


def random_hit_chance(total: int, evidence: int, drawn: int) -> float:
    """Exact chance that ``drawn`` of ``total`` turns drawn at random include at least one of ``evidence`` turns:
    ``1 − C(total − evidence, drawn) / C(total, drawn)``."""
    if evidence <= 0 or drawn <= 0:
        return 0.0
    drawn = min(drawn, total)
    return 1.0 - math.comb(total - evidence, drawn) / math.comb(total, drawn)


def churn(previous: str, current: str) -> float:
    """Share of ``previous``'s non-blank lines absent from ``current`` (a multiset comparison of whole lines)."""
    before = [ln for ln in previous.splitlines() if ln.strip()]
    if not before:
        return 0.0
    after: dict[str, int] = {}
    for ln in current.splitlines():
        after[ln] = after.get(ln, 0) + 1
    gone = 0
    for ln in before:
        if after.get(ln, 0) > 0:
            after[ln] -= 1
        else:
            gone += 1
    return gone / len(before)


def headings(content: str) -> list[str]:
    """The ``##``-and-deeper headings of a document, in order."""
    return [ln.lstrip("#").strip() for ln in content.splitlines() if re.match(r"^#{2,6} ", ln)]


# ---------------------------------------------------------------------------------------------- HTTP helpers
def _item_json(item: RetainItem) -> dict[str, Any]:
    return {
        "content": item.content,
        "timestamp": item.timestamp.isoformat() if item.timestamp else None,
        "context": item.context,
        "metadata": dict(item.metadata),
        "document_id": item.document_id,
        "tags": list(item.tags),
    }


def _settle(client: Client, bank: str) -> None:
    """Wait until the bank has no pending or running operation (the consolidations retains queue)."""
    deadline = time.monotonic() + OP_TIMEOUT
    while time.monotonic() < deadline:
        busy = sum(client.list_operations(bank, status=s, limit=1).total for s in ("pending", "processing"))
        if not busy:
            return
        time.sleep(0.1)
    raise TimeoutError(f"bank {bank} still busy after {OP_TIMEOUT} s")


def _retain(client: Client, bank: str, items: Sequence[RetainItem]) -> None:
    for start in range(0, len(items), RETAIN_BATCH):
        client.retain(bank, items=[_item_json(i) for i in items[start : start + RETAIN_BATCH]])
    _settle(client, bank)


def _memory_turns(base_url: str, bank: str) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """Every memory of the bank over HTTP: id -> (its ``dia_id`` or None, its source memory ids)."""
    out: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    offset = 0
    with httpx.Client(base_url=base_url, timeout=60) as http:
        while True:
            page = http.get(f"/v1/default/banks/{bank}/memories/list", params={"limit": 1000, "offset": offset})
            page.raise_for_status()
            data = page.json()
            for m in data["items"]:
                sources = tuple(m.get("source_memory_ids") or m.get("source_fact_ids") or ())
                out[m["id"]] = ((m.get("metadata") or {}).get("dia_id"), sources)
            offset += len(data["items"])
            if not data["items"] or offset >= data["total"]:
                return out


def cited_turns(content: str, memories: dict[str, tuple[str | None, tuple[str, ...]]]) -> set[str]:
    """Distinct ``dia_id`` of the memories ``content`` cites; an observation counts for its sources."""
    turns: set[str] = set()
    pending = list(cited_memory_ids(content))
    seen: set[str] = set()
    while pending:
        memory_id = pending.pop()
        if memory_id in seen or memory_id not in memories:
            continue
        seen.add(memory_id)
        dia_id, sources = memories[memory_id]
        if dia_id:
            turns.add(dia_id)
        pending.extend(sources)
    return turns


def _create(client: Client, bank: str, speaker: str | None, trigger: dict[str, Any] | None = None) -> str:
    name = speaker or "everyone"
    query = (
        f"What matters most to {speaker}, and what is {speaker} working on?"
        if speaker
        else "What matters most to them, and what are they working on?"
    )
    created = client.create_mental_model(
        bank, name=name, source_query=query, tags=[speaker_tag(speaker)] if speaker else None,
        max_tokens=MAX_TOKENS, trigger=trigger,
    )  # fmt: skip
    op = client.wait(bank, created.operation_id, timeout=OP_TIMEOUT)
    if op.status != "completed":
        raise RuntimeError(f"the first refresh of {name} ended {op.status}: {op.error_message}")
    return created.mental_model_id


# ---------------------------------------------------------------------------------------------- quality
def score_model(
    conv: LocomoConversation, speaker: str, content: str, memories: dict[str, tuple[str | None, tuple[str, ...]]]
) -> dict[str, Any]:
    """Every quality figure of one speaker's document (module docstring)."""
    turn_speaker = {t.dia_id: t.speaker for s in conv.sessions for t in s.turns}
    own = {d for d, s in turn_speaker.items() if s == speaker}
    cited = cited_turns(content, memories)
    drawn = len(cited & own)
    hits = 0
    baseline = 0.0
    about = 0
    for q in conv.qa:
        if q.category not in CATEGORIES:
            continue
        evidence = {e for e in q.evidence if e in turn_speaker}
        mine = evidence & own
        if not mine:
            continue
        about += 1
        hits += bool(evidence & cited)
        baseline += random_hit_chance(len(own), len(mine), drawn)
    lines = bullets(content)
    return {
        "conversation": conv.sample_id,
        "speaker": speaker,
        "turns": len(own),
        "cited_turns": drawn,
        "questions": about,
        "hits": hits,
        "evidence_share": round(hits / about, 4) if about else None,
        "baseline": round(baseline / about, 4) if about else None,
        "bullets": len(lines),
        "question_bullets": sum(is_question(b) for b in lines),
        "thin_bullets": sum(is_thin(b) for b in lines),
        "question_share": round(sum(is_question(b) for b in lines) / len(lines), 4) if lines else None,
        "thin_share": round(sum(is_thin(b) for b in lines) / len(lines), 4) if lines else None,
        "headings": headings(content),
        "examples": {
            "questions": [bullet_body(b) for b in lines if is_question(b)][:5],
            "thin": [bullet_body(b) for b in lines if is_thin(b)][:5],
        },
    }


def quality(conv: LocomoConversation, embedder: Embedder) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Per speaker model of ``conv``: its figures, and its document (speaker -> markdown)."""
    with temp_bank(embedder) as mb, live_server(mb) as url, Client(url, timeout=OP_TIMEOUT) as client:
        _retain(client, BANK, locomo_items(conv))
        memories = _memory_turns(url, BANK)
        rows, documents = [], {}
        for speaker in conv.speakers:
            model_id = _create(client, BANK, speaker)
            content = client.get_mental_model(BANK, model_id).content or ""
            rows.append(score_model(conv, speaker, content, memories))
            documents[speaker] = content
        return rows, documents


# ---------------------------------------------------------------------------------------------- churn
def delta_churn(conv: LocomoConversation, embedder: Embedder) -> dict[str, Any]:
    """Churn of each delta refresh after the first half (module docstring)."""
    first, second = split_halves(conv)
    steps: list[dict[str, Any]] = []
    with temp_bank(embedder) as mb, live_server(mb) as url, Client(url, timeout=OP_TIMEOUT) as client:
        _retain(client, BANK, locomo_items(conv, first))
        models = {s: _create(client, BANK, s, {"mode": "delta"}) for s in conv.speakers}
        previous = {s: client.get_mental_model(BANK, m).content or "" for s, m in models.items()}
        for number in second:
            _retain(client, BANK, locomo_items(conv, [number]))
            for speaker, model_id in models.items():
                op = client.wait(BANK, client.refresh_mental_model(BANK, model_id).operation_id, timeout=OP_TIMEOUT)
                content = client.get_mental_model(BANK, model_id).content or ""
                result = op.result_metadata or {}
                steps.append(
                    {
                        "session": number,
                        "speaker": speaker,
                        "mode": result.get("effective_mode"),
                        "outcome": result.get("outcome"),
                        "lines_before": sum(1 for ln in previous[speaker].splitlines() if ln.strip()),
                        "lines_after": sum(1 for ln in content.splitlines() if ln.strip()),
                        "churn": round(churn(previous[speaker], content), 4),
                    }
                )
                previous[speaker] = content
    values = [s["churn"] for s in steps]
    return {
        "conversation": conv.sample_id,
        "steps": steps,
        "mean": round(statistics.fmean(values), 4) if values else None,
        "max": max(values) if values else None,
    }


# ---------------------------------------------------------------------------------------------- refresh time
def refresh_time(path: Path, repeat: int) -> dict[str, Any]:
    """Full refreshes of an untagged model over the whole conversation at ``path``, each timed end to end
    (seconds). Runs in a fresh process (:func:`run`), so the first refresh is cold."""
    conv = load_locomo(path)
    embedder, _ = load_embedder()
    with temp_bank(embedder) as mb:
        items = locomo_items(conv)
        for start in range(0, len(items), RETAIN_BATCH):
            mb.retain(BANK, items[start : start + RETAIN_BATCH])
        mb.run_pending()  # the consolidations the retains queued
        started, cpu = time.perf_counter(), time.process_time()
        model_id, _ = mb.create_mental_model(
            BANK, name="everyone", source_query="What matters most to them, and what are they working on?",
            max_tokens=MAX_TOKENS,
        )  # fmt: skip
        mb.run_pending()
        first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
        timings, cpu_times = [], []
        for _ in range(repeat):
            started, cpu = time.perf_counter(), time.process_time()
            mb.refresh_mental_model(BANK, model_id, mode="full")
            mb.run_pending()
            timings.append(time.perf_counter() - started)
            cpu_times.append(time.process_time() - cpu)
        memories = mb.store.count_memories(BANK)
    return {
        "conversation": conv.sample_id,
        "memories": memories,
        "first_refresh_s": round(first, 3),
        "runs_s": [round(t, 3) for t in timings],
        "best_s": round(min(timings), 3),
        "median_s": round(statistics.median(timings), 3),
        # CPU seconds of the process (all its threads): what a refresh costs whatever else the machine runs
        "first_refresh_cpu_s": round(first_cpu, 3),
        "runs_cpu_s": [round(t, 3) for t in cpu_times],
        "median_cpu_s": round(statistics.median(cpu_times), 3),
    }


# ---------------------------------------------------------------------------------------------- report
def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.fmean(kept), 4) if kept else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The file set's figures: means over speaker models; ratio = mean share / mean baseline."""
    share, base = _mean(r["evidence_share"] for r in rows), _mean(r["baseline"] for r in rows)
    all_headings = [h for r in rows for h in r["headings"]]
    return {
        "models": len(rows),
        "evidence_share": share,
        "baseline": base,
        "ratio": round(share / base, 3) if share is not None and base else None,
        "cited_turns": _mean(r["cited_turns"] for r in rows),
        "question_share": _mean(r["question_share"] for r in rows),
        "thin_share": _mean(r["thin_share"] for r in rows),
        "single_word_headings": round(sum(1 for h in all_headings if len(h.split()) == 1) / len(all_headings), 4)
        if all_headings
        else None,
    }


def _pick(convs: list[LocomoConversation], wanted: str | None, default: str) -> LocomoConversation | None:
    name = wanted or default
    return next((c for c in convs if c.sample_id == name), None)


def run(
    paths: Sequence[Path],
    *,
    churn_id: str | None = None,
    timing_id: str | None = None,
    repeat: int = 5,
    json_out: Path | None = None,
    skip: Sequence[str] = (),
    console: Console | None = None,
) -> dict[str, Any]:
    """Run every part on ``paths`` and write ``bench/results/mm-quality.json`` (or ``json_out``)."""
    console = console or Console(width=140)
    convs = [load_locomo(p) for p in paths]
    embedder, _ = load_embedder()
    report: dict[str, Any] = {"benchmark": "mm-quality", "command": command_line(), "machine": machine_info()}
    if "quality" not in skip:
        rows: list[dict[str, Any]] = []
        docs: dict[str, dict[str, str]] = {}
        table = Table(title="mental model quality per speaker model (max_tokens 2048)")
        for column in ("model", "turns", "cited", "questions", "share", "baseline", "×", "bullets", "?", "thin"):
            table.add_column(column, justify="right")
        for conv in convs:
            started = time.perf_counter()
            found, documents = quality(conv, embedder)
            docs[conv.sample_id] = documents
            rows.extend(found)
            for r in found:
                ratio = r["evidence_share"] / r["baseline"] if r["baseline"] else 0.0
                table.add_row(
                    f"{r['conversation']} {r['speaker']}", str(r["turns"]), str(r["cited_turns"]), str(r["questions"]),
                    f"{r['evidence_share']:.3f}", f"{r['baseline']:.3f}", f"{ratio:.2f}", str(r["bullets"]),
                    f"{r['question_share']:.1%}", f"{r['thin_share']:.1%}",
                )  # fmt: skip
            console.print(f"{conv.sample_id}: {time.perf_counter() - started:.1f} s")
        console.print(table)
        report["quality"] = {"summary": summarise(rows), "models": rows, "documents": docs}
        console.print(report["quality"]["summary"])
        for r in rows:
            console.print(f"[bold]{r['conversation']} {r['speaker']}[/] headings: {r['headings']}")
    if "churn" not in skip:
        conv = _pick(convs, churn_id, "conv-41")
        if conv is not None:
            report["churn"] = delta_churn(conv, embedder)
            console.print(
                f"delta churn on {conv.sample_id}: mean {report['churn']['mean']:.1%}, max {report['churn']['max']:.1%}"
            )
    if "timing" not in skip:
        conv = _pick(convs, timing_id, "conv-43")
        if conv is not None:
            path = paths[convs.index(conv)]
            # a fresh process: the engine's text caches hold nothing from the quality runs above
            with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
                report["refresh_time"] = pool.submit(refresh_time, path, repeat).result()
            console.print(f"refresh time on {conv.sample_id}: {report['refresh_time']}")
    out = json_out or RESULTS_DIR / "mm-quality.json"
    write_json(out, report)
    console.print(f"report: {out}")
    return report
