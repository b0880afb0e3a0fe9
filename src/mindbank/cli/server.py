"""Local commands that open the database themselves: ``serve``, ``worker``, ``mcp`` (stdio), ``import``, ``demo``."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import replace

from mindbank.cli.common import Subparsers
from mindbank.config import Settings

_DATABASE_HELP = "database path (default MINDBANK_DATABASE_URL)"


def register(sub: Subparsers) -> None:
    """Add ``serve``, ``worker``, ``mcp``, ``import`` and ``demo`` to the ``mindbank`` command."""
    serve = sub.add_parser("serve", help="run the HTTP API and MCP endpoint (and, by default, the worker)")
    serve.add_argument("--host", default=None, help="bind address (default MINDBANK_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default MINDBANK_PORT or 8888)")
    serve.add_argument("--no-worker", action="store_true", help="do not run the in-process worker")
    serve.add_argument("--database", default=None, help=_DATABASE_HELP)
    serve.set_defaults(func=_serve)

    worker = sub.add_parser("worker", help="run a worker without the API")
    worker.add_argument("--database", default=None, help=_DATABASE_HELP)
    worker.add_argument(
        "--metrics-port", type=int, default=None,
        help="serve this worker's Prometheus metrics (refreshes, LLM calls, queue) on MINDBANK_HOST:PORT/metrics",
    )  # fmt: skip
    worker.set_defaults(func=_worker)

    mcp = sub.add_parser("mcp", help="serve MCP over stdio (for MCP clients that launch a command)")
    mcp.add_argument("--bank", default=None, help="serve one bank (tools then take no bank_id)")
    mcp.add_argument("--database", default=None, help=_DATABASE_HELP)
    mcp.set_defaults(func=_mcp)

    imp = sub.add_parser("import", help="import a LoCoMo JSON or JSON Lines chat file into a bank")
    imp.add_argument("path")
    imp.add_argument(
        "-b", "--bank", default=os.environ.get("MINDBANK_BANK") or None,
        required=not os.environ.get("MINDBANK_BANK"), help="bank id, created if missing (default MINDBANK_BANK)",
    )  # fmt: skip
    imp.add_argument("--database", default=None, help=_DATABASE_HELP)
    imp.add_argument("--batch-size", type=int, default=64, help="items per retain transaction")
    imp.set_defaults(func=_import)

    demo = sub.add_parser("demo", help="run the end-to-end demo on a fresh temporary database")
    demo.add_argument("path", nargs="?", default=None, help="a LoCoMo file (default: the bundled sample)")
    demo.set_defaults(func=_demo)


def _local_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings, with ``--database`` over ``MINDBANK_DATABASE_URL``."""
    settings = Settings.from_env()
    if getattr(args, "database", None):
        settings = replace(settings, database_url=args.database)
    return settings


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from mindbank.server import UVICORN_OPTIONS, create_app, freeze_startup_objects, serving_threads
    from mindbank.service.facade import MindBank

    serving_threads()  # before the store and the embedder start their threads
    settings = _local_settings(args)
    if args.host:  # the MCP endpoint's DNS-rebinding protection depends on the bind address
        settings = replace(settings, host=args.host)
    mb = MindBank.open(settings)
    app = create_app(mb, run_worker=settings.worker_enabled and not args.no_worker)
    freeze_startup_objects()
    uvicorn.run(app, host=settings.host, port=args.port or settings.port, log_level="info", **UVICORN_OPTIONS)
    return 0


def _worker(args: argparse.Namespace) -> int:
    import signal
    import threading

    from mindbank.server import serving_threads
    from mindbank.service.facade import MindBank

    serving_threads()  # before the store and the embedder start their threads
    settings = _local_settings(args)
    mb = MindBank.open(settings)
    if args.metrics_port:
        from prometheus_client import start_http_server

        start_http_server(args.metrics_port, addr=settings.host, registry=mb.metrics.registry)
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
    from mindbank.service.facade import MindBank

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
    from mindbank.service.facade import MindBank

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
