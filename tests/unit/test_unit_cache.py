"""The per-bank cache of memories read by id: keyed by the bank's memory state, bounded in size."""

from __future__ import annotations

from datetime import UTC, datetime

from mindbank.domain.records import MemoryUnit
from mindbank.store.unit_cache import UnitCache

T = datetime(2024, 1, 1, tzinfo=UTC)


def unit(memory_id: str, text: str = "x") -> MemoryUnit:
    return MemoryUnit(
        id=memory_id, bank_id="b", text=text, fact_type="world", tags=(), context=None, metadata={},
        document_id=None, chunk_id=None, occurred_start=None, occurred_end=None, mentioned_at=None,
        created_at=T, updated_at=T,
    )  # fmt: skip


def test_kept_memories_come_back_under_the_same_state_only() -> None:
    cache = UnitCache()
    assert cache.get("b", (1, "t1"), ["a", "b"]) == ({}, ["a", "b"])
    cache.put("b", (1, "t1"), [unit("a", "first")])
    found, missing = cache.get("b", (1, "t1"), ["b", "a"])
    assert found["a"].text == "first" and missing == ["b"]
    assert cache.get("b", (2, "t2"), ["a"]) == ({}, ["a"])  # a write moved the state: read again
    cache.put("b", (1, "t1"), [unit("a", "stale")])  # a reader that saw the older state comes late: not kept
    assert cache.get("b", (2, "t2"), ["a"]) == ({}, ["a"])
    assert cache.get("other", (1, "t1"), ["a"]) == ({}, ["a"])  # banks apart


def test_forget_and_the_bound() -> None:
    cache = UnitCache(max_units=3)
    cache.get("b", 1, [])
    cache.put("b", 1, [unit("a")])
    cache.forget("b")
    assert cache.get("b", 1, ["a"]) == ({}, ["a"])
    cache.get("c", 1, [])
    cache.put("c", 1, [unit("x"), unit("y")])
    cache.get("b", 1, [])
    cache.put("b", 1, [unit("a"), unit("z")])  # four in all: the least recently read bank goes
    assert cache.get("c", 1, ["x"])[1] == ["x"] and set(cache.get("b", 1, ["a", "z"])[0]) == {"a", "z"}
    cache.put("b", 1, [unit(str(n)) for n in range(5)])  # one bank past the bound starts over
    assert cache.get("b", 1, ["a"])[1] == ["a"]
