"""A queued retain in bounded parts, each written in its own transaction with the cursor it reached.

A large retain (a 1 MB document is about 2,500 facts) is not split, embedded and written as one unit: it is walked
item by item, chunk by chunk, and cut into parts of at most ``part_facts`` facts. Each part is embedded with one
embedder call and written with one ``write_documents`` transaction that also stores the :class:`RetainCursor` after
it (the operation's progress, through the claim fence). A worker that dies, or steps aside, resumes at the cursor:
no fact is written twice and none is lost.

Resuming must rebuild exactly what the cursor counted, so everything here is a function of the operation: document
ids (for items without one) and chunk ids derive from the operation id and positions (``uuid5``); chunks come from
:func:`~mindbank.domain.text.split_chunks` and, with the extractive engine, facts from
:func:`~mindbank.domain.text.split_facts`, both deterministic, so a part may end inside a chunk. An LLM extractor is
not deterministic, so with one a part ends only at a chunk boundary (whole chunks go to the extractor, in windows of
about ``WINDOW_CHARS``), and a resumed item re-extracts only chunks not yet written.

The first part that touches an item writes its document row and ALL its chunks (replace or append, as the item
says); later parts of the same item are ``continuation`` writes that add facts only.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from mindbank.domain.records import Chunk, FactType, NewMemory, RetainItem
from mindbank.domain.text import split_chunks, split_facts
from mindbank.engine.retain.extractive import Extractor, new_memory
from mindbank.providers.embeddings.base import Embedder, embed_texts
from mindbank.store.base import DocumentWrite

PART_FACTS = 256  # facts per part: one embedder call and one write transaction (~1 s of embedding on 2 cores)
WINDOW_CHARS = 32_000  # chunk text handed to an LLM extractor at once
_IDS = uuid.UUID("6f1c7a52-1d0e-4c55-9d7e-5b0ad1c0f3a9")  # namespace of the ids derived from an operation


@dataclass(frozen=True, slots=True)
class RetainCursor:
    """How far a queued retain has been written: items before ``item`` completely; in item ``item``, the facts of
    chunks before ``chunk`` and the first ``fact`` facts of chunk ``chunk``; ``started``: item ``item``'s document
    row and chunks are written. ``memories``: facts written so far by all parts."""

    item: int = 0
    chunk: int = 0
    fact: int = 0
    started: bool = False
    memories: int = 0

    def to_json(self) -> dict[str, Any]:
        """The operation's ``progress`` value."""
        return {"item": self.item, "chunk": self.chunk, "fact": self.fact, "started": self.started,
                "memories": self.memories}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> RetainCursor:
        """The cursor stored as ``progress`` (None or an empty value: the start)."""
        if not data:
            return cls()
        return cls(
            item=int(data.get("item", 0)),
            chunk=int(data.get("chunk", 0)),
            fact=int(data.get("fact", 0)),
            started=bool(data.get("started", False)),
            memories=int(data.get("memories", 0)),
        )


@dataclass(frozen=True, slots=True)
class RetainPart:
    """One transaction's worth: the documents to write (embedded) and the cursor once they are written."""

    documents: list[DocumentWrite]
    after: RetainCursor

    @property
    def facts(self) -> int:
        return sum(len(d.memories) for d in self.documents)


@dataclass(slots=True)
class _Segment:
    """The facts of one item that go into the part being built (``start``: it also writes document and chunks)."""

    index: int
    item: RetainItem
    document_id: str
    start: bool
    chunks: list[Chunk]
    facts: list[tuple[str, str, FactType | None]] = field(default_factory=list)  # (chunk id, text, kind)
    ends: bool = False  # the item's last facts are in this segment (nothing of it follows)
    restate: bool = False  # a stored document with the same content: no facts, a restatement


def derived_id(operation_id: str, *path: int) -> uuid.UUID:
    """A stable id for a position inside an operation (an item's document, a chunk)."""
    return uuid.uuid5(_IDS, "/".join([operation_id, *map(str, path)]))


