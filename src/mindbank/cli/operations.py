"""Client commands over background operations: ``ops list|get|cancel|retry|delete|wait``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, add_timeout_flag, bank, client_command, command_group, wait_and_report
from mindbank.cli.output import Output, spend_line, when

if TYPE_CHECKING:
    from mindbank.client import Client, Operation


def register(sub: Subparsers) -> None:
    """Add the ``ops`` command group to the ``mindbank`` command."""
    ops_sub = command_group(sub, "ops", help="background operations: list, get, cancel, retry, delete, wait")
    p = client_command(ops_sub, "list", _list, help="list operations, newest first")
    p.add_argument("--status", default=None, choices=["pending", "processing", "completed", "failed", "cancelled"])
    p.add_argument("--type", default=None, help="operation type, e.g. refresh_mental_model")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    client_command(ops_sub, "get", _get, help="show one operation").add_argument("operation_id")
    client_command(ops_sub, "cancel", _cancel, help="cancel a pending operation").add_argument("operation_id")
    client_command(ops_sub, "retry", _retry, help="queue a failed operation again").add_argument("operation_id")
    client_command(ops_sub, "delete", _delete, help="delete an operation record").add_argument("operation_id")
    p = client_command(ops_sub, "wait", _wait, help="wait for an operation to finish (exit 1 unless it completed)")
    p.add_argument("operation_id")
    add_timeout_flag(p)


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_operations(
        bank(args), status=args.status, operation_type=args.type, limit=args.limit, offset=args.offset
    )
    rows = (
        [op.id, op.operation_type or "-", op.status, op.mental_model_id or "-", when(op.created_at)]
        for op in page.operations
    )
    columns = ("id", "type", "status", "mental model", "created")
    footer = f"{len(page.operations)} of {page.total}"
    return out.listing(page, columns, rows, empty="no operations", footer=footer)


def _get(client: Client, args: argparse.Namespace, out: Output) -> int:
    op = client.get_operation(bank(args), args.operation_id)
    return out.report(op, _operation_lines(op))


def _operation_lines(op: Operation) -> Iterator[str]:
    yield f"operation {op.operation_id}: {op.operation_type} {op.status}"
    for label, value in (
        ("mental model", op.mental_model_id),
        ("created", when(op.created_at)),
        ("completed", when(op.completed_at) if op.completed_at else None),
        ("outcome", (op.result_metadata or {}).get("outcome") or (op.details or {}).get("outcome")),
        ("error", op.error_message),
        ("spend", spend_line(spend) if (spend := (op.result_metadata or {}).get("spend")) else None),
    ):
        if value:
            yield f"  {label}: {value}"


def _cancel(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.cancel_operation(bank(args), args.operation_id)
    return out.done(result, result.message, markup=False)


def _retry(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.retry_operation(bank(args), args.operation_id)
    return out.done(result, result.message, markup=False)


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_operation(bank(args), args.operation_id)
    return out.done(result, result.message, markup=False)


def _wait(client: Client, args: argparse.Namespace, out: Output) -> int:
    return wait_and_report(client, bank(args), args.operation_id, out, args.timeout)
