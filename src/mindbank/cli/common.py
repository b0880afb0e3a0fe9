"""What every client command shares: its options, the client it runs with, exit codes, and argument readers.

A command group adds a client command with :func:`client_command`: the handler gets an open
:class:`~mindbank.client.Client`, the parsed arguments and an :class:`~mindbank.cli.output.Output`, and returns the
exit status. :func:`client_command` gives it ``--url``, ``--api-key``, ``--json`` and ``-b/--bank`` and maps errors
to exit codes: an error answer, an unreachable server or a wait that times out exit 1 with a one-line message on
stderr; a :class:`UsageError` exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from mindbank.cli.names import AmbiguousName, UnknownName, resolve_names
from mindbank.cli.output import Output

if TYPE_CHECKING:
    from mindbank.client import Client

Handler: TypeAlias = Callable[["Client", argparse.Namespace, Output], int]
# ``add_subparsers()``'s return type is private to argparse; this alias names it for the ``register`` functions
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class UsageError(Exception):
    """Bad command-line input found after parsing (exit status 2)."""


def client_options() -> argparse.ArgumentParser:
    """The parent parser of every client command: ``--url``, ``--api-key``, ``--json``, ``-b/--bank``."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--url", default=None, help="server URL (default MINDBANK_URL or http://127.0.0.1:8888)")
    parent.add_argument("--api-key", default=None, help="API key (default MINDBANK_API_KEY)")
    parent.add_argument("--json", action="store_true", help="print JSON instead of tables and text")
    parent.add_argument("-b", "--bank", default=None, help="bank id (default MINDBANK_BANK)")
    return parent


def command_group(sub: Subparsers, name: str, *, help: str) -> Subparsers:
    """Add the command group ``name`` (``mindbank <name> ...``) to ``sub``; returns the group's subcommand parsers,
    whose chosen command lands in ``<name>_command``."""
    return sub.add_parser(name, help=help).add_subparsers(dest=f"{name}_command", required=True)


def client_command(
    sub: Subparsers, name: str, handler: Handler, *, help: str | None = None, names: dict[str, str] | None = None
) -> argparse.ArgumentParser:
    """Add the client command ``name`` to ``sub``, run by ``handler`` (see :func:`run_client`); returns its parser
    for the command's own arguments. ``names`` maps an argument to the kind of id it holds (``model``, ``page``,
    ``node``, ``document``): there a name is accepted too (:mod:`mindbank.cli.names`)."""
    parser = sub.add_parser(name, parents=[client_options()], help=help)
    parser.set_defaults(func=run_client(handler), names=names or {})
    return parser


def run_client(handler: Handler) -> Callable[[argparse.Namespace], int]:
    """Wrap a client command: open the client, map errors to exit codes and a one-line message on stderr."""

    def run(args: argparse.Namespace) -> int:
        from rich.console import Console

        from mindbank.client import Client, MindBankClientError, MindBankHTTPError

        err = Console(stderr=True, highlight=False, soft_wrap=True)
        try:
            with Client(args.url, api_key=args.api_key) as client:
                resolve_names(client, args)
                return handler(client, args, Output(args.json))
        except UnknownName as exc:
            err.print(f"error: {exc}", markup=False)
            return 1
        except AmbiguousName as exc:
            err.print(f"mindbank: error: {exc}", markup=False)
            return 2
        except MindBankHTTPError as exc:
            err.print(f"error: {exc.message} (HTTP {exc.status_code})", markup=False)
            return 1
        except (MindBankClientError, TimeoutError) as exc:
            err.print(f"error: {exc}", markup=False)
            return 1
        except UsageError as exc:
            err.print(f"mindbank: error: {exc}", markup=False)
            return 2

    return run


def add_wait_flags(parser: argparse.ArgumentParser) -> None:
    """``--wait`` and ``--timeout`` for a command that queues an operation (read by :func:`wait_and_report`)."""
    parser.add_argument("--wait", action="store_true", help="wait for the operation to finish (exit 1 if it fails)")
    add_timeout_flag(parser)


def add_timeout_flag(parser: argparse.ArgumentParser) -> None:
    """``--timeout S``: how long a wait lasts (default 120 s)."""
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (default 120)")


def bank(args: argparse.Namespace) -> str:
    """The bank of a client command: ``-b/--bank``, else ``MINDBANK_BANK``. Raises :class:`UsageError` when neither
    is given."""
    value = args.bank or os.environ.get("MINDBANK_BANK")
    if not value:
        raise UsageError("a bank is required: pass -b/--bank or set MINDBANK_BANK")
    return str(value)


def json_arg(raw: str | None, what: str) -> dict[str, Any] | None:
    """An option holding a JSON object (None when absent). Raises :class:`UsageError` for invalid JSON or a value
    that is not an object."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return value


def key_values(pairs: Sequence[str] | None, what: str, *, typed: bool = True) -> dict[str, Any]:
    """``key=value`` pairs. With ``typed`` a value that parses as JSON (``true``, ``5``, ``0.4``, ``null``) is taken
    as such (settings); without, every value stays a string (metadata is str -> str). Raises :class:`UsageError`
    for a pair without ``=`` or without a key."""
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


def wait_and_report(client: Client, bank_id: str, operation_id: str, out: Output, timeout: float) -> int:
    """Wait for an operation and print how it ended; exit status 0 when it completed, else 1. Raises
    ``TimeoutError`` after ``timeout`` seconds (exit 1 through :func:`run_client`)."""
    op = client.wait(bank_id, operation_id, timeout=timeout)
    if out.as_json:
        out.json(op)
    else:
        outcome = (op.details or {}).get("outcome") or (op.result_metadata or {}).get("outcome")
        line = f"operation {op.operation_id}: {op.status}" + (f" ({outcome})" if outcome else "")
        out.console.print(line + (f" - {op.error_message}" if op.error_message else ""), markup=False)
    return 0 if op.status == "completed" else 1
