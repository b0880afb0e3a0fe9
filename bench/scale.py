"""``python -m bench scale``: how mindbank's costs grow with the bank.

Synthetic banks are built from the dialogue turns of the LoCoMo files: each turn is embedded once, then replicated
with a variant suffix and a slightly perturbed vector until the bank holds N memories; tags vary (speaker, session,
a topic bucket). Memories are written through the store directly (the embedder is the cost of retain, measured by
``python -m bench retain``), so building 100k memories takes about a minute instead of an hour of embedding.

Figures per bank size: hybrid recall latency p50/p95 (query embedding included; queries are the LoCoMo questions),
GET mental model latency (in-process, with is_stale), listing 1000 mental models with is_stale (latency and SQL
statement count), and the cost of a staleness check for a page of 100 models.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, load_embedder, machine_info, write_json
from mindbank.config import Settings
from mindbank.domain.document import parse_markdown, render_markdown
from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.timeutil import utcnow
from mindbank.importers import load_locomo, locomo_items
from mindbank.service.facade import MindBank
from mindbank.store.base import DocumentWrite

BANK = "scale"


def _locomo_folder() -> Path:
    """The LoCoMo files: ``shared/data/locomo`` beside the nearest folder above this checkout that has one (a
    worktree under ``wt/`` sits one level deeper than the main checkout)."""
    here = Path(__file__).resolve()
    for parent in here.parents[1:]:
        folder = parent / "shared" / "data" / "locomo"
        if folder.is_dir():
            return folder
    return here.parents[2] / "shared" / "data" / "locomo"


LOCOMO = _locomo_folder()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _corpus(paths: list[Path], embedder: Any) -> tuple[list[RetainItem], np.ndarray, list[str]]:
    items: list[RetainItem] = []
    questions: list[str] = []
    for path in paths:
        conv = load_locomo(path)
        items.extend(locomo_items(conv))
        questions.extend(q.question for q in conv.qa if q.category != 5)
    vectors = embedder.embed([i.content for i in items])
    return items, vectors, questions


Bank = Literal["replicated", "conversations"]


def build_bank(
    mb: MindBank, items: list[RetainItem], vectors: np.ndarray, size: int, seed: int = 7, bank: Bank = "replicated"
) -> None:
    """Write ``size`` memories replicated from ``items`` (perturbed vectors, varied tags) in batches.

    ``bank`` ``"replicated"`` keeps each copy of a turn in the turn's own context (a LoCoMo session) at its moment,
    so at 100k memories a moment holds about 25 facts and every fact's preceding text the last
    ``PRECEDING_PIECES`` (8) of them; ``"conversations"`` gives copy ``v`` of each session a context of its own
    (``"<context> #v"``), so a moment holds one fact and a preceding text one turn, as in a bank of many
    conversations. The texts, vectors and tags are the same in both."""
    rng = np.random.default_rng(seed)
    batch: list[DocumentWrite] = []
    now = utcnow()
    for n in range(size):
        base = items[n % len(items)]
        variant = n // len(items)
        vector = vectors[n % len(items)] + rng.normal(0, 0.02, vectors.shape[1]).astype(np.float32)
        vector /= np.linalg.norm(vector)
        text = base.content if variant == 0 else f"{base.content} (v{variant})"
        context = base.context if variant == 0 or bank == "replicated" else f"{base.context} #{variant}"
        tags = (*base.tags, f"topic:{n % 50}", f"session:{base.metadata.get('session', '0')}")
        doc_id = uuid.uuid4().hex
        chunk = Chunk(id=doc_id, document_id=doc_id, index=0, text=text)
        memory = NewMemory(
            text=text, fact_type="world", embedding=vector, tags=tags, context=context, metadata=base.metadata,
            document_id=doc_id, chunk_id=chunk.id, occurred_start=base.timestamp, occurred_end=base.timestamp,
            mentioned_at=base.timestamp or now,
        )  # fmt: skip
        batch.append(DocumentWrite(item=RetainItem(content=text, tags=tags), document_id=doc_id, chunks=[chunk],
                                   memories=[memory]))  # fmt: skip
        if len(batch) == 1000:
            mb.store.write_documents(BANK, batch)
            batch = []
    if batch:
        mb.store.write_documents(BANK, batch)


def _models(mb: MindBank, count: int) -> list[str]:
    """``count`` mental models with varied scopes, each with a small cited document and a watermark."""
    from dataclasses import replace

    hits, _ = mb.store.list_memories(BANK, MemoryFilter(), query=None, limit=50, offset=0)
    ids = []
    stamp = mb.last_memory_write_at(BANK)
    for i in range(count):
        tags = [f"topic:{i % 50}"] if i % 3 else []
        model_id, _ = mb.create_mental_model(BANK, name=f"m{i}", source_query="What matters?", tags=tags,
                                             id=f"m{i:05d}")  # fmt: skip
        model = mb.store.get_mental_model(BANK, model_id)
        doc = parse_markdown(f"- fact [mem:{hits[i % len(hits)].id}]\n")
        mb.store.save_refresh(replace(model, content=render_markdown(doc), structured_document=doc.to_dict(),  # type: ignore[arg-type]
                                      last_memory_seen_at=stamp), history=None, history_cap=50)  # fmt: skip
        ids.append(model_id)
    return ids


def measure(mb: MindBank, questions: list[str]) -> dict[str, Any]:
    """Latency figures on a built bank (milliseconds) and the SQL statement count of a 1000-model list."""
    mb.recall(BANK, "warm up the index")
    recall_ms = [t for q in questions[:200] for t in _timed(lambda q=q: mb.recall(BANK, q, max_tokens=2048), 1)]
    filtered_ms = [
        t
        for q in questions[:100]
        for t in _timed(lambda q=q: mb.recall(BANK, q, tags=["topic:3"], tags_match="any_strict", max_tokens=2048), 1)
    ]
    model_ids = _models(mb, 1000)
    get_ms = _timed(lambda: mb.get_mental_model(BANK, model_ids[7]), 200)
    list_ms = _timed(lambda: mb.list_mental_models(BANK, limit=1000, detail="metadata"), 20)  # the API default
    statements = -1
    log_fn = getattr(mb.store, "statement_log", None)
    if log_fn is not None:
        with log_fn() as log:
            mb.list_mental_models(BANK, limit=1000, detail="metadata")
        statements = len(log)
    mb.retain(BANK, [RetainItem(content="A new fact about topic 3.", tags=("topic:3",))])
    stale_ms = _timed(lambda: mb.list_mental_models(BANK, limit=100), 20)
    return {
        "recall_p50_ms": round(_percentile(recall_ms, 0.5), 1),
        "recall_p95_ms": round(_percentile(recall_ms, 0.95), 1),
        "recall_filtered_p95_ms": round(_percentile(filtered_ms, 0.95), 1),
        "get_model_p50_ms": round(statistics.median(get_ms), 2),
        "list_1000_p50_ms": round(statistics.median(list_ms), 1),
        "list_1000_statements": statements,
        "staleness_page_100_p50_ms": round(statistics.median(stale_ms), 2),
    }


def run(
    sizes: list[int],
    *,
    database_url: str | None = None,
    json_out: Path | None = None,
    console: Console | None = None,
    bank: Bank = "replicated",
) -> dict[str, Any]:
    """Build a bank of each size (``bank``: :func:`build_bank`) and measure; prints a table and writes JSON."""
    import tempfile

    console = console or Console()
    embedder, _ = load_embedder()
    items, vectors, questions = _corpus(sorted(LOCOMO.glob("*.json")), embedder)
    rows: list[dict[str, Any]] = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="mindbank-scale-") as folder:
            url = database_url or str(Path(folder) / "scale.db")
            settings = Settings(database_url=url, enable_auto_consolidation=False)
            mb = MindBank.open(settings, embedder=embedder)
            try:
                if database_url:
                    mb.store.delete_bank(BANK)
                started = time.perf_counter()
                build_bank(mb, items, vectors, size, bank=bank)
                build_s = time.perf_counter() - started
                rows.append({"memories": size, "build_seconds": round(build_s, 1), **measure(mb, questions)})
            finally:
                mb.close()
    table = Table(title=f"scale ({'postgres' if database_url else 'sqlite'}, {bank} bank)")
    for key in rows[0]:
        table.add_column(key, justify="right")
    for r in rows:
        table.add_row(*(str(v) for v in r.values()))
    console.print(table)
    report = {
        "benchmark": "scale",
        "backend": "postgres" if database_url else "sqlite",
        "bank": bank,
        "command": "python -m bench scale --sizes "
        + " ".join(map(str, sizes))
        + (" --database-url URL" if database_url else "")
        + (f" --bank {bank}" if bank != "replicated" else ""),
        "machine": machine_info(),
        "rows": rows,
    }
    write_json(json_out or RESULTS_DIR / f"scale-{report['backend']}.json", report)
    return report
