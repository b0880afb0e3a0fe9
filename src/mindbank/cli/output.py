"""How client commands print: rich text and tables for people, plain JSON (``--json``) for scripts."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class Output:
    """Where a client command writes: rich for people, plain JSON for scripts (``as_json``)."""

    def __init__(self, as_json: bool) -> None:
        from rich.console import Console

        self.as_json = as_json
        # Piped output gets a wide fixed width, so ids and types in tables are never folded across lines (a grep or
        # a cut then sees whole values); a terminal (or an explicit COLUMNS) keeps rich's own width.
        piped = not sys.stdout.isatty() and "COLUMNS" not in os.environ
        self.console: Console = Console(soft_wrap=True, highlight=False, width=200 if piped else None)

    def json(self, data: Any) -> None:
        """Print ``data`` (pydantic models, lists and dicts of them, plain values) as indented JSON."""
        print(json.dumps(plain(data), indent=2, ensure_ascii=False, default=str))

    def done(self, data: Any, message: str, *, markup: bool = True) -> int:
        """Finish a command: ``data`` as JSON for scripts, else a one-line ``message`` for people (``markup=False``
        for server text that may contain brackets); exit status 0."""
        if self.as_json:
            self.json(data)
        else:
            self.console.print(message, markup=markup)
        return 0

    def report(self, data: Any, lines: Iterable[str]) -> int:
        """Finish a command: ``data`` as JSON for scripts, else each of ``lines`` as plain text for people; exit
        status 0. ``lines`` is read only for people, so it may be a generator over ``data``."""
        if self.as_json:
            self.json(data)
        else:
            for line in lines:
                self.text(line)
        return 0

    def text(self, text: str) -> None:
        """Print ``text`` as is (no rich markup interpretation): content, diffs."""
        self.console.print(text, markup=False, highlight=False)

    def listing(
        self,
        data: Any,
        columns: Sequence[str],
        rows: Iterable[Sequence[str]],
        *,
        empty: str | None = None,
        footer: str | None = None,
    ) -> int:
        """Finish a listing command: ``data`` as JSON for scripts; for people a table of ``rows`` under ``columns``
        then ``footer`` (e.g. ``3 of 10``), or the line ``empty`` instead when there are no rows (None: the empty
        table). Exit status 0.

        ``rows`` is read only for people, so it may be a generator over ``data``."""
        if self.as_json:
            self.json(data)
            return 0
        from rich.table import Table

        table = Table(*columns)
        for row in rows:
            table.add_row(*row)
        if not table.row_count and empty is not None:
            self.console.print(empty)
            return 0
        self.console.print(table)
        if footer is not None:
            self.console.print(footer)
        return 0


def plain(data: Any) -> Any:
    """pydantic models (and lists and dicts of them) as JSON-able data, with the wire's field names."""
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    if isinstance(data, list):
        return [plain(d) for d in data]
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    return data


def when(value: datetime | None) -> str:
    """A time for a table cell: ``YYYY-MM-DD HH:MM:SS``, or ``-`` when unset."""
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def dry_run_verdict(outcome: str, would_persist: bool, failure_reason: str | None) -> str:
    """A dry run's verdict in the words the control plane and the docs use: "would write" only when the content
    would change (``content_written`` that a refresh would persist); "no change" when it would stay as it is;
    "would fail" with the reason otherwise."""
    if outcome == "content_written" and would_persist:
        return "would write: the content changes"
    if outcome == "content_written":
        return "would fail: the structured output cannot be produced"
    if outcome in ("content_unchanged", "content_preserved_no_new_facts"):
        return "no change: the content stays as it is"
    return f"would fail: {(failure_reason or outcome).replace('_', ' ')}"


def spend_line(spend: dict[str, Any]) -> str:
    """A spend figure for people: ``1,234 tokens (800 in, 434 out), 3 LLM calls, cost 0.0042`` (cost only when
    prices are configured)."""
    text = (
        f"{spend.get('total_tokens', 0):,} tokens ({spend.get('input_tokens', 0):,} in, "
        f"{spend.get('output_tokens', 0):,} out), {spend.get('llm_calls', 0)} LLM calls"
    )
    cost = spend.get("cost")
    return text + (f", cost {cost:g}" if cost is not None else "")
