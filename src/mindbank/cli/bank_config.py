"""The ``config`` command: a bank's resolved settings and overrides (``--set``/``--unset``/``--reset``), or this
machine's ``MINDBANK_*`` settings (``--local``); and ``profile``: the bank's name, mission and disposition."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command, key_values
from mindbank.cli.output import Output
from mindbank.config import OPTIONS, Settings

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add ``config`` and ``profile`` to the ``mindbank`` command."""
    p = client_command(sub, "config", _config, help="show or change a bank's settings (or --local)")
    p.add_argument("--set", action="append", default=None, metavar="KEY=VALUE", help="set an override")
    p.add_argument("--unset", action="append", default=None, metavar="KEY", help="remove an override")
    p.add_argument("--local", action="store_true", help="show this machine's MINDBANK_* settings instead")
    p.add_argument("--reset", action="store_true", help="remove every override of the bank")
    p = client_command(sub, "profile", _profile, help="show or change a bank's name, mission and disposition")
    p.add_argument("--name", default=None)
    p.add_argument("--mission", default=None, help="what the LLM engine is told the bank is for")


def _config(client: Client, args: argparse.Namespace, out: Output) -> int:
    if args.local:
        return _show_local_settings(out)
    bank_id = bank(args)
    updates = key_values(args.set, "--set") | dict.fromkeys(args.unset or ())
    if args.reset:
        client.reset_bank_config(bank_id)
    result = client.update_bank_config(bank_id, updates) if updates else client.get_bank_config(bank_id)
    rows = (
        [key, json.dumps(value), "bank" if key in result.overrides else "server"]
        for key, value in result.config.items()
    )
    return out.listing(result, ("setting", "value", "source"), rows)


def _profile(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    if args.name is not None or args.mission is not None:
        profile = client.update_bank_profile(bank_id, name=args.name, mission=args.mission)
    else:
        profile = client.get_bank_profile(bank_id)
    traits = ", ".join(f"{k} {v}" for k, v in profile.disposition.items())
    return out.report(profile, [f"bank {profile.bank_id}: {profile.name}", f"  disposition: {traits}", "",
                                profile.mission or "(no mission)"])  # fmt: skip


def _show_local_settings(out: Output) -> int:
    """The settings this machine's environment resolves to (what ``mindbank serve`` here would use)."""
    settings = Settings.from_env()
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    values["api_key"] = "(set)" if settings.api_key else None  # never print the key itself
    rows = ([option.env, json.dumps(values[option.name])] for option in OPTIONS)
    return out.listing(values, ("variable", "value"), rows)
