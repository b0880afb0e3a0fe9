"""``python -m bench parsers``: what hostile uploads cost the server before it answers — HTML text extraction of
flat pages of N paragraphs (linear since the extraction became one walk; the tree edits before were quadratic), a
PDF whose arrays nest 50,000 deep and a Flate bomb (refused), and a transfer archive of 64 MB of blank lines in a
~64 KB ZIP (refused while it streams). Seconds per case, best of ``--repeat`` runs.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, machine_info, write_json
from mindbank.engine.retain.convert import UnreadableFile, html_text, pdf_text
from mindbank.engine.transfer.reader import ArchiveError, ArchiveReader, inspect_archive
from mindbank.testing_files import flate_bomb_pdf, nested_pdf

MANIFEST = {
    "format": "bank-transfer",
    "format_version": 1,
    "source_bank_id": "b",
    "exported_at": "2026-03-01T10:00:00Z",
}


def _blank_archive() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(MANIFEST))
        zf.writestr("memories.jsonl", b"\n" * (64 << 20))
    return buf.getvalue()


def _refused(fn: Callable[[], Any], errors: tuple[type[BaseException], ...]) -> str:
    try:
        fn()
    except errors as exc:
        return f"refused: {str(exc)[:60]}"
    return "accepted"


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, outcome = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        outcome = fn()
        best = min(best, time.perf_counter() - started)
    return best, outcome


def run(paragraphs: list[int], *, repeat: int = 3, json_out: Path | None = None) -> dict[str, Any]:
    """Time each case; print a table and write the JSON report."""
    rows: list[dict[str, Any]] = []
    for n in paragraphs:
        page = "<p>paragraph</p>" * n
        seconds, _ = _best(lambda page=page: html_text(page), repeat)
        rows.append({"case": f"HTML, {n:,} flat <p> ({len(page) // 1000} KB)", "seconds": seconds, "outcome": "read"})
    nested = nested_pdf(b"[", b"]", 50_000)
    bomb, blank = flate_bomb_pdf(), _blank_archive()

    def read_archive() -> str:
        def go() -> None:
            with ArchiveReader(io.BytesIO(blank)) as reader:
                inspect_archive(reader)

        return _refused(go, (ArchiveError,))

    cases = [
        (f"PDF, arrays nested 50,000 deep ({len(nested) // 1000} KB)", lambda: _refused(lambda: pdf_text(nested),
                                                                                          (UnreadableFile,))),
        (f"PDF, Flate bomb (~110 MB from {len(bomb) // 1000} KB)", lambda: _refused(lambda: pdf_text(bomb),
                                                                                  (UnreadableFile,))),
        (f"transfer archive, 64 MB of blank lines ({len(blank) // 1000} KB)", read_archive),
    ]  # fmt: skip
    for name, fn in cases:
        seconds, outcome = _best(fn, repeat)
        rows.append({"case": name, "seconds": seconds, "outcome": outcome})
    table = Table(title=f"hostile uploads: seconds before the answer (best of {repeat})")
    for column in ("case", "seconds", "outcome"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["case"], f"{row['seconds']:.3f}", row["outcome"])
    Console().print(table)
    report = {"command": command_line(), "machine": machine_info(), "repeat": repeat, "rows": rows}
    write_json(json_out or RESULTS_DIR / "parsers.json", report)
    return report
