"""Client commands over a bank's documents: ``docs list|get|chunks|history|tag|delete|reprocess|upload``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from mindbank.cli.common import (
    Subparsers,
    UsageError,
    add_wait_flags,
    bank,
    client_command,
    command_group,
    wait_and_report,
)
from mindbank.cli.names import accept_names
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client
    from mindbank.client.resource_models import Document


def register(sub: Subparsers) -> None:
    """Add the ``docs`` command group to the ``mindbank`` command."""
    docs_sub = command_group(sub, "docs", help="documents: list, get, chunks, history, tag, delete, reprocess, upload")
    p = client_command(docs_sub, "list", _list, help="list documents, most recently written first")
    p.add_argument("--q", default=None, help="text found in the id or the document (case-insensitive)")
    p.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    p.add_argument("--tags-match", default=None, choices=["any", "all", "any_strict", "all_strict", "exact"])
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--offset", type=int, default=0)
    client_command(docs_sub, "get", _get, help="show a document and its text").add_argument("document_id")
    client_command(docs_sub, "chunks", _chunks, help="a document's chunks").add_argument("document_id")
    client_command(docs_sub, "history", _history, help="a document's changes").add_argument("document_id")
    p = client_command(docs_sub, "tag", _tag, help="replace the tags of a document and its memories")
    p.add_argument("document_id")
    p.add_argument("--tag", action="append", default=[], help="the new tags (repeatable; none: untag)")
    p = client_command(docs_sub, "delete", _delete, help="delete a document and the memories drawn from it")
    p.add_argument("document_id")
    p = client_command(docs_sub, "reprocess", _reprocess, help="re-extract a document with the current engine")
    p.add_argument("document_id")
    add_wait_flags(p)
    p = client_command(docs_sub, "upload", _upload, help="retain files: text, Markdown, HTML, PDF")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--tag", action="append", default=None, help="tag for every file (repeatable)")
    p.add_argument("--context", default=None, help="context for every file")
    add_wait_flags(p)
    accept_names(docs_sub, {"document_id": "document"})


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_documents(bank(args), q=args.q, tags=args.tag, tags_match=args.tags_match, limit=args.limit,
                                 offset=args.offset)  # fmt: skip
    rows = ([d.id, str(d.memory_unit_count), str(d.text_length), ", ".join(d.tags) or "-", when(d.updated_at)]
            for d in page.items)  # fmt: skip
    columns = ("id", "memories", "chars", "tags", "updated")
    return out.listing(page, columns, rows, empty="no documents", footer=f"{len(page.items)} of {page.total}")


def _get(client: Client, args: argparse.Namespace, out: Output) -> int:
    doc = client.get_document(bank(args), args.document_id)
    return out.report(doc, _document_lines(doc))


def _document_lines(doc: Document) -> Iterator[str]:
    yield f"document {doc.id}: {doc.memory_unit_count} memories {json.dumps(doc.nodes_by_fact_type or {})}"
    yield f"  tags: {', '.join(doc.tags) or '-'}  updated: {when(doc.updated_at)}"
    yield ""
    yield doc.original_text or ""


def _chunks(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_document_chunks(bank(args), args.document_id)
    rows = ([str(c.chunk_index), c.chunk_id, c.chunk_text[:80]] for c in page.items)
    return out.listing(page, ("#", "chunk id", "text"), rows, empty="no chunks")


def _history(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.get_document_history(bank(args), args.document_id)
    rows = ([when(e.created_at), e.kind, f"+{e.facts_added} -{e.facts_removed}", e.fact_id or e.operation_id or "-"]
            for e in page.items)  # fmt: skip
    return out.listing(page, ("when", "change", "facts", "fact / operation"), rows, empty="no changes")


def _tag(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.update_document(bank(args), args.document_id, tags=args.tag)
    return out.done(result, f"document {args.document_id} tagged: {', '.join(args.tag) or '(no tags)'}", markup=False)


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_document(bank(args), args.document_id)
    return out.done(result, result.message, markup=False)


def _reprocess(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.reprocess_document(bank(args), args.document_id)
    if args.wait:
        return wait_and_report(client, bank(args), result.operation_id, out, args.timeout)
    return out.done(result, f"reprocess queued: operation {result.operation_id}", markup=False)


def _upload(client: Client, args: argparse.Namespace, out: Output) -> int:
    missing = [p for p in args.paths if not Path(p).is_file()]
    if missing:
        raise UsageError(f"no such file: {missing[0]}")
    metadata = [{"tags": args.tag} if args.tag else {} for _ in args.paths]
    result = client.retain_files(bank(args), args.paths, files_metadata=metadata, context=args.context)
    if args.wait:
        statuses = [client.wait(bank(args), op, timeout=args.timeout).status for op in result.operation_ids]
        failed = [path for path, status in zip(args.paths, statuses, strict=True) if status != "completed"]
        out.done(result, f"{len(args.paths) - len(failed)} of {len(args.paths)} files retained", markup=False)
        return 1 if failed else 0
    return out.done(result, f"{len(result.operation_ids)} files queued: {' '.join(result.operation_ids)}",
                    markup=False)  # fmt: skip