def _facts(
    item: RetainItem, texts: Sequence[str], start_chunk: int, start_fact: int, extract: Extractor | None
) -> Iterator[tuple[int, int, str | None, FactType | None]]:
    """``(chunk, fact number, text, kind)`` from ``(start_chunk, start_fact)`` on, and ``(chunk, n, None, None)``
    after the last fact of each chunk (a boundary where an LLM-extracted part may end)."""
    chunk = start_chunk
    while chunk < len(texts):
        if extract is None:
            window = [chunk]
            found: list[list[tuple[str, FactType | None]]] = [[(f, None) for f in split_facts(texts[chunk])]]
        else:
            size, end = 0, chunk
            while end < len(texts) and (end == chunk or size + len(texts[end]) <= WINDOW_CHARS):
                size += len(texts[end])
                end += 1
            window = list(range(chunk, end))
            found = extract(item, [texts[k] for k in window])
        for k, facts in zip(window, found, strict=True):
            first = start_fact if k == start_chunk else 0
            for number in range(first, len(facts)):
                text, kind = facts[number]
                yield k, number, text, kind
            yield k, len(facts), None, None
        chunk = window[-1] + 1


def retain_parts(
    items: Sequence[RetainItem],
    embedder: Embedder,
    *,
    operation_id: str,
    cursor: RetainCursor,
    now: datetime,
    extract: Extractor | None = None,
    part_facts: int | None = None,
    restate: Collection[int] = (),
) -> Iterator[RetainPart]:
    """The parts of a queued retain from ``cursor`` on, each embedded just before it is yielded (write one before
    asking for the next). ``now``: the mention time of items without a timestamp (pass the operation's creation
    time, so a resumed operation stamps its facts alike). ``part_facts`` defaults to :data:`PART_FACTS`. Items
    whose index is in ``restate`` (a stored document with the same content; never the item a resumed cursor is
    inside) are not split: their write is a restatement (``DocumentWrite.restate``), in the part that reaches them."""
    part_facts = part_facts or PART_FACTS
    segments: list[_Segment] = []
    pending = 0  # facts in segments
    written = cursor.memories
    position = cursor
    for index in range(cursor.item, len(items)):
        item = items[index]
        document_id = item.document_id or str(derived_id(operation_id, index))
        texts = split_chunks(item.content)
        resuming = index == cursor.item
        started = resuming and cursor.started
        chunks = [Chunk(derived_id(operation_id, index, k).hex, document_id, k, t) for k, t in enumerate(texts)]
        if index in restate and not started and item.document_id is not None:
            segments.append(_Segment(index, item, document_id, True, [], ends=True, restate=True))
            position = RetainCursor(index + 1, 0, 0, False, written)
            continue
        segment = _Segment(index, item, document_id, not started, [] if started else chunks)
        segments.append(segment)
        first_chunk, first_fact = (cursor.chunk, cursor.fact) if resuming else (0, 0)
        for chunk, number, text, kind in _facts(item, texts, first_chunk, first_fact, extract):
            if text is not None:
                segment.facts.append((chunks[chunk].id, text, kind))
                pending += 1
                position = RetainCursor(index, chunk, number + 1, True, written)
                cut = extract is None
            else:
                position = RetainCursor(index, chunk + 1, 0, True, written)
                cut = True
            if cut and pending >= part_facts:
                part = _embed(segments, embedder, now, replace(position, memories=written + pending), operation_id)
                written += pending
                yield part
                segments, pending = [], 0
                segment = _Segment(index, item, document_id, False, [])
                segments.append(segment)
        segment.ends = True
        position = RetainCursor(index + 1, 0, 0, False, written)
    if segments and (pending or any(s.start for s in segments)):
        yield _embed(segments, embedder, now, replace(position, memories=written + pending), operation_id)


def _embed(
    segments: list[_Segment], embedder: Embedder, now: datetime, after: RetainCursor, operation_id: str
) -> RetainPart:
    texts = [text for s in segments for _, text, _ in s.facts]
    vectors = embed_texts(embedder, texts)
    cursor = 0
    documents: list[DocumentWrite] = []
    for s in segments:
        if not s.start and not s.facts:
            continue
        memories: list[NewMemory] = []
        for chunk_id, text, kind in s.facts:
            memories.append(new_memory(s.item, text, kind, vectors[cursor], s.document_id, chunk_id, now))
            cursor += 1
        documents.append(
            DocumentWrite(
                s.item, s.document_id, s.chunks, memories, operation_id=operation_id, continuation=not s.start,
                whole=s.ends, restate=s.restate,
            )
        )  # fmt: skip
    return RetainPart(documents, after)
