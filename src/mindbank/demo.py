"""``mindbank demo``: the main job end to end, in-process, on a fresh database.

Imports the first half of a conversation, creates one mental model per speaker plus one spanning both speakers'
tags and a narrow one ("What is Priya training for, and how is it going?", about the first speaker, untagged: its
document opens with the answer), prints them, imports the second half, shows which models are stale (checked
against which models actually gained in-scope memories), refreshes them and prints what changed.
Exit status 1 if a check fails.
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table

from mindbank.config import Settings
from mindbank.domain.document import StructuredDocument
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.domain.scope import model_scope
from mindbank.domain.tags import groups_match, matches
from mindbank.importers import LocomoConversation, load_locomo, locomo_items, sample_conversation_path, split_halves
from mindbank.service.facade import MindBank

BANK = "demo"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A mental model the demo creates."""

    name: str
    source_query: str
    tags: tuple[str, ...]
    tags_match: str | None = None
    narrow: bool = False  # a narrow question: only its first lines are printed (the answer section)


NARROW_LINES = 8  # lines of the narrow model's document the demo prints


def speaker_tag(name: str) -> str:
    """The tag the importers give a speaker's turns."""
    return "speaker:" + "-".join(name.lower().split())


def model_specs(speakers: Sequence[str]) -> list[ModelSpec]:
    """One model per speaker (tagged with that speaker), one reading both speakers' tags (``any``), and a narrow
    question about the first speaker over the whole bank."""
    specs = [
        ModelSpec(
            name=f"What matters to {s}",
            source_query=f"What matters most to {s}, and what is {s} working on?",
            tags=(speaker_tag(s),),
        )
        for s in speakers
    ]
    specs.append(
        ModelSpec(
            name="Plans and goals",
            source_query="What plans, goals and upcoming events do they talk about?",
            tags=tuple(speaker_tag(s) for s in speakers),
            tags_match="any",
        )
    )
    subject = speakers[0]
    specs.append(
        ModelSpec(
            name=f"{subject}'s training",
            source_query=f"What is {subject} training for, and how is it going?",
            tags=(),
            narrow=True,
        )
    )
    return specs


def gained_memories(model: MentalModel, items: Sequence[RetainItem]) -> bool:
    """Whether any of ``items`` falls in the model's staleness scope (computed independently of the store)."""
    scope = model_scope(model.tags, model.trigger, for_staleness=True)
    return any(matches(i.tags, scope.tags, scope.tags_match) and groups_match(i.tags, scope.groups) for i in items)


def _import(console: Console, mb: MindBank, items: list[RetainItem], label: str) -> None:
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(label, total=len(items))
        for start in range(0, len(items), 64):
            mb.retain(BANK, items[start : start + 64])
            progress.advance(task, min(64, len(items) - start))
    console.print(f"[green]✓[/] {label}: {len(items)} turns")


def _check_citations(console: Console, mb: MindBank, model: MentalModel, speaker: str | None) -> bool:
    doc = StructuredDocument.from_dict(model.structured_document or {"version": 1, "sections": []})
    cited = list(doc.memory_ids())
    found = mb.store.get_memories(BANK, cited)
    ok = bool(cited) and len(found) == len(cited)
    line = f"cites {len(cited)} memories, {len(found)} found in the bank"
    if speaker is not None and found:
        own = sum(1 for m in found if m.metadata.get("speaker") == speaker)
        share = own / len(found)
        ok = ok and share >= 0.5
        line += f"; {share:.0%} are {speaker}'s own turns"
    console.print(("[green]✓[/] " if ok else "[red]✗[/] ") + line)
    return ok


