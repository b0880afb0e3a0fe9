"""The SQLite store's in-process vector indexes: kept in step with this process's writes without rebuilding,
dropped when a write rolls back, and bounded in memory however many banks are searched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import DocumentWrite, MemoryFilter
from mindbank.store.fence import Fence, LeaseLost, fenced
from mindbank.store.sqlite import connection
from mindbank.store.sqlite.store import SQLiteStore
from mindbank.store.sqlite.vector_index import VectorIndex


def vec(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32) / np.linalg.norm(xs)


def doc(text: str, *, vector: np.ndarray) -> DocumentWrite:
    chunk = Chunk(id=f"c-{text}", document_id=f"d-{text}", index=0, text=text)
    memory = NewMemory(
        text=text, fact_type="world", embedding=vector, tags=(), context=None, metadata={}, document_id=f"d-{text}",
        chunk_id=chunk.id, occurred_start=None, occurred_end=None, mentioned_at=utcnow(),
    )  # fmt: skip
    return DocumentWrite(RetainItem(content=text), f"d-{text}", [chunk], [memory])


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(str(tmp_path / "i.db"), dimension=4)


def test_own_writes_advance_the_cached_index_and_a_rollback_drops_it(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    real = VectorIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        VectorIndex, "build", classmethod(lambda cls, d, rows: builds.append(len(rows)) or real(cls, d, rows))
    )
    store.write_documents("b", [doc("one", vector=vec(1, 0, 0, 0))])
    assert [i for i, _ in store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter())]
    store.write_documents("b", [doc("two", vector=vec(0, 1, 0, 0))])
    hits = store.vector_search("b", vec(0, 1, 0, 0), 1, MemoryFilter())
    assert builds == [1] and store.get_memories("b", [hits[0][0]])[0].text == "two"  # advanced, not rebuilt

    # a write whose transaction rolls back (here: its worker lost the claim) leaves no row in the index
    with fenced(Fence("no-such-operation", "stale")), pytest.raises(LeaseLost):
        store.write_documents("b", [doc("three", vector=vec(0, 0, 1, 0))])
    found = store.vector_search("b", vec(0, 0, 1, 0), 5, MemoryFilter())
    assert {store.get_memories("b", [i])[0].text for i, _ in found} == {"one", "two"}


def test_the_index_cache_is_bounded(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for bank in ("a", "b", "c"):
        store.write_documents(bank, [doc(f"in {bank}", vector=vec(1, 0, 0, 0))])
        store.vector_search(bank, vec(1, 0, 0, 0), 1, MemoryFilter())
    one = store._indexes["a"][1].nbytes
    monkeypatch.setattr(connection, "INDEX_CACHE_BYTES", 2 * one)
    store.write_documents("d", [doc("in d", vector=vec(1, 0, 0, 0))])
    store.vector_search("d", vec(1, 0, 0, 0), 1, MemoryFilter())
    assert list(store._indexes) == ["c", "d"]  # the least recently searched banks went
    hit = store.vector_search("a", vec(1, 0, 0, 0), 1, MemoryFilter())  # rebuilt on demand
    assert store.get_memories("a", [hit[0][0]])[0].text == "in a" and len(store._indexes) == 2
