"""The ``mindbank`` command: serve, worker, import, demo."""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace

from mindbank.config import Settings


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from mindbank.api import create_app
    from mindbank.service import MindBank

    settings = Settings.from_env()
    if args.database:
        settings = replace(settings, database_url=args.database)
    mb = MindBank.open(settings)
    app = create_app(mb, run_worker=settings.worker_enabled and not args.no_worker)
    uvicorn.run(app, host=args.host or settings.host, port=args.port or settings.port, log_level="info")
    return 0


def _worker(args: argparse.Namespace) -> int:
    import signal
    import threading

    from mindbank.service import MindBank

    settings = Settings.from_env()
    if args.database:
        settings = replace(settings, database_url=args.database)
    mb = MindBank.open(settings)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    mb.start_worker()
    with contextlib.suppress(KeyboardInterrupt):
        done.wait()
    mb.close()
    return 0


def _import(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from mindbank.importers import load_items
    from mindbank.service import MindBank

    settings = Settings.from_env()
    if args.database:
        settings = replace(settings, database_url=args.database)
    console = Console()
    try:
        items = load_items(args.path)
    except (OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2
    mb = MindBank.open(settings)
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="mindbank", description="Agent memory with mental models.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP API (and, by default, the worker)")
    serve.add_argument("--host", default=None, help="bind address (default MINDBANK_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default MINDBANK_PORT or 8888)")
    serve.add_argument("--no-worker", action="store_true", help="do not run the in-process worker")
    serve.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    serve.set_defaults(func=_serve)

    worker = sub.add_parser("worker", help="run a worker without the API")
    worker.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    worker.set_defaults(func=_worker)

    imp = sub.add_parser("import", help="import a LoCoMo JSON or JSON Lines chat file into a bank")
    imp.add_argument("path")
    imp.add_argument("--bank", required=True, help="bank id (created if missing)")
    imp.add_argument("--database", default=None, help="database path (default MINDBANK_DATABASE_URL)")
    imp.add_argument("--batch-size", type=int, default=64, help="items per retain transaction")
    imp.set_defaults(func=_import)

    demo = sub.add_parser("demo", help="run the end-to-end demo on a fresh temporary database")
    demo.add_argument("path", nargs="?", default=None, help="a LoCoMo file (default: the bundled sample)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mindbank`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