def run_demo(path: str | None = None, *, console: Console | None = None, database: str | None = None) -> int:
    """Run the demo on ``path`` (a LoCoMo file; default: the bundled sample). Returns the exit status."""
    console = console or Console()
    conv = load_locomo(path or sample_conversation_path())
    first, second = split_halves(conv)
    with tempfile.TemporaryDirectory(prefix="mindbank-demo-") as tmp:
        db = database or str(Path(tmp) / "demo.db")
        console.print(
            Panel(
                f"mindbank demo — conversation [bold]{conv.sample_id}[/] between "
                f"{' and '.join(conv.speakers)}, {len(conv.sessions)} sessions\ndatabase: {db}"
            )
        )
        # the environment's settings (MINDBANK_LLM_* included: docs/llm.md) on the demo's own database
        mb = MindBank.open(replace(Settings.from_env(), database_url=db))
        try:
            return _run(console, mb, conv, first, second)
        finally:
            mb.close()


def _run(console: Console, mb: MindBank, conv: LocomoConversation, first: list[int], second: list[int]) -> int:
    ok = True
    first_items = locomo_items(conv, first)
    second_items = locomo_items(conv, second)
    _import(console, mb, first_items, f"imported first half (sessions {first[0]}–{first[-1]})")

    specs = model_specs(conv.speakers)
    ids: list[tuple[str, ModelSpec]] = []
    for spec in specs:
        # delta: the refresh after the second half edits each briefing (new facts, repeats, updates) in place
        trigger = {"mode": "delta", **({"tags_match": spec.tags_match} if spec.tags_match else {})}
        model_id, _ = mb.create_mental_model(
            BANK, name=spec.name, source_query=spec.source_query, tags=spec.tags, max_tokens=600, trigger=trigger
        )
        ids.append((model_id, spec))
    mb.run_pending()

    for model_id, spec in ids:
        model = mb.get_mental_model(BANK, model_id)
        console.rule(f"[bold]{model.name}[/]  tags={list(model.tags)}")
        if spec.narrow:
            # a narrow question: the document opens with its answer, so its first lines are what a reader needs
            console.print(f"[bold]{spec.source_query}[/] — first lines:")
            console.print(Markdown("\n".join((model.content or "_(empty)_").splitlines()[:NARROW_LINES])))
        else:
            console.print(Markdown(model.content or "_(empty)_"))
        speaker = spec.tags[0].removeprefix("speaker:") if len(spec.tags) == 1 else None
        speaker_name = next((s for s in conv.speakers if speaker and speaker_tag(s) == spec.tags[0]), None)
        ok &= bool(model.content.strip())
        ok &= _check_citations(console, mb, model, speaker_name)

    _import(console, mb, second_items, f"imported second half (sessions {second[0]}–{second[-1]})")
    models, _ = mb.list_mental_models(BANK)
    table = Table(title="Staleness after the second half")
    for column in ("model", "is_stale", "gained in-scope memories"):
        table.add_column(column)
    stale = []
    for model in sorted(models, key=lambda m: m.name):
        expected = gained_memories(model, second_items)
        ok &= model.is_stale == expected
        table.add_row(model.name, str(model.is_stale), str(expected))
        if model.is_stale:
            stale.append(model)
    console.print(table)

    before = {m.id: m.content for m in stale}
    for model in stale:
        mb.refresh_mental_model(BANK, model.id)
    mb.run_pending()
    for model in stale:
        after = mb.get_mental_model(BANK, model.id)
        added = [
            ln for ln in difflib.ndiff(before[model.id].splitlines(), after.content.splitlines()) if ln[:2] == "+ "
        ]
        removed = [
            ln for ln in difflib.ndiff(before[model.id].splitlines(), after.content.splitlines()) if ln[:2] == "- "
        ]
        history = mb.mental_model_history(BANK, model.id)
        # the figures on a line of their own: a rule's title is cut to the terminal's width
        console.rule(f"[bold]{after.name}[/] refreshed")
        console.print(
            f"+{len(added)} / -{len(removed)} lines, history entries: {len(history)}, stale now: {after.is_stale}"
        )
        for line in [ln for ln in added if ln.strip("+ ")][:6]:
            console.print("[green]" + line.replace("[", r"\[") + "[/]")
        ok &= after.is_stale is False and len(history) >= 1
        ok &= _check_citations(console, mb, after, None)
    console.print("[bold green]demo finished: all checks passed[/]" if ok else "[bold red]demo: a check failed[/]")
    return 0 if ok else 1
