"""The ``mindbank`` command.

Local commands open the database themselves: ``serve``, ``worker``, ``mcp`` (stdio), ``import``, ``demo``.
Client commands talk to a running server through :class:`mindbank.client.Client` (``--url`` / ``MINDBANK_URL``,
``--api-key`` / ``MINDBANK_API_KEY``): ``retain``, ``recall``, ``reflect``, ``mm ...``, ``config``, ``ops ...``.
They print for people by default (rich) and JSON with ``--json``; an error answer exits 1 with the server's message
on stderr, a usage error exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from mindbank.config import OPTIONS, Settings

if TYPE_CHECKING:
    from rich.console import Console

    from mindbank.client import Client


class UsageError(Exception):
    """Bad command-line input found after parsing (exit status 2)."""


# ====================================================================== local commands
def _local_settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    if getattr(args, "database", None):
        settings = replace(settings, database_url=args.database)
    return settings


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from mindbank.server import create_app
    from mindbank.service import MindBank

    settings = _local_settings(args)
    if args.host:  # the MCP endpoint's DNS-rebinding protection depends on the bind address
        settings = replace(settings, host=args.host)
    mb = MindBank.open(settings)
    app = create_app(mb, run_worker=settings.worker_enabled and not args.no_worker)
    uvicorn.run(app, host=settings.host, port=args.port or settings.port, log_level="info")
    return 0


def _worker(args: argparse.Namespace) -> int:
    import signal
    import threading

    from mindbank.service import MindBank

    mb = MindBank.open(_local_settings(args))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    mb.start_worker()
    with contextlib.suppress(KeyboardInterrupt):
        done.wait()
    mb.close()
    return 0


def _mcp(args: argparse.Namespace) -> int:
    import logging

    from mindbank.mcp import parse_enabled_tools, run_stdio
    from mindbank.service import MindBank

    # stdout carries the protocol: anything else written there would corrupt it, so logs go to stderr
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    settings = _local_settings(args)
    enabled = parse_enabled_tools(settings.mcp_enabled_tools)
    run_stdio(MindBank.open(settings), bank=args.bank, enabled_tools=enabled)
    return 0


def _import(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from mindbank.importers import load_items
    from mindbank.service import MindBank

    console = Console()
    try:
        items = load_items(args.path)
    except (OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2
    mb = MindBank.open(_local_settings(args))
    try:
        with Progress(console=console) as progress:
            task = progress.add_task(f"importing into bank {args.bank}", total=len(items))
            for start in range(0, len(items), args.batch_size):
                mb.retain(args.bank, items[start : start + args.batch_size])
                progress.advance(task, min(args.batch_size, len(items) - start))
    finally:
        mb.close()
    console.print(f"imported {len(items)} items into bank [bold]{args.bank}[/]")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from mindbank.demo import run_demo

    return run_demo(args.path)


# ====================================================================== client plumbing
class Output:
    """Where a client command writes: rich for people, plain JSON for scripts."""

    def __init__(self, as_json: bool) -> None:
        from rich.console import Console

        self.as_json = as_json
        # Piped output gets a wide fixed width, so ids and types in tables are never folded across lines (a grep or
        # a cut then sees whole values); a terminal (or an explicit COLUMNS) keeps rich's own width.
        piped = not sys.stdout.isatty() and "COLUMNS" not in os.environ
        self.console: Console = Console(soft_wrap=True, highlight=False, width=200 if piped else None)

    def json(self, data: Any) -> None:
        print(json.dumps(_plain(data), indent=2, ensure_ascii=False, default=str))

    def done(self, data: Any, message: str, *, markup: bool = True) -> int:
        """Finish a command: ``data`` as JSON for scripts, else a one-line ``message`` for people (``markup=False``
        for server text that may contain brackets); exit status 0."""
        if self.as_json:
            self.json(data)
        else:
            self.console.print(message, markup=markup)
        return 0

    def text(self, text: str) -> None:
        """Print ``text`` as is (no rich markup interpretation): content, diffs."""
        self.console.print(text, markup=False, highlight=False)


def _plain(data: Any) -> Any:
    """pydantic models (and lists of them) as JSON-able data, with the wire's field names."""
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    if isinstance(data, list):
        return [_plain(d) for d in data]
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    return data


