"""``python -m bench operators``: what the drop-in endpoints cost as a bank grows — a page of ``GET /documents``
(plain, tag-filtered, and a text search), a ``GET /metrics`` scrape over many stored operations, and the extra cost
a retain pays to queue webhook deliveries.

Documents and operations are written straight through the store (one fact per document, no embedding model run) so
the sizes are reached quickly; the timed calls go through the service as the HTTP API makes them. Median of
``repeat`` calls, milliseconds.
"""

from __future__ import annotations

import itertools
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS_DIR, command_line, load_embedder, machine_info, temp_bank, write_json
from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.timeutil import utcnow
from mindbank.service.facade import MindBank
from mindbank.store.base import DocumentWrite


def _median_ms(call: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def _fill_documents(mb: MindBank, count: int, dimension: int) -> None:
    vector = np.ones(dimension, dtype=np.float32) / np.sqrt(dimension)
    batch: list[DocumentWrite] = []
    for i in range(count):
        doc_id = f"doc-{i:06d}"
        text = f"Note {i}: the team shipped release {i % 97} on day {i % 31}."
        chunk = Chunk(id=uuid.uuid4().hex, document_id=doc_id, index=0, text=text)
        memory = NewMemory(text=text, fact_type="world", embedding=vector, tags=(f"team:{i % 10}",), context=None,
                           metadata={}, document_id=doc_id, chunk_id=chunk.id, occurred_start=None,
                           occurred_end=None, mentioned_at=utcnow())  # fmt: skip
        item = RetainItem(content=text, tags=(f"team:{i % 10}",), document_id=doc_id)
        batch.append(DocumentWrite(item=item, document_id=doc_id, chunks=[chunk], memories=[memory]))
        if len(batch) == 500:
            mb.store.write_documents("b", batch)
            batch = []
    if batch:
        mb.store.write_documents("b", batch)


def _fill_operations(mb: MindBank, count: int) -> None:
    for i in range(count):
        op = mb._new_operation("b", ("batch_retain", "consolidation", "refresh_mental_model")[i % 3], {})
        mb.store.submit_operation(op)
        if i % 4:
            mb.store.finish_operation(op.id, status="completed" if i % 5 else "failed", result=None, error=None)


_RETAINS = itertools.count()


def _retain_one(mb: MindBank) -> None:
    # a new text each time: the same text again would be a repeat (a count on the stored fact), not a new memory
    mb.retain("b", [RetainItem(content=f"Dana ships release {next(_RETAINS)} on Thursday.")])


def run(sizes: list[int], *, operations: int, repeat: int, json_out: Path | None) -> dict[str, Any]:
    """Measure at each document count in ``sizes``; print a table and write the JSON report."""
    embedder, _ = load_embedder()
    rows = []
    for size in sizes:
        with temp_bank(embedder) as mb:
            _fill_documents(mb, size, embedder.dimension)
            _fill_operations(mb, operations)
            row = {
                "documents": size,
                "operations": operations,
                "list_page_ms": _median_ms(lambda: mb.list_documents("b", limit=100), repeat),
                "list_tagged_ms": _median_ms(lambda: mb.list_documents("b", tags=["team:3"], limit=100), repeat),
                "list_search_ms": _median_ms(lambda: mb.list_documents("b", query="release 42 ", limit=100), repeat),
                "metrics_scrape_ms": _median_ms(mb.metrics.render, repeat),
            }
            mb.settings = replace(mb.settings, enable_auto_consolidation=False, webhook_allow_private_targets=True)
            row["retain_ms"] = _median_ms(lambda: _retain_one(mb), repeat)
            for i in range(5):
                mb.create_webhook("b", url=f"http://127.0.0.1:9/hook{i}", event_types=["retain.completed"])
            row["retain_5_webhooks_ms"] = _median_ms(lambda: _retain_one(mb), repeat)
            rows.append(row)
            print(row)
    report = {"command": command_line(), "machine": machine_info(), "repeat": repeat, "rows": rows}
    write_json(json_out or RESULTS_DIR / "operators.json", report)
    return report
