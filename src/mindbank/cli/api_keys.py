"""Client commands over scoped API keys (docs/security.md): ``keys create|list|revoke``. They need the admin key
(``--api-key`` / ``MINDBANK_API_KEY``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, client_command, command_group
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add the ``keys`` command group to the ``mindbank`` command."""
    keys_sub = command_group(sub, "keys", help="scoped API keys: create, list, revoke (admin key)")
    p = client_command(keys_sub, "create", _create, help="create a key limited to some banks; prints its secret once")
    p.add_argument(
        "banks", nargs="+", metavar="BANK",
        help="a bank id, a prefix ending in * (team-*: quote it in the shell), or * for every bank",
    )  # fmt: skip
    p.add_argument("--read-only", action="store_true", help="reads only: GET, recall, reflect, dry runs")
    p.add_argument("--name", default=None, help="a label for the key")
    client_command(keys_sub, "list", _list, help="list keys (never their secrets)")
    client_command(keys_sub, "revoke", _revoke, help="revoke a key at once").add_argument("key_id")


def _create(client: Client, args: argparse.Namespace, out: Output) -> int:
    key = client.create_api_key(args.banks, read_only=args.read_only, name=args.name)
    access = "read-only" if key.read_only else "read-write"
    lines = [key.key, f"key {key.id} ({access}) for {', '.join(key.banks)}: the secret above is shown only once"]
    return out.report(key, lines)


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_api_keys()
    rows = (
        [k.id, k.name or "-", ", ".join(k.banks), "read-only" if k.read_only else "read-write", when(k.created_at),
         when(k.revoked_at)]
        for k in page.items
    )  # fmt: skip
    columns = ("id", "name", "banks", "access", "created", "revoked")
    return out.listing(page, columns, rows, empty="no API keys")


def _revoke(client: Client, args: argparse.Namespace, out: Output) -> int:
    key = client.revoke_api_key(args.key_id)
    return out.done(key, f"revoked key {key.id}", markup=False)