def _client(args: argparse.Namespace) -> Client:
    from mindbank.client import Client

    return Client(args.url, api_key=args.api_key)


def _bank(args: argparse.Namespace) -> str:
    bank = args.bank or os.environ.get("MINDBANK_BANK")
    if not bank:
        raise UsageError("a bank is required: pass -b/--bank or set MINDBANK_BANK")
    return str(bank)


def _run_client(handler: Callable[[Client, argparse.Namespace, Output], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a client command: open the client, map errors to exit codes and a one-line message on stderr."""

    def run(args: argparse.Namespace) -> int:
        from rich.console import Console

        from mindbank.client import MindBankClientError, MindBankHTTPError

        err = Console(stderr=True, highlight=False, soft_wrap=True)
        try:
            with _client(args) as client:
                return handler(client, args, Output(args.json))
        except MindBankHTTPError as exc:
            err.print(f"error: {exc.message} (HTTP {exc.status_code})", markup=False)
            return 1
        except MindBankClientError as exc:
            err.print(f"error: {exc}", markup=False)
            return 1
        except TimeoutError as exc:
            err.print(f"error: {exc}", markup=False)
            return 1
        except UsageError as exc:
            err.print(f"mindbank: error: {exc}", markup=False)
            return 2

    return run


def _json_arg(raw: str | None, what: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return value


def _key_values(pairs: Sequence[str] | None, what: str, *, typed: bool = True) -> dict[str, Any]:
    """``key=value`` pairs. With ``typed`` a value that parses as JSON (``true``, ``5``, ``0.4``, ``null``) is taken
    as such (settings); without, every value stays a string (metadata is str -> str)."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{what} expects key=value, got {pair!r}")
        try:
            out[key] = json.loads(raw) if typed else raw
        except ValueError:
            out[key] = raw
    return out


def _trigger_from_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--trigger JSON`` plus the shorthand flags; a flag contradicting the same JSON field is a usage error."""
    trigger = _json_arg(args.trigger, "--trigger")
    shorthands = {"tags_match": args.tags_match, "mode": args.mode, "refresh_cron": args.refresh_cron}
    if not any(v is not None for v in shorthands.values()):
        return trigger
    merged = dict(trigger or {})
    for key, value in shorthands.items():
        if value is None:
            continue
        if merged.get(key) is not None and merged[key] != value:
            raise UsageError(f"{key} is given both as a flag ({value!r}) and in --trigger ({merged[key]!r})")
        merged[key] = value
    return merged


def _when(value: Any) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _wait_and_report(client: Client, bank: str, operation_id: str, out: Output, timeout: float) -> int:
    op = client.wait(bank, operation_id, timeout=timeout)
    if out.as_json:
        out.json(op)
    else:
        outcome = (op.details or {}).get("outcome") or (op.result_metadata or {}).get("outcome")
        line = f"operation {op.operation_id}: {op.status}" + (f" ({outcome})" if outcome else "")
        out.console.print(line + (f" - {op.error_message}" if op.error_message else ""), markup=False)
    return 0 if op.status == "completed" else 1


# ====================================================================== memories
def _cmd_retain(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank = _bank(args)
    content = sys.stdin.read() if args.content == "-" else args.content
    if not content.strip():
        raise UsageError("content is empty")
    result = client.retain(
        bank, content, tags=args.tag, context=args.context, timestamp=args.timestamp,
        metadata=_key_values(args.metadata, "--metadata", typed=False) or None, document_id=args.document_id,
        async_=args.async_,
    )  # fmt: skip
    if args.async_ and args.wait and result.operation_id:
        return _wait_and_report(client, bank, result.operation_id, out, args.timeout)
    if out.as_json:
        out.json(result)
    elif result.operation_id:
        out.console.print(f"queued {result.items_count} item(s) for bank {bank}: operation {result.operation_id}")
    else:
        out.console.print(f"retained {result.items_count} item(s) in bank {bank}")
    return 0


def _cmd_recall(client: Client, args: argparse.Namespace, out: Output) -> int:
    from rich.table import Table

    result = client.recall(
        _bank(args), args.query, types=args.type, tags=args.tag, tags_match=args.tags_match, max_tokens=args.max_tokens
    )
    if out.as_json:
        out.json(result)
        return 0
    if not result.results:
        out.console.print("no memories found")
        return 0
    table = Table("#", "type", "text", "tags", "score", show_lines=False)
    for n, hit in enumerate(result.results, 1):
        score = (hit.scores or {}).get("final")
        table.add_row(str(n), hit.type, hit.text, ", ".join(hit.tags), "-" if score is None else f"{score:.3f}")
    out.console.print(table)
    return 0


def _cmd_reflect(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.reflect(
        _bank(args), args.query, budget=args.budget, max_tokens=args.max_tokens, tags=args.tag,
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


# ====================================================================== mental models
def _mm_list(client: Client, args: argparse.Namespace, out: Output) -> int:
    from rich.table import Table

    page = client.list_mental_models(
        _bank(args), tags=args.tag, tags_match=args.tags_match, detail=args.detail, limit=args.limit,
        offset=args.offset,
    )  # fmt: skip
    if out.as_json:
        out.json(page)
        return 0
    if not page.items:
        out.console.print("no mental models")
        return 0
    table = Table("id", "name", "tags", "stale", "last refreshed")
    for m in page.items:
        stale = "?" if m.is_stale is None else ("yes" if m.is_stale else "no")
        table.add_row(m.id, m.name, ", ".join(m.tags), stale, _when(m.last_refreshed_at))
    out.console.print(table)
    out.console.print(f"{len(page.items)} of {page.total}")
    return 0


def _mm_get(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.get_mental_model(_bank(args), args.id, detail=args.detail)
    if out.as_json:
        out.json(model)
        return 0
    stale = "unknown" if model.is_stale is None else ("stale" if model.is_stale else "fresh")
    out.console.print(f"{model.name}", style="bold", markup=False)
    out.text(f"id: {model.id}   tags: {', '.join(model.tags) or '-'}   {stale}")
    out.text(f"last refreshed: {_when(model.last_refreshed_at)}")
    if model.source_query is not None:
        out.text(f"question: {model.source_query}")
    if model.content is not None:
        out.text("")
        out.text(model.content or "(empty: not refreshed yet, or cleared)")
    return 0


def _mm_create(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank = _bank(args)
    created = client.create_mental_model(
        bank, args.name, args.query, id=args.id, tags=args.tag, max_tokens=args.max_tokens,
        trigger=_trigger_from_args(args),
    )  # fmt: skip
    if args.wait:
        if not out.as_json:
            out.console.print(f"created mental model {created.mental_model_id}")
        return _wait_and_report(client, bank, created.operation_id, out, args.timeout)
    if out.as_json:
        out.json(created)
        return 0
    out.console.print(
        f"created mental model {created.mental_model_id}; first refresh: operation {created.operation_id}"
    )
    for warning in created.warnings:
        out.console.print(f"warning: {warning}", style="yellow", markup=False)
    return 0


def _mm_update(client: Client, args: argparse.Namespace, out: Output) -> int:
    tags: list[str] | None = [] if args.no_tags else args.tag
    model = client.update_mental_model(
        _bank(args), args.id, name=args.name, source_query=args.query, max_tokens=args.max_tokens, tags=tags,
        trigger=_trigger_from_args(args),
    )  # fmt: skip
    if out.as_json:
        out.json(model)
        return 0
    out.console.print(f"updated mental model {model.id}")
    for warning in model.warnings:
        out.console.print(f"warning: {warning}", style="yellow", markup=False)
    return 0


def _mm_refresh(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank = _bank(args)
    queued = client.refresh_mental_model(bank, args.id, mode="full" if args.full else None)
    if args.wait:
        return _wait_and_report(client, bank, queued.operation_id, out, args.timeout)
    return out.done(queued, f"refresh of {args.id} queued: operation {queued.operation_id}")


def _mm_dry_run(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.dry_run_refresh_mental_model(_bank(args), args.id)
    if out.as_json:
        out.json(result)
        return 0
    out.text(f"outcome: {result.outcome}   would persist: {'yes' if result.would_persist else 'no'}")
    mode = result.effective_mode or "-"
    if result.mode_fallback_reason:
        mode += f" (fallback: {result.mode_fallback_reason})"
    out.text(f"mode: {mode}")
    if result.failure_reason:
        out.text(f"failure: {result.failure_reason}")
    for warning in result.warnings:
        out.text(f"warning: {warning}")
    out.text("")
    out.text(result.diff or "(no change)")
    return 0


def _mm_history(client: Client, args: argparse.Namespace, out: Output) -> int:
    from rich.table import Table

    entries = client.get_mental_model_history(_bank(args), args.id)
    if out.as_json:
        out.json(entries)
        return 0
    if not entries:
        out.console.print("no history")
        return 0
    table = Table("history id", "changed at", "kind", "detail")
    for e in entries:
        if e.is_failure:
            table.add_row(str(e.id), _when(e.changed_at), "refresh failed", f"{e.outcome}: {e.failure_reason}")
        else:
            content = e.previous_content or ""
            first = next((line for line in content.splitlines() if line.strip()), "(empty)")
            table.add_row(str(e.id), _when(e.changed_at), "version", f"{len(content)} chars, {first[:60]}")
    out.console.print(table)
    return 0


def _mm_diff(client: Client, args: argparse.Namespace, out: Output) -> int:
    """Unified diff from a history version (default: the newest) to another version or the current content."""
    bank = _bank(args)
    versions = [e for e in client.get_mental_model_history(bank, args.id) if not e.is_failure]
    by_id = {e.id: e for e in versions}

    def version(history_id: int) -> tuple[str, str]:
        entry = by_id.get(history_id)
        if entry is None:
            raise UsageError(f"history entry {history_id} is not a version of mental model {args.id}")
        return entry.previous_content or "", f"history/{history_id} ({_when(entry.changed_at)})"

    if args.from_id is not None:
        old, old_label = version(args.from_id)
    elif versions:
        old, old_label = version(versions[0].id)  # type: ignore[arg-type]
    else:
        raise UsageError(f"mental model {args.id} has no history yet")
    if args.to_id is not None:
        new, new_label = version(args.to_id)
    else:
        new, new_label = client.get_mental_model(bank, args.id).content or "", "current"
    diff = "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_label, new_label)
    )
    if out.as_json:
        out.json({"from": old_label, "to": new_label, "diff": diff})
    else:
        out.text(diff or f"no difference between {old_label} and {new_label}")
    return 0


def _mm_revert(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.revert_mental_model(_bank(args), args.id, args.history_id)
    return out.done(model, f"mental model {model.id} reverted to history entry {args.history_id}")


def _mm_clear(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.clear_mental_model(_bank(args), args.id)
    return out.done(model, f"mental model {model.id} cleared (previous content kept in history)")


def _mm_delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_mental_model(_bank(args), args.id)
    return out.done(result, f"mental model {args.id} deleted")


# ====================================================================== config and operations
def _cmd_config(client: Client, args: argparse.Namespace, out: Output) -> int:
    if args.local:
        return _show_local_settings(out)
    bank = _bank(args)
    updates = _key_values(args.set, "--set") | dict.fromkeys(args.unset or ())
    result = client.update_bank_config(bank, updates) if updates else client.get_bank_config(bank)
    if out.as_json:
        out.json(result)
        return 0
    from rich.table import Table

    table = Table("setting", "value", "source")
    for key, value in result.config.items():
        table.add_row(key, json.dumps(value), "bank" if key in result.overrides else "server")
    out.console.print(table)
    return 0


def _show_local_settings(out: Output) -> int:
    """The settings this machine's environment resolves to (what ``mindbank serve`` here would use)."""
    settings = Settings.from_env()
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    values["api_key"] = "(set)" if settings.api_key else None  # never print the key itself
    if out.as_json:
        out.json(values)
        return 0
    from rich.table import Table

    table = Table("variable", "value")
    for option in OPTIONS:
        table.add_row(option.env, json.dumps(values[option.name]))
    out.console.print(table)
    return 0


def _ops_list(client: Client, args: argparse.Namespace, out: Output) -> int:
    from rich.table import Table

    page = client.list_operations(
        _bank(args), status=args.status, operation_type=args.type, limit=args.limit, offset=args.offset
    )
    if out.as_json:
        out.json(page)
        return 0
    if not page.operations:
        out.console.print("no operations")
        return 0
    table = Table("id", "type", "status", "mental model", "created")
    for op in page.operations:
        table.add_row(op.id, op.operation_type or "-", op.status, op.mental_model_id or "-", _when(op.created_at))
    out.console.print(table)
    out.console.print(f"{len(page.operations)} of {page.total}")
    return 0


def _ops_get(client: Client, args: argparse.Namespace, out: Output) -> int:
    op = client.get_operation(_bank(args), args.operation_id)
    if out.as_json:
        out.json(op)
        return 0
    out.text(f"operation {op.operation_id}: {op.operation_type} {op.status}")
    for label, value in (
        ("mental model", op.mental_model_id),
        ("created", _when(op.created_at)),
        ("completed", _when(op.completed_at) if op.completed_at else None),
        ("outcome", (op.details or {}).get("outcome")),
        ("error", op.error_message),
    ):
        if value:
            out.text(f"  {label}: {value}")
    return 0


def _ops_cancel(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.cancel_operation(_bank(args), args.operation_id)
    return out.done(result, result.message, markup=False)


def _ops_wait(client: Client, args: argparse.Namespace, out: Output) -> int:
    return _wait_and_report(client, _bank(args), args.operation_id, out, args.timeout)


# ====================================================================== parser
def _client_parent() -> argparse.ArgumentParser:
    """Options every client command takes."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--url", default=None, help="server URL (default MINDBANK_URL or http://127.0.0.1:8888)")
    parent.add_argument("--api-key", default=None, help="API key (default MINDBANK_API_KEY)")
    parent.add_argument("--json", action="store_true", help="print JSON instead of tables and text")
    parent.add_argument("-b", "--bank", default=None, help="bank id (default MINDBANK_BANK)")
    return parent


def _add_trigger_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trigger", default=None, help="trigger settings as a JSON object (any HTTP trigger field)")
    p.add_argument(
        "--tags-match",
        default=None,
        choices=["any", "all", "any_strict", "all_strict", "exact"],
        help="trigger.tags_match: how the model's tags filter its memories",
    )
    p.add_argument("--mode", default=None, choices=["full", "delta"], help="trigger.mode: refresh mode")
    p.add_argument("--refresh-cron", default=None, help="trigger.refresh_cron: 5-field UTC cron schedule")


def _add_wait_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wait", action="store_true", help="wait for the operation to finish (exit 1 if it fails)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (default 120)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="mindbank", description="Agent memory with mental models.")
    sub = parser.add_subparsers(dest="command", required=True)
    client = _client_parent()

    serve = sub.add_parser("serve", help="run the HTTP API and MCP endpoint (and, by default, the worker)")
    serve.add_argument("--host", default=None, help="bind address (default MINDBANK_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default MINDBANK_PORT or 8888)")
    serve.add_argument("--no-worker", action="store_true", help="do not run the in-process worker")
    serve.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    serve.set_defaults(func=_serve)

    worker = sub.add_parser("worker", help="run a worker without the API")
    worker.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    worker.set_defaults(func=_worker)

    mcp = sub.add_parser("mcp", help="serve MCP over stdio (for MCP clients that launch a command)")
    mcp.add_argument("--bank", default=None, help="serve one bank (tools then take no bank_id)")
    mcp.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    mcp.set_defaults(func=_mcp)

    imp = sub.add_parser("import", help="import a LoCoMo JSON or JSON Lines chat file into a bank")
    imp.add_argument("path")
    imp.add_argument(
        "-b", "--bank", default=os.environ.get("MINDBANK_BANK") or None,
        required=not os.environ.get("MINDBANK_BANK"), help="bank id, created if missing (default MINDBANK_BANK)",
    )  # fmt: skip
    imp.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    imp.add_argument("--batch-size", type=int, default=64, help="items per retain transaction")
    imp.set_defaults(func=_import)

    demo = sub.add_parser("demo", help="run the end-to-end demo on a fresh temporary database")
    demo.add_argument("path", nargs="?", default=None, help="a LoCoMo file (default: the bundled sample)")
    demo.set_defaults(func=_demo)

    retain = sub.add_parser("retain", parents=[client], help="store a memory ('-' reads it from stdin)")
    retain.add_argument("content")
    retain.add_argument("--tag", action="append", default=None, help="tag (repeatable)")
    retain.add_argument("--context", default=None, help="where the content comes from, e.g. chat")
    retain.add_argument("--timestamp", default=None, help="when it was said (ISO-8601; default now)")
    retain.add_argument("--metadata", action="append", default=None, help="key=value metadata (repeatable)")
    retain.add_argument("--document-id", default=None, help="document id (re-using one replaces that document)")
    retain.add_argument("--async", dest="async_", action="store_true", help="queue the work on the server")
    _add_wait_flags(retain)
    retain.set_defaults(func=_run_client(_cmd_retain))

    recall = sub.add_parser("recall", parents=[client], help="search memories")
    recall.add_argument("query")
    recall.add_argument("--type", action="append", default=None, choices=["world", "experience", "observation"])
    recall.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    recall.add_argument("--tags-match", default=None, choices=["any", "all", "any_strict", "all_strict", "exact"])
    recall.add_argument("--max-tokens", type=int, default=None, help="budget of returned fact text")
    recall.set_defaults(func=_run_client(_cmd_recall))

    reflect = sub.add_parser("reflect", parents=[client], help="answer a question from the bank's memory")
    reflect.add_argument("query")
    reflect.add_argument("--budget", default=None, choices=["low", "mid", "high"])
    reflect.add_argument("--max-tokens", type=int, default=None)
    reflect.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    reflect.add_argument("--tags-match", default=None, choices=["any", "all", "any_strict", "all_strict", "exact"])
    reflect.add_argument("--facts", action="store_true", help="also list the memories the answer rests on")
    reflect.set_defaults(func=_run_client(_cmd_reflect))

    _add_mm(sub, client)

    config = sub.add_parser("config", parents=[client], help="show or change a bank's settings (or --local)")
    config.add_argument("--set", action="append", default=None, metavar="KEY=VALUE", help="set an override")
    config.add_argument("--unset", action="append", default=None, metavar="KEY", help="remove an override")
    config.add_argument("--local", action="store_true", help="show this machine's MINDBANK_* settings instead")
    config.set_defaults(func=_run_client(_cmd_config))

    ops = sub.add_parser("ops", help="background operations: list, get, cancel, wait")
    ops_sub = ops.add_subparsers(dest="ops_command", required=True)
    p = ops_sub.add_parser("list", parents=[client], help="list operations, newest first")
    p.add_argument("--status", default=None, choices=["pending", "processing", "completed", "failed", "cancelled"])
    p.add_argument("--type", default=None, help="operation type, e.g. refresh_mental_model")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(func=_run_client(_ops_list))
    for name, handler, help_text in (
        ("get", _ops_get, "show one operation"),
        ("cancel", _ops_cancel, "cancel a pending operation"),
        ("wait", _ops_wait, "wait for an operation to finish (exit 1 unless it completed)"),
    ):
        p = ops_sub.add_parser(name, parents=[client], help=help_text)
        p.add_argument("operation_id")
        if name == "wait":
            p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (default 120)")
        p.set_defaults(func=_run_client(handler))
    return parser


def _add_mm(sub: Any, client: argparse.ArgumentParser) -> None:
    mm = sub.add_parser("mm", help="mental models: list, get, create, update, refresh, dry-run, history, diff, ...")
    mm_sub = mm.add_subparsers(dest="mm_command", required=True)

    p = mm_sub.add_parser("list", parents=[client], help="list mental models")
    p.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    p.add_argument("--tags-match", default=None, choices=["any", "all", "exact"])
    p.add_argument("--detail", default="metadata", choices=["metadata", "content", "full"])
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(func=_run_client(_mm_list))

    p = mm_sub.add_parser("get", parents=[client], help="show a mental model and its content")
    p.add_argument("id")
    p.add_argument("--detail", default="full", choices=["metadata", "content", "full"])
    p.set_defaults(func=_run_client(_mm_get))

    p = mm_sub.add_parser("create", parents=[client], help="create a mental model (its first refresh is queued)")
    p.add_argument("--name", required=True)
    p.add_argument("--query", required=True, help="the standing question (source_query)")
    p.add_argument("--id", default=None, help="custom id: lowercase letters, digits, hyphens")
    p.add_argument("--tag", action="append", default=None, help="tag (repeatable)")
    p.add_argument("--max-tokens", type=int, default=None, help="document size target, 256-8192 (default 2048)")
    _add_trigger_flags(p)
    _add_wait_flags(p)
    p.set_defaults(func=_run_client(_mm_create))

    p = mm_sub.add_parser("update", parents=[client], help="change a model (trigger fields are merged)")
    p.add_argument("id")
    p.add_argument("--name", default=None)
    p.add_argument("--query", default=None, help="new source_query")
    p.add_argument("--tag", action="append", default=None, help="replace the tags (repeatable)")
    p.add_argument("--no-tags", action="store_true", help="remove every tag")
    p.add_argument("--max-tokens", type=int, default=None)
    _add_trigger_flags(p)
    p.set_defaults(func=_run_client(_mm_update))

    p = mm_sub.add_parser("refresh", parents=[client], help="queue a refresh")
    p.add_argument("id")
    p.add_argument("--full", action="store_true", help="rebuild the whole document for this run")
    _add_wait_flags(p)
    p.set_defaults(func=_run_client(_mm_refresh))

    p = mm_sub.add_parser("dry-run", parents=[client], help="preview a refresh (outcome and diff); writes nothing")
    p.add_argument("id")
    p.set_defaults(func=_run_client(_mm_dry_run))

    p = mm_sub.add_parser("history", parents=[client], help="previous versions and failed refreshes")
    p.add_argument("id")
    p.set_defaults(func=_run_client(_mm_history))

    p = mm_sub.add_parser(
        "diff", parents=[client], help="unified diff between two history versions, or a version and the current content"
    )
    p.add_argument("id")
    p.add_argument("--from", dest="from_id", type=int, default=None, help="history id (default: the newest version)")
    p.add_argument("--to", dest="to_id", type=int, default=None, help="history id (default: the current content)")
    p.set_defaults(func=_run_client(_mm_diff))

    p = mm_sub.add_parser("revert", parents=[client], help="restore a history version as the current content")
    p.add_argument("id")
    p.add_argument("history_id", type=int)
    p.set_defaults(func=_run_client(_mm_revert))

    p = mm_sub.add_parser("clear", parents=[client], help="empty the content (kept in history)")
    p.add_argument("id")
    p.set_defaults(func=_run_client(_mm_clear))

    p = mm_sub.add_parser("delete", parents=[client], help="delete a model and its history")
    p.add_argument("id")
    p.set_defaults(func=_run_client(_mm_delete))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mindbank`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader went away (e.g. `mindbank mm list --json | head`): stop quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
