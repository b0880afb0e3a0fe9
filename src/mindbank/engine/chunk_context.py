"""The text around a recall result: the chunks just before and just after the chunk each result came from.

A conversation turn read alone often makes no sense ("Yes, twice a week!"); the turn it answers, or the one that
answers it, does. For a result extracted from chunk ``i`` of a document, the neighbours are chunks ``i - 1`` and
``i + 1`` of that document; where the document has no chunk on a side (a turn retained as its own document, as
conversation importers do), the neighbour on that side is the chunk of the memory said at the nearest earlier
(later) moment in the same context, within the recall neighbour window (an hour), that passes the request's
filter, so the caller sees nothing a recall with that filter would not show it. The result's own chunk is not a
neighbour of itself, and neighbours are context only: they are not results and carry no score.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from mindbank.domain.document import count_tokens
from mindbank.domain.document.model import clip_tokens
from mindbank.domain.records import MemorySource, MemoryUnit, ScoredMemory
from mindbank.domain.scope import MemoryFilter
from mindbank.engine.neighbours import NEIGHBOUR_WINDOW_S
from mindbank.store.base import Store

Side = Literal["before", "after"]
SIDES: tuple[Side, Side] = ("before", "after")


@dataclass(frozen=True, slots=True)
class NeighbourChunk:
    """A chunk beside a result's chunk: ``of_chunk`` is the result's own chunk id, ``side`` where this one sits."""

    of_chunk: str
    side: Side
    chunk_id: str
    text: str
    chunk_index: int


def result_chunks(
    store: Store, bank_id: str, hits: Sequence[ScoredMemory], flt: MemoryFilter, *, max_tokens: int, neighbours: bool
) -> dict[str, dict[str, Any]]:
    """Recall's ``include.chunks``: the chunk each hit came from, keyed by chunk id, in hit order, ``{id, text,
    chunk_index, truncated}``, texts cut so that together they fit ``max_tokens``. With ``neighbours``, once every
    hit's own chunk is in, the chunks beside them (:func:`neighbour_chunks`, which keeps to ``flt``) follow with
    what the budget has left, each also carrying ``neighbour_of`` and ``side``."""
    sources = store.memory_sources(bank_id, [h.memory.id for h in hits], documents=False)
    out: dict[str, dict[str, Any]] = {}
    left = max_tokens
    for source in sources:
        if source.chunk_id is None or source.chunk_text is None or source.chunk_id in out or left <= 0:
            continue
        text, truncated = clip_tokens(source.chunk_text, left)
        left -= count_tokens(text)
        out[source.chunk_id] = {"id": source.chunk_id, "text": text, "chunk_index": source.chunk_index or 0,
                                "truncated": truncated}  # fmt: skip
    if not neighbours or left <= 0:
        return out
    for chunk in neighbour_chunks(store, bank_id, hits, sources, flt):
        if chunk.chunk_id in out:
            continue
        text, truncated = clip_tokens(chunk.text, left)
        left -= count_tokens(text)
        out[chunk.chunk_id] = {"id": chunk.chunk_id, "text": text, "chunk_index": chunk.chunk_index,
                               "truncated": truncated, "neighbour_of": chunk.of_chunk, "side": chunk.side}  # fmt: skip
        if left <= 0:
            break
    return out


def neighbour_chunks(
    store: Store,
    bank_id: str,
    hits: Sequence[ScoredMemory],
    sources: Sequence[MemorySource],
    flt: MemoryFilter,
    *,
    window_s: float = NEIGHBOUR_WINDOW_S,
) -> list[NeighbourChunk]:
    """The chunks before and after each hit's chunk, in hit order (before, then after); each chunk once, and never
    a chunk some hit came from. ``sources``: the hits' chunks (``Store.memory_sources``). Hits without a chunk
    (observations) have none. Three store reads whatever the number of hits: the documents' adjacent chunks
    (:meth:`Store.chunks_at`), one neighbour lookup for the sides the documents left over
    (:meth:`Store.memory_neighbours`) and one read of those memories' chunks."""
    own = {s.memory_id: s for s in sources if s.chunk_id is not None}
    taken = {s.chunk_id for s in own.values()}
    anchors: dict[str, tuple[ScoredMemory, MemorySource]] = {}  # result chunk id -> its first hit and source
    for hit in hits:
        source = own.get(hit.memory.id)
        if source is not None and source.chunk_id is not None and source.chunk_id not in anchors:
            anchors[source.chunk_id] = (hit, source)  # several facts of one turn: the chunk is looked at once
    beside = _document_sides(store, bank_id, [source for _, source in anchors.values()])
    found: dict[tuple[str, Side], NeighbourChunk] = {}  # (result chunk id, side) -> neighbour
    pending: list[tuple[ScoredMemory, str, Side]] = []  # sides the document did not fill
    for chunk_id, (hit, _) in anchors.items():
        for side in SIDES:
            chunk = beside.get((chunk_id, side))
            if chunk is None:
                pending.append((hit, chunk_id, side))
            else:
                found[(chunk_id, side)] = chunk
    found.update(_session_sides(store, bank_id, pending, flt, window_s))
    out: list[NeighbourChunk] = []
    for hit in hits:
        source = own.get(hit.memory.id)
        for side in SIDES:
            chunk = None if source is None or source.chunk_id is None else found.get((source.chunk_id, side))
            if chunk is not None and chunk.chunk_id not in taken:
                taken.add(chunk.chunk_id)
                out.append(chunk)
    return out


