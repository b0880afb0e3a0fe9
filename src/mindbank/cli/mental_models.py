"""Client commands over mental models: ``mm list|get|create|update|refresh|dry-run|history|diff|revert|...``."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mindbank.cli import curation
from mindbank.cli.common import (
    Subparsers,
    UsageError,
    add_wait_flags,
    bank,
    client_command,
    command_group,
    json_arg,
    wait_and_report,
)
from mindbank.cli.names import accept_names
from mindbank.cli.output import Output, dry_run_verdict, spend_line, when

if TYPE_CHECKING:
    from mindbank.client import Client, DryRunResult, HistoryEntry, MentalModelList

_DETAIL = ["metadata", "content", "full"]


def register(sub: Subparsers) -> None:
    """Add the ``mm`` command group to the ``mindbank`` command."""
    mm_sub = command_group(
        sub, "mm", help="mental models: list, get, create, update, refresh, dry-run, history, diff, ..."
    )

    p = client_command(mm_sub, "list", _list, help="list mental models")
    p.add_argument("--tag", action="append", default=None, help="tag filter (repeatable)")
    p.add_argument("--tags-match", default=None, choices=["any", "all", "exact"])
    p.add_argument("--detail", default="metadata", choices=_DETAIL)
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--offset", type=int, default=0)

    p = client_command(mm_sub, "get", _get, help="show a mental model and its content")
    p.add_argument("id")
    p.add_argument("--detail", default="full", choices=_DETAIL)

    p = client_command(mm_sub, "create", _create, help="create a mental model (its first refresh is queued)")
    p.add_argument("--name", required=True)
    p.add_argument("--query", required=True, help="the standing question (source_query)")
    p.add_argument("--id", default=None, help="custom id: lowercase letters, digits, hyphens")
    p.add_argument("--tag", action="append", default=None, help="tag (repeatable)")
    p.add_argument("--max-tokens", type=int, default=None, help="document size target, 256-8192 (default 2048)")
    _add_trigger_flags(p)
    add_wait_flags(p)

    p = client_command(mm_sub, "update", _update, help="change a model (trigger fields are merged)")
    p.add_argument("id")
    p.add_argument("--name", default=None)
    p.add_argument("--query", default=None, help="new source_query")
    p.add_argument("--tag", action="append", default=None, help="replace the tags (repeatable)")
    p.add_argument("--no-tags", action="store_true", help="remove every tag")
    p.add_argument("--max-tokens", type=int, default=None)
    _add_trigger_flags(p)

    p = client_command(mm_sub, "refresh", _refresh, help="queue a refresh")
    p.add_argument("id")
    p.add_argument("--full", action="store_true", help="rebuild the whole document for this run")
    add_wait_flags(p)

    p = client_command(mm_sub, "dry-run", _dry_run, help="preview a refresh (outcome and diff); writes nothing")
    p.add_argument("id")

    p = client_command(mm_sub, "history", _history, help="previous versions and failed refreshes")
    p.add_argument("id")

    p = client_command(
        mm_sub, "diff", _diff,
        help="unified diff between two history versions, or a version and the current content",
    )  # fmt: skip
    p.add_argument("id")
    p.add_argument("--from", dest="from_id", type=int, default=None, help="history id (default: the newest version)")
    p.add_argument("--to", dest="to_id", type=int, default=None, help="history id (default: the current content)")

    p = client_command(mm_sub, "revert", _revert, help="restore a history version as the current content")
    p.add_argument("id")
    p.add_argument("history_id", type=int)

    client_command(mm_sub, "clear", _clear, help="empty the content (kept in history)").add_argument("id")
    client_command(mm_sub, "delete", _delete, help="delete a model and its history").add_argument("id")
    curation.register(mm_sub)  # blocks, edit-block, add-block, remove-block, pin, unpin, draft, approve, reject
    accept_names(mm_sub, {"id": "model"})


def _add_trigger_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trigger", default=None, help="trigger settings as a JSON object (any HTTP trigger field)")
    p.add_argument(
        "--tags-match",
        default=None,
        choices=["any", "all", "any_strict", "all_strict", "exact"],
        help="trigger.tags_match: how the model's tags filter its memories",
    )
    p.add_argument("--mode", default=None, choices=["full", "delta"], help="trigger.mode: refresh mode")
    p.add_argument("--refresh-cron", default=None, help="trigger.refresh_cron: 5-field UTC cron schedule")


def _trigger_from_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--trigger JSON`` plus the shorthand flags; a flag contradicting the same JSON field is a usage error."""
    trigger = json_arg(args.trigger, "--trigger")
    shorthands = {"tags_match": args.tags_match, "mode": args.mode, "refresh_cron": args.refresh_cron}
    if not any(v is not None for v in shorthands.values()):
        return trigger
    merged = dict(trigger or {})
    for key, value in shorthands.items():
        if value is None:
            continue
        if merged.get(key) is not None and merged[key] != value:
            raise UsageError(f"{key} is given both as a flag ({value!r}) and in --trigger ({merged[key]!r})")
        merged[key] = value
    return merged


