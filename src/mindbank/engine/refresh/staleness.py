"""Staleness: one rule, batched. Spec: "Staleness Gating".

A model is stale iff a memory in its resolved scope (tags with the strict variant of its match mode, fact types)
was written after its watermark, or a memory its document cites was deleted or left the scope it reads (beyond
the reference, which documents deletions as invisible), or facts a delta refresh was given could not be placed and
are carried over to the next one (a fact the model was given is never silently dropped). The watermark
is ``last_memory_seen_at`` or, before the first refresh, ``last_refreshed_at`` (set to ``created_at`` at insert).
Memories still awaiting consolidation count. A page of models is one SQL statement (``Store.staleness_reads``),
plus one memory read only when a memory it cites was written since a watermark (to judge whether it left the
scope). This module owns the rule; stores only read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from mindbank.domain.records import MemoryUnit, MentalModel
from mindbank.domain.scope import MemoryFilter, admits, model_scope
from mindbank.domain.timeutil import to_iso
from mindbank.store.base import StalenessProbe, StalenessReads, Store, cited_ids

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


#: Why a model is stale (``staleness_reason.kind``), in the order the rule checks them.
NEVER_REFRESHED = "never_refreshed"
CARRIED_OVER = "carried_over"
IN_SCOPE_WRITES = "in_scope_writes"
CITED_MEMORY_GONE = "cited_memory_gone"


def decide_staleness(
    probes: Sequence[StalenessProbe], reads: StalenessReads, broken: set[str]
) -> dict[str, str | None]:
    """The staleness rule over what a backend read: stale iff ``since`` is null, or facts are carried over, or the
    bank was written after ``since`` and either the scope's newest memory is newer than ``since`` or the model is
    ``broken`` (a citation deleted or moved out of its read scope). Returns ``{model id: reason kind}`` — one of
    the kinds above, the first that applies in that order — with None for a fresh model."""
    kinds: dict[str, str | None] = {}
    for p in probes:
        if p.since is None:
            kinds[p.mental_model_id] = NEVER_REFRESHED
        elif p.carried_over:
            kinds[p.mental_model_id] = CARRIED_OVER
        elif reads.bank_last is None or reads.bank_last <= p.since:
            kinds[p.mental_model_id] = None
        elif (n := reads.newest.get(p.scope)) is not None and n > p.since:
            kinds[p.mental_model_id] = IN_SCOPE_WRITES
        else:
            kinds[p.mental_model_id] = CITED_MEMORY_GONE if p.mental_model_id in broken else None
    return kinds


def stale_kinds(store: Store, bank_id: str, probes: Sequence[StalenessProbe]) -> dict[str, str | None]:
    """Answer a page of staleness probes: one store statement, plus one memory read only when a cited memory was
    written since a watermark. Returns ``{model id: reason kind or None when fresh}`` for every probe."""
    if not probes:
        return {}
    reads = store.staleness_reads(bank_id, probes)
    broken = reads.gone | moved_out(probes, reads.written, lambda ids: store.get_memories(bank_id, ids))
    return decide_staleness(probes, reads, broken)


def mark_stale(store: Store, bank_id: str, models: Sequence[MentalModel]) -> None:
    """Set ``is_stale`` and ``staleness_reason`` (``{"kind": ...}`` or None) on every model of the page, in one
    batched read."""
    if not models:
        return
    kinds = stale_kinds(store, bank_id, [probe_of(m) for m in models])
    for model in models:
        kind = kinds.get(model.id, NEVER_REFRESHED)
        model.is_stale = kind is not None
        model.staleness_reason = None if kind is None else {"kind": kind}


def explain_staleness(store: Store, bank_id: str, model: MentalModel, *, sample: int = 20) -> None:
    """Fill in ``model.staleness_reason`` (already ``{"kind"}`` from :func:`mark_stale`) for one model:
    ``since`` (its watermark, ISO), ``count`` and ``memory_ids`` (at most ``sample``, newest first) of the memories
    behind the reason — in-scope memories written since the watermark, cited memories deleted or out of the scope
    it reads, or facts carried over. Two reads at most; only a model's GET asks for it, never a list."""
    reason = model.staleness_reason
    if not reason:
        return
    since = watermark_of(model)
    ids: list[str] = []
    count = 0
    if reason["kind"] == IN_SCOPE_WRITES:
        written = replace(staleness_scope(model), updated_after=since)
        memories, count = store.list_memories(bank_id, written, query=None, limit=sample, offset=0)
        ids = [m.id for m in memories]
    elif reason["kind"] == CITED_MEMORY_GONE:
        cited = cited_ids(model.structured_document)
        found = {m.id: m for m in store.get_memories(bank_id, cited)}
        scope = model_scope(model.tags, model.trigger)
        lost = [i for i in cited if i not in found or not admits(scope, found[i].tags, found[i].fact_type)]
        count, ids = len(lost), lost[:sample]
    elif reason["kind"] == CARRIED_OVER:
        carried = list(model.refresh_state.carried_over)
        count, ids = len(carried), carried[:sample]
    model.staleness_reason = {**reason, "since": to_iso(since), "count": count, "memory_ids": ids}
