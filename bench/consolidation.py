"""Consolidation: which observations the offline (extractive) consolidator forms, and what forming them costs.

``python -m bench consolidation PATH... [--database-url URL]`` (SQLite by default; with a URL, a database beside it
on PostgreSQL). Four parts:

* **quality**, per LoCoMo conversation: every turn retained in one call, then consolidated to the end. Reports the
  facts, the observations, *evidence coverage* — of the turns cited as evidence by the conversation's questions of
  categories 1–4, the share whose fact is a source of some observation — and the *small-talk* share of the
  observations (definition below), every small-talk observation listed.
* **labelled**: the paraphrase groups and near-miss pairs of ``bench/data/consolidation_labels.json`` (written before
  the consolidator was tuned), each group and pair in its own observation scope (its own tag), each statement
  retained a day after the previous one. A group is *collapsed* when one observation cites all its statements; a
  near-miss pair is *merged* when one observation cites both statements — except an ``update`` pair whose
  observation states the newer value and keeps the older one as history ("(earlier, DATE: …)"), which is the
  intended outcome of an update.
* **cost**: the longest conversation given retained turn by turn, each retain followed by consolidation rounds until
  nothing is pending (what auto-consolidation does): total wall time, retain and consolidation seconds, rounds and
  observations written per round (mean and max).
* **retain throughput**: the longest conversation retained in one call into a fresh bank, five times (median); with
  ``--before-src DIR``, alternating with another tree's ``src`` in the same run (``bench/retain_rate.py``), so the
  two medians see the same load.

The cost part reports wall seconds and the process's CPU seconds (``time.process_time``, all threads) beside the
1-minute load average at its start and end: on a machine shared with other work the wall time is mostly waiting
for a core, and the CPU seconds are what the work itself took.

*Small talk* (defined here, not in ``src/``): an observation whose text, once the ``Name:`` speaker prefix and any
"(earlier, …)" history are stripped, ends with "?", has fewer than 6 content words (words of more than one letter
that are not stopwords), or matches :data:`SMALL_TALK` (greetings, thanks, goodbyes).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, temp_bank, write_json
from bench.retain_rate import compare
from mindbank.config import Settings
from mindbank.domain.records import MemoryUnit, RetainItem
from mindbank.domain.text import STOPWORDS
from mindbank.engine.consolidate.rounds import consolidate_round
from mindbank.importers import load_locomo, locomo_items
from mindbank.importers.locomo import LocomoConversation
from mindbank.providers.embeddings.base import Embedder
from mindbank.service.facade import MindBank

BANK = "consolidation-bench"
LABELS = Path(__file__).resolve().parent / "data" / "consolidation_labels.json"
EVIDENCE_CATEGORIES = frozenset({1, 2, 3, 4})
SMALL_TALK_MIN_WORDS = 6
# greetings, thanks and goodbyes: an observation matching one of these says nothing about anyone
SMALL_TALK = re.compile(
    r"^\W*(?:hi|hey|hello|hiya|bye|goodbye|good (?:morning|night|evening)|thanks?|thank you|cheers|congrats|"
    r"congratulations|wow|aww+|omg|see (?:you|ya)|talk (?:soon|later)|take care|gotta (?:go|run)|long time no|"
    r"nice (?:to|talking)|great (?:to|talking)|you'?re welcome|no worries|sounds (?:good|great|fun))\b",
    re.IGNORECASE,
)
_SPEAKER = re.compile(r"^[A-Z][\w .'-]{0,40}:\s")
_HISTORY = re.compile(r"\s*\(earlier, [^)]*\)\s*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def statement(text: str) -> str:
    """An observation's statement: its text without the speaker prefix and the "(earlier, …)" history."""
    body = _SPEAKER.sub("", text.strip(), count=1)
    while _HISTORY.search(body):
        body = _HISTORY.sub("", body)
    return body.strip()


