"""Client commands for operators: ``health`` (liveness and readiness), ``metrics`` (Prometheus text) and
``llm-requests`` (the bank's traced LLM calls, or their statistics with ``--stats``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add ``health``, ``metrics`` and ``llm-requests`` to the ``mindbank`` command."""
    client_command(sub, "health", _health, help="liveness and readiness of the server (exit 1 when not ready)")
    client_command(sub, "metrics", _metrics, help="print the server's Prometheus metrics")
    p = client_command(sub, "llm-requests", _llm_requests, help="the bank's traced LLM calls, newest first")
    p.add_argument("--operation", default=None, choices=["reflect", "retain", "consolidation", "refresh"])
    p.add_argument("--status", default=None, choices=["success", "error"])
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--stats", default=None, choices=["1d", "7d", "30d"], help="calls and tokens per hour or day")


def _health(client: Client, args: argparse.Namespace, out: Output) -> int:
    from mindbank.client import MindBankHTTPError

    live = client.health_live()
    try:
        ready = client.health_ready().model_dump()
    except MindBankHTTPError as exc:  # 503: not ready; the report is the error's detail
        if exc.status_code != 503 or not isinstance(exc.detail, dict):
            raise
        ready = exc.detail
    report = {"live": live.model_dump(), "ready": ready}
    workers = ready.get("workers") or {}
    lines = [f"live: {live.status} (version {live.version}, up {live.uptime_seconds:.0f} s)",
             f"ready: {ready.get('status')} (database {ready.get('database')}, schema "
             f"{ready.get('schema_version')}/{ready.get('expected_schema_version')})",
             f"workers: {workers.get('active', 0)} active, in process: {workers.get('in_process')}"]  # fmt: skip
    out.report(report, lines)
    return 0 if ready.get("status") == "ready" else 1


def _metrics(client: Client, args: argparse.Namespace, out: Output) -> int:
    text = client.metrics()
    return out.report({"metrics": text}, [text.rstrip("\n")])


def _llm_requests(client: Client, args: argparse.Namespace, out: Output) -> int:
    if args.stats:
        stats = client.llm_request_stats(bank(args), period=args.stats, operation=args.operation)
        rows = ([b["time"], str(b["total"]), str(b["statuses"].get("error", 0)), str(b["tokens"]["total"])]
                for b in stats.buckets)  # fmt: skip
        return out.listing(stats, (stats.trunc, "calls", "errors", "tokens"), rows, empty="no traced calls")
    page = client.list_llm_requests(bank(args), operation=args.operation, status=args.status, limit=args.limit)
    rows = ([when(r.ended_at), r.operation or "-", r.scope or "-", r.model or "-", r.status,
             str(r.total_tokens or 0), str(r.duration_ms or 0)] for r in page.items)  # fmt: skip
    columns = ("when", "operation", "scope", "model", "status", "tokens", "ms")
    return out.listing(page, columns, rows, empty="no traced calls (MINDBANK_LLM_TRACE_ENABLED)",
                       footer=f"{len(page.items)} of {page.total}")  # fmt: skip
