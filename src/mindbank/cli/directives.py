"""Client commands over a bank's directives: ``directives list|get|add|update|delete``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command, command_group
from mindbank.cli.output import Output

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add the ``directives`` command group to the ``mindbank`` command."""
    dsub = command_group(sub, "directives", help="directives the LLM engine follows: list, get, add, update, delete")
    p = client_command(dsub, "list", _list, help="list directives, highest priority first")
    p.add_argument("--tag", action="append", default=None, help="scope filter (repeatable)")
    p.add_argument("--all", action="store_true", help="include inactive directives")
    client_command(dsub, "get", _get, help="show a directive").add_argument("directive_id")
    p = client_command(dsub, "add", _add, help="create a directive")
    p.add_argument("--name", required=True)
    p.add_argument("--content", required=True, help="the instruction")
    p.add_argument("--priority", type=int, default=0, help="higher goes first in prompts")
    p.add_argument("--tag", action="append", default=None, help="scope tag (repeatable; none: global)")
    p.add_argument("--inactive", action="store_true", help="create it switched off")
    p = client_command(dsub, "update", _update, help="change a directive")
    p.add_argument("directive_id")
    p.add_argument("--name", default=None)
    p.add_argument("--content", default=None)
    p.add_argument("--priority", type=int, default=None)
    p.add_argument("--active", dest="active", action="store_true", default=None, help="switch it on")
    p.add_argument("--inactive", dest="active", action="store_false", help="switch it off")
    client_command(dsub, "delete", _delete, help="delete a directive").add_argument("directive_id")


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_directives(bank(args), tags=args.tag, active_only=not args.all)
    rows = ([d.id, d.name, str(d.priority), "yes" if d.is_active else "no", ", ".join(d.tags) or "(global)",
             d.content[:60]] for d in page.items)  # fmt: skip
    columns = ("id", "name", "priority", "active", "tags", "content")
    return out.listing(page, columns, rows, empty="no directives", footer=f"{len(page.items)} of {page.total}")


def _get(client: Client, args: argparse.Namespace, out: Output) -> int:
    d = client.get_directive(bank(args), args.directive_id)
    state = "active" if d.is_active else "inactive"
    return out.report(d, [f"directive {d.id}: {d.name} (priority {d.priority}, {state})",
                          f"  tags: {', '.join(d.tags) or '(global)'}", "", d.content])  # fmt: skip


def _add(client: Client, args: argparse.Namespace, out: Output) -> int:
    d = client.create_directive(bank(args), args.name, args.content, priority=args.priority, tags=args.tag,
                                is_active=not args.inactive)  # fmt: skip
    return out.done(d, f"directive {d.id} created", markup=False)


def _update(client: Client, args: argparse.Namespace, out: Output) -> int:
    d = client.update_directive(bank(args), args.directive_id, name=args.name, content=args.content,
                                priority=args.priority, is_active=args.active)  # fmt: skip
    return out.done(d, f"directive {d.id} updated", markup=False)


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_directive(bank(args), args.directive_id)
    return out.done(result, f"directive {args.directive_id} deleted", markup=False)
