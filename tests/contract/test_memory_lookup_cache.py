"""Lookups by id keep the memories they read until the bank's next memory write (``store/unit_cache.py``), on both
backends: whatever wrote (this store, or another process's store on the same database), the next lookup returns
the memories as they are now: edited, retagged, deleted, or those of a bank deleted and made again."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from test_memory_neighbours import AXIS, T0, turn

from mindbank.store.base import MemoryFilter, Store
from mindbank.store.open import open_store


def _same_database(store: Store) -> Store:
    """A second store on ``store``'s database: what another process (a worker, another server) writes through."""
    location = getattr(store, "path", None) or store.url  # type: ignore[attr-defined]
    return open_store(location, dimension=len(AXIS))


def _texts(store: Store, ids: list[str]) -> list[str]:
    return [m.text for m in store.get_memories("b", ids)]


def test_a_lookup_sees_every_write_since_the_last_one(store: Store) -> None:
    s = timedelta(seconds=1)
    ids = [i for group in store.write_documents("b", [turn(f"turn {n}", T0 + n * s) for n in range(4)]) for i in group]
    assert _texts(store, ids) == ["turn 0", "turn 1", "turn 2", "turn 3"]
    assert _texts(store, ids[::-1]) == ["turn 3", "turn 2", "turn 1", "turn 0"]  # kept ones, in the order asked

    store.update_memory("b", ids[0], text="turn 0, edited", embedding=AXIS)
    assert _texts(store, ids[:2]) == ["turn 0, edited", "turn 1"]
    assert store.delete_memory("b", ids[1])
    assert _texts(store, ids) == ["turn 0, edited", "turn 2", "turn 3"]

    other = _same_database(store)
    try:  # another process's writes: an edit, a retag, a deletion
        other.update_memory("b", ids[2], text="turn 2, edited elsewhere", embedding=AXIS)
        assert _texts(store, ids) == ["turn 0, edited", "turn 2, edited elsewhere", "turn 3"]
        document = store.get_memories("b", [ids[3]])[0].document_id
        assert document is not None and other.retag_document("b", document, ["private"])
        assert store.get_memories("b", [ids[3]])[0].tags == ("private",)
        assert other.delete_memory("b", ids[3])
        assert _texts(store, ids) == ["turn 0, edited", "turn 2, edited elsewhere"]
    finally:
        other.close()


def test_a_bank_made_again_is_read_again(store: Store) -> None:
    first = [i for group in store.write_documents("b", [turn("the old bank's turn", T0)]) for i in group]
    assert _texts(store, first) == ["the old bank's turn"]
    store.delete_bank("b")
    assert store.get_memories("b", first) == []
    other = _same_database(store)
    try:
        fresh = [i for group in other.write_documents("b", [turn("the new bank's turn", T0)]) for i in group]
    finally:
        other.close()
    assert _texts(store, first) == [] and _texts(store, fresh) == ["the new bank's turn"]


def test_neighbours_come_back_as_they_are_now(store: Store) -> None:
    s = timedelta(seconds=1)
    ids = [i for group in store.write_documents("b", [turn(f"turn {n}", T0 + n * s) for n in range(3)]) for i in group]
    around = [m.text for m in store.memory_neighbours("b", [("chat 1", T0 + s)], 3600.0, MemoryFilter())]
    assert around == ["turn 0", "turn 2"]
    store.update_memory("b", ids[0], text="turn 0, edited", embedding=np.asarray(AXIS))
    around = [m.text for m in store.memory_neighbours("b", [("chat 1", T0 + s)], 3600.0, MemoryFilter())]
    assert around == ["turn 0, edited", "turn 2"]