def is_small_talk(text: str) -> bool:
    """Whether an observation is small talk (module docstring)."""
    body = statement(text)
    words = [w.lower().strip("'’") for w in _WORD.findall(body)]
    content = [w for w in words if len(w) > 1 and w not in STOPWORDS]
    return body.rstrip(" \"')”’").endswith("?") or len(content) < SMALL_TALK_MIN_WORDS or bool(SMALL_TALK.match(body))


def evidence_turns(conv: LocomoConversation) -> set[str]:
    """dia_ids cited as evidence by the questions of categories 1–4."""
    return {e for q in conv.qa if q.category in EVIDENCE_CATEGORIES for e in q.evidence}


def _consolidate(bank: MindBank) -> tuple[float, int]:
    """Consolidate the bank's pending facts to the end; ``(seconds, rounds)``."""
    rounds, start = 0, time.perf_counter()
    while True:
        rounds += 1
        if not consolidate_round(bank.store, BANK, consolidator=bank.consolidator).more:
            return time.perf_counter() - start, rounds


def _all(bank: MindBank, fact_types: tuple[str, ...]) -> list[MemoryUnit]:
    out: list[MemoryUnit] = []
    while True:
        page, total = bank.list_memories(BANK, types=list(fact_types), limit=1000, offset=len(out))
        out.extend(page)
        if not page or len(out) >= total:
            return out


@contextmanager
def _bank(embedder: Embedder, database_url: str | None) -> Iterator[MindBank]:
    """A fresh SQLite bank, or the bench bank emptied on a PostgreSQL database beside ``database_url``'s."""
    if database_url is None:
        with temp_bank(embedder) as bank:
            yield bank
        return
    from bench.failing_provider import sibling_database

    bank = MindBank.open(
        Settings(database_url=sibling_database(database_url, "consolidation_bench")), embedder=embedder
    )
    try:
        bank.store.delete_bank(BANK)
        yield bank
    finally:
        bank.store.delete_bank(BANK)
        bank.close()


def quality(embedder: Embedder, path: Path, database_url: str | None) -> dict[str, Any]:
    """Evidence coverage and small-talk share of the observations of one conversation (module docstring)."""
    conv = load_locomo(path)
    with _bank(embedder, database_url) as bank:
        bank.retain(BANK, locomo_items(conv))
        seconds, rounds = _consolidate(bank)
        facts = _all(bank, ("world", "experience"))
        observations = _all(bank, ("observation",))
    turn_of = {f.id: f.metadata.get("dia_id") for f in facts}
    covered = {turn_of.get(s) for o in observations for s in (o.source_memory_ids or ())}
    evidence = evidence_turns(conv)
    small = [o.text for o in observations if is_small_talk(o.text)]
    return {
        "sample_id": conv.sample_id,
        "facts": len(facts),
        "observations": len(observations),
        "consolidation_s": round(seconds, 3),
        "rounds": rounds,
        "evidence_turns": len(evidence),
        "evidence_covered": len(evidence & covered),
        "evidence_coverage": round(len(evidence & covered) / max(1, len(evidence)), 4),
        "small_talk": len(small),
        "small_talk_share": round(len(small) / max(1, len(observations)), 4),
        "small_talk_examples": small,
    }


