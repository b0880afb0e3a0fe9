"""The ``stats`` command: a bank's live statistics, with what its refreshes spent today and in total, the daily
token budgets and the failing models (refresh governance, beyond the reference)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, bank, client_command
from mindbank.cli.output import Output, spend_line, when

if TYPE_CHECKING:
    from mindbank.client import BankStats, Client


def register(sub: Subparsers) -> None:
    """Add ``stats`` to the ``mindbank`` command."""
    client_command(sub, "stats", _stats, help="a bank's statistics and refresh spend (tokens, cost, budgets)")


def _stats(client: Client, args: argparse.Namespace, out: Output) -> int:
    stats = client.stats(bank(args))
    return out.report(stats, _stats_lines(stats))


def _stats_lines(stats: BankStats) -> Iterator[str]:
    by_type = ", ".join(f"{n} {t}" for t, n in sorted(stats.nodes_by_fact_type.items())) or "none"
    yield f"bank {stats.bank_id}: {stats.total_nodes} memories ({by_type}), {stats.total_documents} documents"
    yield f"last memory write: {when(stats.last_memory_write_at)}"
    yield f"operations: {stats.pending_operations} pending, {stats.failed_operations} failed"
    spend = stats.refresh_spend or {}
    if spend:
        yield f"refresh spend today ({spend.get('day')}): " + spend_line(spend.get("today") or {})
        yield "refresh spend total: " + spend_line(spend.get("total") or {})
    budget = stats.refresh_budget or {}
    yield (
        f"daily token budgets: bank {budget.get('bank_daily_tokens') or 'none'}, "
        f"per model {budget.get('model_daily_tokens') or 'none'}"
    )
    state = "open: automatic refreshes stopped" if stats.bank_breaker_open else "closed"
    yield f"failing models: {stats.failing_models} (bank breaker {state})"
