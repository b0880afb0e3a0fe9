"""``python -m bench knowledge-base``: what the knowledge base costs as it grows.

A bank of 2,000 memories (the bundled sample conversation's turns, repeated with variants) gets N pages in folders of
20; each page's content is set to a document quoting 12 of those turns (written through the store, as a refresh
would, so building 1,000 pages takes seconds instead of 1,000 refreshes). Measured, in process: the tree with every
page's ``is_stale`` (latency and SQL statements), hybrid page search cold (every page embedded once) and warm (stored
vectors reused), and the export bundle.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, write_json
from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.service.facade import MindBank

BANK = "kb"
SAMPLE = Path(__file__).resolve().parents[1] / "src" / "mindbank" / "data" / "sample_conversation.json"
QUERIES = ["marathon training", "what does she paint", "family and children", "career plans", "a trip abroad"]


def _turns() -> list[str]:
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    sessions = [v for key, v in data.items() if key.startswith("session_") and isinstance(v, list)]
    return [f"{t['speaker']}: {t['text']}" for session in sessions for t in session]


def _ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def _build(mb: MindBank, pages: int, turns: list[str]) -> None:
    mb.retain(BANK, [RetainItem(content=f"{t} (note {i})", tags=(f"topic:{i % 10}",)) for i, t in
                     enumerate((turns * (2000 // len(turns) + 1))[:2000])])  # fmt: skip
    folder = None
    for i in range(pages):
        if i % 20 == 0:
            folder = mb.create_knowledge_folder(BANK, f"Folder {i // 20}").id
        question = f"What about {turns[i % len(turns)][:40]}?"
        _, model_id, _ = mb.create_knowledge_page(
            BANK, name=f"Page {i}", source_query=question, parent_id=folder, tags=[f"topic:{i % 10}"]
        )
        model = mb.store.get_mental_model(BANK, model_id)
        assert model is not None
        body = "\n\n".join(f"- {turns[(i * 12 + j) % len(turns)]}" for j in range(12))
        mb.store.save_refresh(replace(model, content=f"## Notes\n\n{body}\n"), history=None, history_cap=0)


def _measure(mb: MindBank, pages: int) -> dict[str, Any]:
    log = getattr(mb.store, "statement_log", None)
    statements = None
    if log is not None:
        with log() as seen:
            mb.knowledge_tree(BANK)
        statements = len(seen)
    start = time.perf_counter()
    mb.search_knowledge_base(BANK, QUERIES[0])
    cold = round((time.perf_counter() - start) * 1000, 1)
    queries = iter(QUERIES * 10)
    return {
        "pages": pages,
        "tree_ms": _ms(lambda: mb.knowledge_tree(BANK), 5),
        "tree_sql_statements": statements,
        "search_cold_ms": cold,
        "search_warm_ms": _ms(lambda: mb.search_knowledge_base(BANK, next(queries)), 10),
        "export_ms": _ms(lambda: mb.export_knowledge_base(BANK), 3),
    }


def run(sizes: list[int], *, database_url: str | None, json_out: Path | None) -> Path:
    """Build a bank per size, time tree/search/export, print a table and write the JSON report."""
    embedder, _ = load_embedder()
    turns = _turns()
    rows = []
    for pages in sizes:
        with tempfile.TemporaryDirectory(prefix="mindbank-bench-kb-") as folder:
            url = database_url or str(Path(folder) / "kb.db")
            mb = MindBank.open(Settings(database_url=url), embedder=embedder)
            try:
                if database_url:  # a shared server: start from an empty bank
                    mb.store.delete_bank(BANK)
                _build(mb, pages, turns)
                rows.append(_measure(mb, pages))
            finally:
                if database_url:
                    mb.store.delete_bank(BANK)
                mb.close()
    table = Table("pages", "tree (ms)", "tree SQL", "search cold (ms)", "search warm (ms)", "export (ms)")
    for r in rows:
        table.add_row(*(str(r[k]) for k in ("pages", "tree_ms", "tree_sql_statements", "search_cold_ms",
                                             "search_warm_ms", "export_ms")))  # fmt: skip
    Console().print(table)
    backend = "postgres" if database_url else "sqlite"
    path = json_out or RESULTS_DIR / f"knowledge-base-{backend}.json"
    return write_json(path, {"command": command_line(), "backend": backend, "machine": machine_info(), "rows": rows})