def labelled(embedder: Embedder, database_url: str | None, labels: Path = LABELS) -> dict[str, Any]:
    """Paraphrase groups collapsed and near-miss pairs merged (module docstring)."""
    data = json.loads(labels.read_text(encoding="utf-8"))
    start = datetime(2024, 1, 1, 12, tzinfo=UTC)
    sets = [("group", i, g) for i, g in enumerate(data["paraphrase_groups"])]
    sets += [("pair", i, p) for i, p in enumerate(data["near_miss_pairs"])]
    with _bank(embedder, database_url) as bank:
        ids: dict[tuple[str, int], list[str]] = {}
        for kind, index, entry in sets:
            for day, text in enumerate(entry["texts"]):
                item = RetainItem(content=f"{entry['speaker']}: {text}", timestamp=start + timedelta(days=day),
                                  tags=(f"{kind}:{index}",))  # fmt: skip
                ids.setdefault((kind, index), []).extend(bank.retain(BANK, [item]).memory_ids)
                _consolidate(bank)  # one statement at a time, as a conversation arrives
        observations = _all(bank, ("observation",))
    cited = [(set(o.source_memory_ids or ()), o.text) for o in observations]
    groups = [ids[("group", i)] for i in range(len(data["paraphrase_groups"]))]
    collapsed = [any(set(g) <= sources for sources, _ in cited) for g in groups]
    merged: list[dict[str, Any]] = []
    for index, pair in enumerate(data["near_miss_pairs"]):
        older, newer = ids[("pair", index)]
        together = [text for sources, text in cited if {older, newer} <= sources]
        kept_as_history = pair["kind"] == "update" and any("(earlier, " in t for t in together)
        if together and not kept_as_history:
            merged.append({"kind": pair["kind"], "texts": pair["texts"], "observation": together[0]})
    missed = [data["paraphrase_groups"][i]["texts"] for i, ok in enumerate(collapsed) if not ok]
    pairs = len(data["near_miss_pairs"])
    return {
        "paraphrase_groups": len(groups),
        "collapsed": sum(collapsed),
        "collapsed_share": round(sum(collapsed) / max(1, len(groups)), 4),
        "not_collapsed": missed,
        "near_miss_pairs": pairs,
        "merged": len(merged),
        "merged_share": round(len(merged) / max(1, pairs), 4),
        "merged_pairs": merged,
    }


def cost(embedder: Embedder, path: Path, database_url: str | None) -> dict[str, Any]:
    """The conversation retained turn by turn, each retain followed by consolidation to the end (module docstring)."""
    items = locomo_items(load_locomo(path))
    per_round: list[int] = []
    retain_s = consolidation_s = retain_cpu = consolidation_cpu = 0.0
    load_start = os.getloadavg()[0]
    with _bank(embedder, database_url) as bank:
        wall, cpu = time.perf_counter(), time.process_time()
        for item in items:
            start, start_cpu = time.perf_counter(), time.process_time()
            bank.retain(BANK, [item])
            retain_s += time.perf_counter() - start
            retain_cpu += time.process_time() - start_cpu
            start, start_cpu = time.perf_counter(), time.process_time()
            while True:
                done = consolidate_round(bank.store, BANK, consolidator=bank.consolidator)
                per_round.append(done.created + done.updated)
                if not done.more:
                    break
            consolidation_s += time.perf_counter() - start
            consolidation_cpu += time.process_time() - start_cpu
        wall_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
        observations = len(_all(bank, ("observation",)))
    return {
        "turns": len(items),
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),
        "retain_s": round(retain_s, 2),
        "retain_cpu_s": round(retain_cpu, 2),
        "consolidation_s": round(consolidation_s, 2),
        "consolidation_cpu_s": round(consolidation_cpu, 2),
        "load_avg_1m": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "rounds": len(per_round),
        "ms_per_round": round(1000 * consolidation_s / max(1, len(per_round)), 2),
        "observation_writes_per_round_mean": round(statistics.mean(per_round), 3) if per_round else 0.0,
        "observation_writes_per_round_max": max(per_round, default=0),
        "observations": observations,
    }


def retain_throughput(embedder: Embedder, path: Path, repeat: int = 5) -> dict[str, Any]:
    """Median memories/s of ``repeat`` one-call retains of the conversation into fresh SQLite banks."""
    items = locomo_items(load_locomo(path))
    rates: list[float] = []
    for _ in range(repeat):
        with temp_bank(embedder) as bank:
            start = time.perf_counter()
            n = len(bank.retain(BANK, items).memory_ids)
            rates.append(n / (time.perf_counter() - start))
    return {"repeat": repeat, "memories_per_s_median": round(statistics.median(rates), 1),
            "memories_per_s": [round(r, 1) for r in rates]}  # fmt: skip


