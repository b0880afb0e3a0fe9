"""The ``mindbank`` command: its entry point (:func:`main`) and parser (:func:`build_parser`).

Local commands open the database themselves: ``serve``, ``worker``, ``mcp`` (stdio), ``import``, ``demo``
(:mod:`.server`). Client commands talk to a running server through :class:`mindbank.client.Client` (``--url`` /
``MINDBANK_URL``, ``--api-key`` / ``MINDBANK_API_KEY``): ``retain``, ``recall``, ``reflect`` (:mod:`.memories`),
``mm ...`` (:mod:`.mental_models`), ``kb ...`` (:mod:`.knowledge_base`), ``config`` and ``profile``
(:mod:`.bank_config`), ``ops ...`` (:mod:`.operations`), ``docs ...`` (:mod:`.documents`), ``directives ...``
(:mod:`.directives`), ``webhooks ...`` (:mod:`.webhooks`), ``health``, ``metrics``, ``llm-requests``
(:mod:`.monitoring`), ``keys ...`` (:mod:`.api_keys`), ``stats`` (:mod:`.stats`), ``bank ...`` (:mod:`.transfer`).
They print for people by default (rich, :mod:`.output`) and JSON with ``--json``; an error answer exits 1 with the
server's message on stderr, a usage error exits 2 (:mod:`.common`).

A command group is one module with ``register(subparsers)``, listed once in :data:`COMMAND_GROUPS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from mindbank.cli import (
    api_keys,
    bank_config,
    directives,
    documents,
    knowledge_base,
    memories,
    mental_models,
    monitoring,
    observations,
    operations,
    server,
    stats,
    transfer,
    webhooks,
)
from mindbank.cli.common import Subparsers, UsageError

__all__ = ["COMMAND_GROUPS", "UsageError", "build_parser", "main"]

# Each group adds its commands to ``mindbank``; the order is the order of ``mindbank --help``. A new feature adds
# its module here (one line).
COMMAND_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    server.register,
    memories.register,
    mental_models.register,
    knowledge_base.register,
    bank_config.register,
    operations.register,
    documents.register,
    observations.register,
    directives.register,
    webhooks.register,
    monitoring.register,
    stats.register,
    api_keys.register,
    transfer.register,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="mindbank", description="Agent memory with mental models.")
    sub = parser.add_subparsers(dest="command", required=True)
    for register in COMMAND_GROUPS:
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mindbank`` console script: parse ``argv`` (default ``sys.argv[1:]``), run the command
    and return its exit status (argparse exits 2 itself on a usage error it finds)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader went away (e.g. `mindbank mm list --json | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
