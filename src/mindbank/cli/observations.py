"""Client commands over observations and bulk memory deletes: ``observations history|scopes|clear`` and
``memories clear``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command, command_group
from mindbank.cli.output import Output

if TYPE_CHECKING:
    from mindbank.client import Client
    from mindbank.client.resource_models import ObservationChange


def register(sub: Subparsers) -> None:
    """Add the ``observations`` and ``memories`` command groups to the ``mindbank`` command."""
    obs_sub = command_group(sub, "observations", help="observations: history, scopes, clear")
    p = client_command(obs_sub, "history", _history, help="the changes consolidation made to an observation")
    p.add_argument("memory_id")
    p = client_command(obs_sub, "scopes", _scopes, help="the tag sets observations live under, with counts")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--offset", type=int, default=0)
    p = client_command(obs_sub, "clear", _clear, help="delete observations (all, or those built from --memory)")
    p.add_argument("--memory", default=None, metavar="ID", help="only the observations built from this memory")
    mem_sub = command_group(sub, "memories", help="memories: clear")
    p = client_command(mem_sub, "clear", _clear_memories, help="delete the bank's memories (all, or of --type)")
    p.add_argument("--type", default=None, choices=["world", "experience", "observation"])


def _history(client: Client, args: argparse.Namespace, out: Output) -> int:
    changes = client.get_observation_history(bank(args), args.memory_id)
    return out.report(changes, _change_lines(changes) if changes else ["no changes recorded"])


def _change_lines(changes: list[ObservationChange]) -> Iterator[str]:
    for change in changes:
        yield f"{change.changed_at}"
        if change.previous_text != change.text:
            yield f"  was: {change.previous_text}"
            yield f"  now: {change.text}"
        for fact in change.source_facts_added:
            yield f"  + {fact.id}: {fact.text or '(deleted)'}"
        for fact in change.source_facts_removed:
            yield f"  - {fact.id}: {fact.text or '(deleted)'}"


def _scopes(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_observation_scopes(bank(args), limit=args.limit, offset=args.offset)
    rows = ([", ".join(s.tags) or "(untagged)", str(s.count)] for s in page.scopes)
    footer = f"{len(page.scopes)} of {page.total}"
    return out.listing(page, ("scope", "observations"), rows, empty="no observations", footer=footer)


def _clear(client: Client, args: argparse.Namespace, out: Output) -> int:
    if args.memory:
        result = client.clear_memory_observations(bank(args), args.memory)
        message = f"deleted {result.deleted_count} observation(s) built from {args.memory}; it is consolidated again"
        return out.done(result, message, markup=False)
    cleared = client.clear_observations(bank(args))
    return out.done(cleared, cleared.message or f"deleted {cleared.deleted_count} observation(s)", markup=False)


def _clear_memories(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.clear_bank_memories(bank(args), type=args.type)
    return out.done(result, result.message or f"deleted {result.deleted_count} memories", markup=False)
