"""Client commands over a bank's memories: ``retain``, ``recall``, ``reflect``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mindbank.cli.common import (
    Subparsers,
    UsageError,
    add_wait_flags,
    bank,
    client_command,
    key_values,
    wait_and_report,
)
from mindbank.cli.output import Output

if TYPE_CHECKING:
    from mindbank.client import Client, RecallResponse

TAGS_MATCH = ["any", "all", "any_strict", "all_strict", "exact"]


def register(sub: Subparsers) -> None:
    """Add ``retain``, ``recall`` and ``reflect`` to the ``mindbank`` command."""
    p = client_command(sub, "retain", _retain, help="store a memory ('-' reads it from stdin)")
    p.add_argument("content")
    p.add_argument("--tag", action="append", default=None, help="tag (repeatable)")
    p.add_argument("--context", default=None, help="where the content comes from, e.g. chat")
    p.add_argument("--timestamp", default=None, help="when it was said (ISO-8601; default now)")
    p.add_argument("--metadata", action="append", default=None, help="key=value metadata (repeatable)")
    p.add_argument("--document-id", default=None, help="document id (re-using one replaces that document)")
    p.add_argument("--async", dest="async_", action="store_true", help="queue the work on the server")
    add_wait_flags(p)

    p = client_command(sub, "recall", _recall, help="search memories")
    p.add_argument("query")
    p.add_argument("--type", action="append", default=None, choices=["world", "experience", "observation"])
    p.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    p.add_argument("--tags-match", default=None, choices=TAGS_MATCH)
    p.add_argument("--max-tokens", type=int, default=None, help="budget of returned fact text")

    p = client_command(sub, "reflect", _reflect, help="answer a question from the bank's memory")
    p.add_argument("query")
    p.add_argument("--budget", default=None, choices=["low", "mid", "high"])
    p.add_argument("--max-tokens", type=int, default=None)
    p.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    p.add_argument("--tags-match", default=None, choices=TAGS_MATCH)
    p.add_argument("--facts", action="store_true", help="also list the memories the answer rests on")


def _retain(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    content = sys.stdin.read() if args.content == "-" else args.content
    if not content.strip():
        raise UsageError("content is empty")
    result = client.retain(
        bank_id, content, tags=args.tag, context=args.context, timestamp=args.timestamp,
        metadata=key_values(args.metadata, "--metadata", typed=False) or None, document_id=args.document_id,
        async_=args.async_,
    )  # fmt: skip
    if args.async_ and args.wait and result.operation_id:
        return wait_and_report(client, bank_id, result.operation_id, out, args.timeout)
    if result.operation_id:
        message = f"queued {result.items_count} item(s) for bank {bank_id}: operation {result.operation_id}"
    else:
        message = f"retained {result.items_count} item(s) in bank {bank_id}"
    return out.done(result, message)


def _recall(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.recall(
        bank(args), args.query, types=args.type, tags=args.tag, tags_match=args.tags_match, max_tokens=args.max_tokens
    )
    return out.listing(result, ("#", "type", "text", "tags", "score"), _hit_rows(result), empty="no memories found")


def _hit_rows(result: RecallResponse) -> Iterator[list[str]]:
    for n, hit in enumerate(result.results, 1):
        score = (hit.scores or {}).get("final")
        yield [str(n), hit.type, hit.text, ", ".join(hit.tags), "-" if score is None else f"{score:.3f}"]


def _reflect(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.reflect(
        bank(args), args.query, budget=args.budget, max_tokens=args.max_tokens, tags=args.tag,
        tags_match=args.tags_match, include_facts=args.facts,
    )  # fmt: skip
    if out.as_json:
        out.json(result)
        return 0
    out.text(result.text)
    memories = (result.based_on or {}).get("memories") or []
    if memories:
        out.console.print("\nbased on:", style="bold")
        for m in memories:
            out.text(f"  [{m.get('id')}] {m.get('text')}")
    return 0
