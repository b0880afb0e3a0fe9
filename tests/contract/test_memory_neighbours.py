"""Recall's neighbour expansion on both backends: the store's nearest-moment lookup (``memory_neighbours``) and the
hybrid pipeline bringing in a turn that no retriever returned."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.engine.recall import FusionParams, RecallRequest, recall
from mindbank.store.base import DocumentWrite, MemoryFilter, Store
from mindbank.store.shared import NEIGHBOURS_PER_SIDE

T0 = datetime(2024, 6, 1, 12, tzinfo=UTC)
AXIS = np.array([1, 0, 0, 0], np.float32)


def turn(
    text: str, at: datetime | None, *, context: str | None = "chat 1", vector: npt.NDArray[np.float32] = AXIS,
    tags: tuple[str, ...] = (), pieces: int = 1,
) -> DocumentWrite:  # fmt: skip
    """One document whose ``pieces`` facts share the moment ``at`` (a long turn split in parts)."""
    document_id = uuid.uuid4().hex
    chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=0, text=text)
    memories = [_memory(f"{text} ({n})" if pieces > 1 else text, at, context, vector, tags, document_id, chunk.id)
                for n in range(pieces)]  # fmt: skip
    item = RetainItem(content=text, tags=tags, document_id=document_id, context=context)
    return DocumentWrite(item=item, document_id=document_id, chunks=[chunk], memories=memories)


def _memory(
    text: str, at: datetime | None, context: str | None, vector: npt.NDArray[np.float32], tags: tuple[str, ...],
    document_id: str, chunk_id: str,
) -> NewMemory:  # fmt: skip
    return NewMemory(
        text=text, fact_type="world", embedding=vector, tags=tags, context=context, metadata={},
        document_id=document_id, chunk_id=chunk_id, occurred_start=None, occurred_end=None, mentioned_at=at,
    )  # fmt: skip


def test_memory_neighbours_returns_the_nearest_moment_on_each_side(store: Store) -> None:
    s = timedelta(seconds=1)
    ids = store.write_documents(
        "b",
        [
            turn("two before", T0 - 2 * s),
            turn("just before", T0 - s, pieces=2),
            turn("the hit", T0),
            turn("just after", T0 + s, tags=("private",)),
            turn("two after", T0 + 2 * s),
            turn("same moment, other session", T0 - s, context="chat 2"),
            turn("far after", T0 + timedelta(hours=3)),
        ],
    )
    before, after, two_after = ids[1], ids[3][0], ids[4][0]
    found = [m.id for m in store.memory_neighbours("b", [("chat 1", T0)], 3600.0, MemoryFilter())]
    assert sorted(found) == sorted([*before, after])  # both pieces of the turn before, one turn after
    assert store.memory_neighbours("b", [("chat 1", T0)], 0.5, MemoryFilter()) == []  # beyond the window
    # the filter applies: the private turn is skipped and the next one after it is the nearest visible
    hidden = [m.id for m in store.memory_neighbours("b", [("chat 1", T0)], 3600.0, MemoryFilter(tags_match="exact"))]
    assert sorted(hidden) == sorted([*before, two_after])
    rows = store.memory_neighbours("b", [("chat 1", T0)], 3600.0, MemoryFilter())
    assert [m.id for m in rows][-1] == after  # before, then after
    assert rows[0].text.startswith("just before") and rows[0].mentioned_at == T0 - s  # whole rows
    assert store.memory_neighbours("other", [("chat 1", T0)], 3600.0, MemoryFilter()) == []
    assert store.memory_neighbours("b", [], 3600.0, MemoryFilter()) == []
    last = store.memory_neighbours("b", [("chat 1", T0 + timedelta(hours=3))], 3600.0, MemoryFilter())
    assert last == []  # nothing said within the hour on either side


def test_many_anchors_in_one_call_read_as_each_anchor_alone(store: Store) -> None:
    s = timedelta(seconds=1)
    writes = [turn(f"chat {c} turn {t}", T0 + t * s, context=f"chat {c}", tags=("private",) if t == 3 else ())
              for c in range(3) for t in range(6)]  # fmt: skip
    store.write_documents("b", writes)
    anchors = [(f"chat {c}", T0 + t * s) for c in range(3) for t in range(6)]
    for flt in (MemoryFilter(), MemoryFilter(tags_match="exact")):
        alone: list[str] = []
        for anchor in anchors:
            alone += [m.id for m in store.memory_neighbours("b", [anchor], 3600.0, flt) if m.id not in alone]
        together = [m.id for m in store.memory_neighbours("b", anchors, 3600.0, flt)]
        assert together == alone  # anchor by anchor, before then after, each memory once
    assert len(alone) == 3 * 5  # (filtered) every turn but the private ones, which the filter hides


def test_a_side_reads_at_most_its_cap_of_the_pieces_of_one_moment(store: Store) -> None:
    pieces = NEIGHBOURS_PER_SIDE + 4
    ids = store.write_documents("b", [turn("long turn", T0, pieces=pieces), turn("reply", T0 + timedelta(seconds=1))])
    found = [
        m.id for m in store.memory_neighbours("b", [("chat 1", T0 + timedelta(seconds=1))], 3600.0, MemoryFilter())
    ]
    assert len(found) == NEIGHBOURS_PER_SIDE and set(found) <= set(ids[0])


class _AxisEmbedder:
    dimension = 4
    name = "axis"

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return np.tile(AXIS, (len(texts), 1))


def test_hybrid_recall_brings_in_the_turn_after_a_hit(store: Store) -> None:
    s = timedelta(seconds=1)
    away = np.array([0, 1, 0, 0], np.float32)
    store.write_documents(
        "b",
        [
            # only the dense arm finds the question (the lexical arm would find the reply by its preceding text)
            turn("Ann: what did you make last week?", T0),
            turn("Bo: a sunset over the lake", T0 + s, vector=-AXIS),  # nothing in common with the query
            *(turn(f"Cy: distractor {n}", T0 + n * timedelta(days=1), context=f"chat {n + 2}", vector=away)
              for n in range(4)),
        ],
    )  # fmt: skip
    request = RecallRequest(query="paint", limit=3)
    shipped = [h.memory.text for h in recall(store, _AxisEmbedder(), "b", request, candidates=2)]
    assert shipped[:2] == ["Ann: what did you make last week?", "Bo: a sunset over the lake"]
    off = FusionParams(expand_top=0)
    plain = [h.memory.text for h in recall(store, _AxisEmbedder(), "b", request, candidates=2, fusion=off)]
    assert "Bo: a sunset over the lake" not in plain