def _warn(out: Output, warnings: list[str]) -> None:
    for warning in warnings:
        out.console.print(f"warning: {warning}", style="yellow", markup=False)


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.list_mental_models(
        bank(args), tags=args.tag, tags_match=args.tags_match, detail=args.detail, limit=args.limit,
        offset=args.offset,
    )  # fmt: skip
    columns = ("id", "name", "tags", "stale", "last refreshed")
    footer = f"{len(page.items)} of {page.total}"
    return out.listing(page, columns, _model_rows(page), empty="no mental models", footer=footer)


def _model_rows(page: MentalModelList) -> Iterator[list[str]]:
    for m in page.items:
        stale = "?" if m.is_stale is None else ("yes" if m.is_stale else "no")
        yield [m.id, m.name, ", ".join(m.tags), stale, when(m.last_refreshed_at)]


def _get(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.get_mental_model(bank(args), args.id, detail=args.detail)
    if out.as_json:
        out.json(model)
        return 0
    stale = "unknown" if model.is_stale is None else ("stale" if model.is_stale else "fresh")
    out.console.print(f"{model.name}", style="bold", markup=False)
    out.text(f"id: {model.id}   tags: {', '.join(model.tags) or '-'}   {stale}")
    out.text(f"last refreshed: {when(model.last_refreshed_at)}")
    for line in refresh_status_lines(model.refresh_status):
        out.text(line)
    if model.source_query is not None:
        out.text(f"question: {model.source_query}")
    if model.content is not None:
        out.text("")
        out.text(model.content or "(empty: not refreshed yet, or cleared)")
    return 0


def refresh_status_lines(status: dict[str, Any] | None) -> Iterator[str]:
    """What ``mm get`` says about refresh governance and spend: failures, the circuit breaker, tokens spent."""
    if not status:
        return
    failures = status.get("consecutive_failures") or 0
    state = "ok"
    if status.get("breaker_open"):
        state = f"breaker open after {failures} failures (a manual refresh that succeeds, or clear, closes it)"
    elif status.get("next_automatic_refresh_at"):
        state = f"{failures} failure(s), automatic refreshes back off until {status['next_automatic_refresh_at']}"
    elif failures:
        state = f"{failures} failure(s) ({status.get('last_failure_reason')})"
    yield f"refresh: {state}"
    if status.get("carried_over"):
        yield f"carried over: {len(status['carried_over'])} fact(s) the last delta could not place"
    if status.get("reanchor"):
        yield f"next refresh re-anchors in full ({status['reanchor']})"
    if status.get("waiting_for_scope_change"):
        yield "automatic refreshes wait for the scope to change (nothing in it supports the document)"
    refusal = status.get("last_refusal")
    if refusal:
        yield (
            f"last automatic refusal: {refusal.get('reason')} ({refusal.get('limit')} budget "
            f"{refusal.get('budget_tokens')} tokens, spent {refusal.get('spent_tokens')}, until {refusal.get('until')})"
        )
    spend = status.get("spend") or {}
    budget = status.get("daily_token_budget")
    yield (
        "spend today: " + spend_line(spend.get("today") or {}) + (f" of {budget} budget" if budget is not None else "")
    )
    yield "spend total: " + spend_line(spend.get("total") or {})


def _create(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    created = client.create_mental_model(
        bank_id, args.name, args.query, id=args.id, tags=args.tag, max_tokens=args.max_tokens,
        trigger=_trigger_from_args(args),
    )  # fmt: skip
    if args.wait:
        if not out.as_json:
            out.console.print(f"created mental model {created.mental_model_id}")
        return wait_and_report(client, bank_id, created.operation_id, out, args.timeout)
    if out.as_json:
        out.json(created)
        return 0
    out.console.print(
        f"created mental model {created.mental_model_id}; first refresh: operation {created.operation_id}"
    )
    _warn(out, created.warnings)
    return 0


def _update(client: Client, args: argparse.Namespace, out: Output) -> int:
    tags: list[str] | None = [] if args.no_tags else args.tag
    model = client.update_mental_model(
        bank(args), args.id, name=args.name, source_query=args.query, max_tokens=args.max_tokens, tags=tags,
        trigger=_trigger_from_args(args),
    )  # fmt: skip
    if out.as_json:
        out.json(model)
        return 0
    out.console.print(f"updated mental model {model.id}")
    _warn(out, model.warnings)
    return 0


def _refresh(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    queued = client.refresh_mental_model(bank_id, args.id, mode="full" if args.full else None)
    if args.wait:
        return wait_and_report(client, bank_id, queued.operation_id, out, args.timeout)
    return out.done(queued, f"refresh of {args.id} queued: operation {queued.operation_id}")


def _dry_run(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.dry_run_refresh_mental_model(bank(args), args.id)
    return out.report(result, _dry_run_lines(result))


def _dry_run_lines(result: DryRunResult) -> Iterator[str]:
    yield f"{dry_run_verdict(result.outcome, result.would_persist, result.failure_reason)}   (outcome {result.outcome})"
    mode = result.effective_mode or "-"
    if result.mode_fallback_reason:
        mode += f" (fallback: {result.mode_fallback_reason})"
    yield f"mode: {mode}"
    if result.failure_reason:
        yield f"failure: {result.failure_reason}"
    for warning in result.warnings:
        yield f"warning: {warning}"
    yield ""
    yield result.diff or "(no change)"


def _history(client: Client, args: argparse.Namespace, out: Output) -> int:
    entries = client.get_mental_model_history(bank(args), args.id)
    columns = ("history id", "changed at", "kind", "detail")
    return out.listing(entries, columns, _history_rows(entries), empty="no history")


def _history_rows(entries: list[HistoryEntry]) -> Iterator[list[str]]:
    for e in entries:
        if e.is_failure:
            yield [str(e.id), when(e.changed_at), "refresh failed", f"{e.outcome}: {e.failure_reason}"]
        else:
            content = e.previous_content or ""
            first = next(
                (line for line in content.splitlines() if line.strip() and not line.startswith("<!--")), "(empty)"
            )
            kind = e.kind or "version"  # "edit" (a hand edit or pin), "draft_rejected" (review)
            yield [str(e.id), when(e.changed_at), kind, f"{len(content)} chars, {first[:60]}"]


def _diff(client: Client, args: argparse.Namespace, out: Output) -> int:
    """Unified diff from a history version (default: the newest) to another version or the current content."""
    bank_id = bank(args)
    versions = [e for e in client.get_mental_model_history(bank_id, args.id) if not e.is_failure]
    by_id = {e.id: e for e in versions}

    def version(history_id: int) -> tuple[str, str]:
        entry = by_id.get(history_id)
        if entry is None:
            raise UsageError(f"history entry {history_id} is not a version of mental model {args.id}")
        return entry.previous_content or "", f"history/{history_id} ({when(entry.changed_at)})"

    if args.from_id is not None:
        old, old_label = version(args.from_id)
    elif versions:
        old, old_label = version(versions[0].id)  # type: ignore[arg-type]  # a stored version always has its id
    else:
        raise UsageError(f"mental model {args.id} has no history yet")
    if args.to_id is not None:
        new, new_label = version(args.to_id)
    else:
        new, new_label = client.get_mental_model(bank_id, args.id).content or "", "current"
    diff = "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_label, new_label)
    )
    if out.as_json:
        out.json({"from": old_label, "to": new_label, "diff": diff})
    else:
        out.text(diff or f"no difference between {old_label} and {new_label}")
    return 0


def _revert(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.revert_mental_model(bank(args), args.id, args.history_id)
    return out.done(model, f"mental model {model.id} reverted to history entry {args.history_id}")


def _clear(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.clear_mental_model(bank(args), args.id)
    return out.done(model, f"mental model {model.id} cleared (previous content kept in history)")


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_mental_model(bank(args), args.id)
    return out.done(result, f"mental model {args.id} deleted")