def run(
    paths: Sequence[Path], *, database_url: str | None = None, json_out: Path | None = None,
    skip: Sequence[str] = (), console: Console | None = None, before_src: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run the parts not in ``skip`` (``quality``, ``labelled``, ``cost``, ``throughput``); print, write JSON and
    return the report. ``before_src``: the ``src`` folder of another tree whose retain throughput is compared with
    this one's in the same run (module docstring)."""
    console = console or Console()
    embedder, load_s = load_embedder()
    embedder.embed(["warm-up"])
    report: dict[str, Any] = {
        "benchmark": "consolidation", "command": command_line(), "machine": machine_info(),
        "backend": "postgres" if database_url else "sqlite", "embedder_load_s": round(load_s, 3),
    }  # fmt: skip
    if "quality" not in skip:
        rows = [quality(embedder, p, database_url) for p in paths]
        evidence = sum(r["evidence_turns"] for r in rows)
        observations = sum(r["observations"] for r in rows)
        report["quality"] = {
            "conversations": rows,
            "evidence_coverage": round(sum(r["evidence_covered"] for r in rows) / max(1, evidence), 4),
            "small_talk_share": round(sum(r["small_talk"] for r in rows) / max(1, observations), 4),
        }
        table = Table(title="observations per conversation (one call, consolidated to the end)")
        for column in ("conversation", "facts", "observations", "evidence covered", "small talk", "seconds"):
            table.add_column(column, justify="right")
        for r in rows:
            table.add_row(r["sample_id"], str(r["facts"]), str(r["observations"]),
                          f"{r['evidence_coverage']:.1%}", f"{r['small_talk_share']:.1%}",
                          f"{r['consolidation_s']:.2f}")  # fmt: skip
        console.print(table)
        console.print(f"all: evidence coverage {report['quality']['evidence_coverage']:.1%}, small talk "
                      f"{report['quality']['small_talk_share']:.1%}")  # fmt: skip
    if "labelled" not in skip:
        report["labelled"] = found = labelled(embedder, database_url)
        console.print(f"labelled: {found['collapsed']}/{found['paraphrase_groups']} paraphrase groups collapsed, "
                      f"{found['merged']}/{found['near_miss_pairs']} near-miss pairs merged")  # fmt: skip
    longest = max(paths, key=lambda p: len(locomo_items(load_locomo(p))))
    if "cost" not in skip:
        report["cost"] = spent = {"file": str(longest), **cost(embedder, longest, database_url)}
        console.print(f"cost ({longest.name}, turn by turn): {spent}")
    if "throughput" not in skip and before_src is not None:
        report["retain_throughput"] = compared = compare(longest, before_src)
        console.print(f"retain throughput ({longest.name}, alternating, median of {compared['repeat']}): before "
                      f"{compared['before_memories_per_s_median']}, after {compared['after_memories_per_s_median']} "
                      f"memories/s (after/before {compared['after_over_before_memories_per_s']}, paired "
                      f"{compared['after_over_before_memories_per_s_paired_median']}); per CPU second "
                      f"{compared['before_memories_per_cpu_s_median']} / {compared['after_memories_per_cpu_s_median']} "
                      f"(paired {compared['after_over_before_memories_per_cpu_s_paired_median']})")  # fmt: skip
    elif "throughput" not in skip:
        report["retain_throughput"] = rate = {"file": str(longest), **retain_throughput(embedder, longest)}
        console.print(f"retain throughput ({longest.name}): {rate['memories_per_s_median']} memories/s (median)")
    out = json_out or RESULTS_DIR / f"consolidation{'-postgres' if database_url else ''}.json"
    write_json(out, report)
    console.print(f"wrote {out}")
    return report