def _document_sides(
    store: Store, bank_id: str, sources: Sequence[MemorySource]
) -> dict[tuple[str, Side], NeighbourChunk]:
    """For each source's chunk ``i``: chunks ``i - 1`` (``before``) and ``i + 1`` (``after``) of its document, keyed
    by (the source's chunk id, side); sides the document has no chunk on are left out. One store read for all
    (:meth:`Store.chunks_at`)."""
    wanted: dict[tuple[str, int], list[tuple[str, Side]]] = {}  # (document, index) -> the sides it would fill
    for source in sources:
        if source.document_id is None or source.chunk_id is None:
            continue
        index = source.chunk_index or 0
        if index > 0:
            wanted.setdefault((source.document_id, index - 1), []).append((source.chunk_id, "before"))
        wanted.setdefault((source.document_id, index + 1), []).append((source.chunk_id, "after"))
    out: dict[tuple[str, Side], NeighbourChunk] = {}
    for chunk in store.chunks_at(bank_id, list(wanted)):
        for of_chunk, side in wanted.get((chunk.document_id, chunk.index), ()):
            out[(of_chunk, side)] = NeighbourChunk(of_chunk, side, chunk.id, chunk.text, chunk.index)
    return out


def _session_sides(
    store: Store,
    bank_id: str,
    pending: Sequence[tuple[ScoredMemory, str, Side]],
    flt: MemoryFilter,
    window_s: float,
) -> dict[tuple[str, Side], NeighbourChunk]:
    """For each ``(hit, its chunk id, side)``: the chunk of the memory said at the nearest moment on that side in
    the hit's context (:meth:`Store.memory_neighbours`); sides with no such memory or chunk are left out."""
    anchors: dict[str, tuple[str, datetime]] = {}
    for hit, _, _ in pending:
        when = hit.memory.moment
        if hit.memory.context is not None and when is not None:
            anchors[hit.memory.id] = (hit.memory.context, when)
    if not anchors:
        return {}
    nearby = store.memory_neighbours(bank_id, list(dict.fromkeys(anchors.values())), window_s, flt)
    # per context, each moment's first memory read (the pieces of one turn share a moment) and the moments in order:
    # a result list of a hundred hits asks two sides each, so each side is a bisection, not a scan of every memory
    first: dict[str, dict[datetime, MemoryUnit]] = {}
    for memory in nearby:
        if memory.context is not None and memory.moment is not None:
            first.setdefault(memory.context, {}).setdefault(memory.moment, memory)
    times = {context: sorted(moments) for context, moments in first.items()}
    picked: dict[tuple[str, Side], MemoryUnit] = {}
    for hit, chunk_id, side in pending:
        anchor = anchors.get(hit.memory.id)
        if anchor is None or anchor[0] not in times:
            continue
        context, when = anchor
        line = times[context]
        at = bisect.bisect_left(line, when) - 1 if side == "before" else bisect.bisect_right(line, when)
        if 0 <= at < len(line):
            picked[(chunk_id, side)] = first[context][line[at]]
    chunks = {s.memory_id: s for s in store.memory_sources(bank_id, [m.id for m in picked.values()], documents=False)}
    out: dict[tuple[str, Side], NeighbourChunk] = {}
    for (chunk_id, side), memory in picked.items():
        source = chunks.get(memory.id)
        if source is not None and source.chunk_id is not None and source.chunk_text is not None:
            out[(chunk_id, side)] = NeighbourChunk(
                chunk_id, side, source.chunk_id, source.chunk_text, source.chunk_index or 0
            )
    return out
