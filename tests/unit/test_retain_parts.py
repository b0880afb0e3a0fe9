"""A queued retain in checkpointed parts: resuming at any committed cursor writes exactly the facts not yet written,
in both engines (the extractive splitter may cut inside a chunk; an LLM extractor only between chunks)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from mindbank.domain.records import FactType, RetainItem
from mindbank.domain.text import split_facts
from mindbank.engine.retain.parts import RetainCursor, RetainPart, retain_parts
from mindbank.providers.embeddings.base import embed_texts

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class HashEmbedder:
    """Deterministic 8-d vectors from a text's hash (counts the texts it embeds)."""

    dimension = 8
    name = "hash"

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], np.uint8).astype(np.float32) for t in texts]
        return np.array(rows, np.float32).reshape(len(texts), 8)


def sentence(n: int) -> str:
    return f"Sentence number {n} says something about topic {n % 7} in twelve words or so."


ITEMS = [
    RetainItem(content="Ada: a short turn."),
    RetainItem(  # three paragraphs, the middle one long enough for several facts
        content="\n\n".join(
            [" ".join(sentence(n) for n in range(3)), " ".join(sentence(n) for n in range(3, 40)), sentence(40)]
        ),
        document_id="long",
        update_mode="append",
    ),
    RetainItem(content="Bo: another short turn.", tags=("t",)),
]


def llm_extract(item: RetainItem, chunks: Sequence[str]) -> list[list[tuple[str, FactType | None]]]:
    """An extractor that turns every chunk into its sentences (one fact each), typed by the item's rule."""
    return [[(s, None) for s in split_facts(c, max_words=15)] for c in chunks]


def facts_of(parts: list[RetainPart]) -> list[tuple[str, str, str | None]]:
    return [(d.document_id, m.text, m.chunk_id) for p in parts for d in p.documents for m in d.memories]


def run(cursor: RetainCursor, extract=None, part_facts: int = 2) -> list[RetainPart]:  # type: ignore[no-untyped-def]
    return list(
        retain_parts(ITEMS, HashEmbedder(), operation_id="op-1", cursor=cursor, now=NOW, extract=extract,
                     part_facts=part_facts)
    )  # fmt: skip


@pytest.mark.parametrize("extract", [None, llm_extract], ids=["extractive", "llm"])
def test_resuming_at_every_cursor_writes_exactly_the_rest(extract) -> None:  # type: ignore[no-untyped-def]
    whole = run(RetainCursor(), extract)
    everything = facts_of(whole)
    assert len(whole) >= 3 and len(everything) == len(set(everything))  # several parts, no fact twice
    assert whole[-1].after.memories == len(everything)
    assert facts_of(run(RetainCursor(), extract, part_facts=10_000)) == everything  # the same facts in one part
    for k, part in enumerate(whole):
        if extract is not None:
            assert part.after.fact == 0  # LLM parts end between chunks
        rest = run(part.after, extract)
        assert facts_of(whole[: k + 1]) + facts_of(rest) == everything
        if rest:
            assert rest[-1].after.memories == len(everything)


def test_each_document_is_begun_once_and_continued_after() -> None:
    parts = run(RetainCursor())
    begun = [d.document_id for p in parts for d in p.documents if not d.continuation]
    assert len(begun) == len(set(begun)) == 3  # every item's document row and chunks are written once
    for p in parts:
        for d in p.documents:
            assert bool(d.chunks) != d.continuation  # a start writes all chunks; a continuation none
    long_start = next(d for p in parts for d in p.documents if d.document_id == "long" and not d.continuation)
    assert [c.index for c in long_start.chunks] == [0, 1, 2]
    ids = {m.chunk_id for p in parts for d in p.documents if d.document_id == "long" for m in d.memories}
    assert ids == {c.id for c in long_start.chunks}


def test_ids_and_times_are_functions_of_the_operation() -> None:
    one, two = run(RetainCursor()), run(RetainCursor())
    assert [d.document_id for p in one for d in p.documents] == [d.document_id for p in two for d in p.documents]
    assert all(m.mentioned_at == NOW for p in one for d in p.documents for m in d.memories)
    other = list(retain_parts(ITEMS, HashEmbedder(), operation_id="op-2", cursor=RetainCursor(), now=NOW))
    assert other[0].documents[0].document_id != one[0].documents[0].document_id  # no document_id: per operation
    assert RetainCursor.from_json(one[1].after.to_json()) == one[1].after
    assert RetainCursor.from_json(None) == RetainCursor()


def test_embed_texts_asks_the_embedder_for_nothing_only_when_there_are_texts() -> None:
    class Counting:
        dimension = 4
        name = "counting"

        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            self.calls.append(list(texts))
            return np.ones((len(texts), self.dimension), dtype=np.float32)

    embedder = Counting()
    empty = embed_texts(embedder, [])
    assert empty.shape == (0, 4) and empty.dtype == np.float32 and embedder.calls == []
    assert embed_texts(embedder, ["a", "b"]).shape == (2, 4) and embedder.calls == [["a", "b"]]
