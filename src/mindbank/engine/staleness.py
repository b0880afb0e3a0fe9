"""Staleness: one rule, batched. Spec: "Staleness Gating".

A model is stale iff a memory in its resolved scope (tags with the strict variant of its match mode, fact types)
was written after its watermark, or a memory its document cites was deleted or left the scope it reads (beyond
the reference, which documents deletions as invisible). The watermark is ``last_memory_seen_at`` or, before the
first refresh, ``last_refreshed_at`` (set to ``created_at`` at insert). Memories still awaiting consolidation
count. A page of models is one SQL statement (see ``Store.stale_flags``), plus one more only when a memory it
cites was written since a watermark (to judge whether it left the scope).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from mindbank.domain.records import MentalModel
from mindbank.domain.scope import MemoryFilter, model_scope
from mindbank.store.base import StalenessProbe, Store


def staleness_scope(model: MentalModel) -> MemoryFilter:
    """The filter whose writes make ``model`` stale."""
    return model_scope(model.tags, model.trigger, for_staleness=True)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def watermark_of(model: MentalModel) -> datetime:
    """What staleness compares against: the epoch for a cleared model (any in-scope memory counts until it is
    rebuilt), else ``last_memory_seen_at``, else ``last_refreshed_at`` (= ``created_at`` before the first refresh)."""
    if model.cleared_at is not None:
        return EPOCH
    return model.last_memory_seen_at or model.last_refreshed_at


def mark_stale(store: Store, bank_id: str, models: Sequence[MentalModel]) -> None:
    """Set ``is_stale`` on every model of the page, in one batched store call."""
    if not models:
        return
    probes = [StalenessProbe(m.id, watermark_of(m), staleness_scope(m), model_scope(m.tags, m.trigger)) for m in models]
    flags = store.stale_flags(bank_id, probes)
    for model in models:
        model.is_stale = flags.get(model.id, True)
