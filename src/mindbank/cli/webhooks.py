"""Client commands over a bank's webhooks: ``webhooks list|add|update|delete|deliveries``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command, command_group
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add the ``webhooks`` command group to the ``mindbank`` command."""
    wsub = command_group(sub, "webhooks", help="webhooks: list, add, update, delete, deliveries")
    client_command(wsub, "list", _list, help="list the bank's webhooks")
    p = client_command(wsub, "add", _add, help="register a webhook")
    p.add_argument("target", metavar="URL", help="where events are POSTed (--url is the server's)")
    p.add_argument("--event", action="append", default=None, help="event type (repeatable)")
    p.add_argument("--secret", default=None, help="HMAC-SHA256 signing secret")
    p = client_command(wsub, "update", _update, help="change a webhook")
    p.add_argument("webhook_id")
    p.add_argument("--target", default=None, help="new URL (--url is the server's)")
    p.add_argument("--event", action="append", default=None, help="replace the event types (repeatable)")
    p.add_argument("--enable", dest="enabled", action="store_true", default=None)
    p.add_argument("--disable", dest="enabled", action="store_false")
    client_command(wsub, "delete", _delete, help="delete a webhook").add_argument("webhook_id")
    p = client_command(wsub, "deliveries", _deliveries, help="a webhook's deliveries, newest first")
    p.add_argument("webhook_id")
    p.add_argument("--limit", type=int, default=50)


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_webhooks(bank(args))
    rows = ([w.id, w.url, ", ".join(w.event_types), "yes" if w.enabled else "no", "yes" if w.secret else "no"]
            for w in page.items)  # fmt: skip
    return out.listing(page, ("id", "url", "events", "enabled", "signed"), rows, empty="no webhooks")


def _add(client: Client, args: argparse.Namespace, out: Output) -> int:
    w = client.create_webhook(bank(args), args.target, event_types=args.event, secret=args.secret)
    return out.done(w, f"webhook {w.id} created for {', '.join(w.event_types)}", markup=False)


def _update(client: Client, args: argparse.Namespace, out: Output) -> int:
    w = client.update_webhook(
        bank(args), args.webhook_id, url=args.target, event_types=args.event, enabled=args.enabled
    )
    return out.done(w, f"webhook {w.id} updated", markup=False)


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_webhook(bank(args), args.webhook_id)
    return out.done(result, f"webhook {args.webhook_id} deleted", markup=False)


def _deliveries(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_webhook_deliveries(bank(args), args.webhook_id, limit=args.limit)
    rows = ([when(d.created_at), d.event_type, d.status, str(d.attempts), str(d.last_response_status or "-"),
             d.last_error or "-"] for d in page.items)  # fmt: skip
    columns = ("created", "event", "status", "attempts", "last status", "last error")
    return out.listing(page, columns, rows, empty="no deliveries")
