"""Staleness: one rule, batched. Spec: "Staleness Gating".

A model is stale iff a memory in its resolved scope (tags with the strict variant of its match mode, fact types)
was written after its watermark, or a memory its document cites was deleted or left the scope it reads (beyond
the reference, which documents deletions as invisible), or facts a delta refresh was given could not be placed and
are carried over to the next one (issue 14: a fact the model was given is never silently dropped). The watermark
is ``last_memory_seen_at`` or, before the first refresh, ``last_refreshed_at`` (set to ``created_at`` at insert).
Memories still awaiting consolidation count. A page of models is one SQL statement (``Store.staleness_reads``),
plus one memory read only when a memory it cites was written since a watermark (to judge whether it left the
scope). This module owns the rule; stores only read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mindbank.domain.records import MemoryUnit, MentalModel
from mindbank.domain.scope import MemoryFilter, admits, model_scope
from mindbank.store.base import StalenessProbe, StalenessReads, Store

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def staleness_scope(model: MentalModel) -> MemoryFilter:
    """The filter whose writes make ``model`` stale."""
    return model_scope(model.tags, model.trigger, for_staleness=True)


def watermark_of(model: MentalModel) -> datetime:
    """What staleness compares against: the epoch for a cleared model (any in-scope memory counts until it is
    rebuilt), else ``last_memory_seen_at``, else ``last_refreshed_at`` (= ``created_at`` before the first refresh)."""
    if model.cleared_at is not None:
        return EPOCH
    return model.last_memory_seen_at or model.last_refreshed_at


def probe_of(model: MentalModel) -> StalenessProbe:
    """The staleness question for one model: its watermark, the scope whose writes count, the scope it reads, and
    whether facts are carried over."""
    # a cleared model is stale until its next refresh, whatever its scope holds (none at all once every source is
    # deleted): no watermark is the rule's "always stale"
    return StalenessProbe(
        model.id,
        None if model.cleared_at is not None else watermark_of(model),
        staleness_scope(model),
        model_scope(model.tags, model.trigger),
        carried_over=bool(model.refresh_state.carried_over),
    )


def moved_out(
    probes: Sequence[StalenessProbe],
    written: Sequence[tuple[str, str, datetime]],
    fetch: Callable[[list[str]], Sequence[MemoryUnit]],
) -> set[str]:
    """Models citing a memory that left the scope they read: ``written`` holds ``(model id, memory id, updated_at)``
    for cited memories written since the page's oldest watermark. Only a citation written after its own model's
    watermark is judged; ``fetch`` (a second query) runs only then, so a page with no such write costs nothing more."""
    by_id = {p.mental_model_id: p for p in probes}
    suspects = [
        (model_id, memory_id)
        for model_id, memory_id, at in written
        if (p := by_id.get(model_id)) is not None and p.read_scope is not None and p.since is not None and at > p.since
    ]
    if not suspects:
        return set()
    memories = {m.id: m for m in fetch(sorted({memory_id for _, memory_id in suspects}))}
    out: set[str] = set()
    for model_id, memory_id in suspects:
        memory, scope = memories.get(memory_id), by_id[model_id].read_scope
        if memory is not None and scope is not None and not admits(scope, memory.tags, memory.fact_type):
            out.add(model_id)
    return out


def decide_staleness(probes: Sequence[StalenessProbe], reads: StalenessReads, broken: set[str]) -> dict[str, bool]:
    """The staleness rule over what a backend read: stale iff ``since`` is null, or facts are carried over, or the
    bank was written after ``since`` and either the scope's newest memory is newer than ``since`` or the model is
    ``broken`` (a citation deleted or moved out of its read scope). Returns ``{model id: stale}``."""
    flags: dict[str, bool] = {}
    for p in probes:
        if p.since is None or p.carried_over:
            flags[p.mental_model_id] = True
        elif reads.bank_last is None or reads.bank_last <= p.since:
            flags[p.mental_model_id] = False
        else:
            n = reads.newest.get(p.scope)
            flags[p.mental_model_id] = (n is not None and n > p.since) or p.mental_model_id in broken
    return flags


def stale_flags(store: Store, bank_id: str, probes: Sequence[StalenessProbe]) -> dict[str, bool]:
    """Answer a page of staleness probes: one store statement, plus one memory read only when a cited memory was
    written since a watermark. Returns ``{model id: stale}`` for every probe."""
    if not probes:
        return {}
    reads = store.staleness_reads(bank_id, probes)
    broken = reads.gone | moved_out(probes, reads.written, lambda ids: store.get_memories(bank_id, ids))
    return decide_staleness(probes, reads, broken)


def mark_stale(store: Store, bank_id: str, models: Sequence[MentalModel]) -> None:
    """Set ``is_stale`` on every model of the page, in one batched read."""
    if not models:
        return
    flags = stale_flags(store, bank_id, [probe_of(m) for m in models])
    for model in models:
        model.is_stale = flags.get(model.id, True)
