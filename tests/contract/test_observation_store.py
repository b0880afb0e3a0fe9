"""Observation history, scopes and the reference's deletes, on every backend."""

from __future__ import annotations

from dataclasses import replace

from test_store import doc, vec

from mindbank.domain.records import NewMemory
from mindbank.store.base import MemoryFilter, Store
from mindbank.store.ports.observations import OBSERVATION_HISTORY_CAP


def observation(text: str, sources: tuple[str, ...], tags: tuple[str, ...] = ()) -> NewMemory:
    return NewMemory(
        text=text, fact_type="observation", embedding=vec(1, 1, 0, 0), tags=tags, context=None, metadata={},
        document_id=None, chunk_id=None, occurred_start=None, occurred_end=None, mentioned_at=None,
        source_memory_ids=sources, proof_count=len(sources),
    )  # fmt: skip


def bank_with_observations(store: Store) -> tuple[list[str], list[str]]:
    """Three facts; observations: A (facts 0 and 1, tagged x), B (fact 1, tagged x), C (fact 2, untagged)."""
    facts = [i for (i,) in store.write_documents("b", [doc("one"), doc("two"), doc("three")])]
    obs = store.write_consolidation(  # type: ignore[attr-defined]
        "b",
        creates=[observation("A", (facts[0], facts[1]), ("x",)), observation("B", (facts[1],), ("x",)),
                 observation("C", (facts[2],))],
        updates=[], consolidated_ids=facts,
    )  # fmt: skip
    return facts, obs


def test_consolidation_changes_leave_history_newest_first_and_capped(store: Store) -> None:
    facts, (a, _, _) = bank_with_observations(store)
    assert store.observation_history("b", a) == []  # created, never changed
    store.write_consolidation("b", creates=[], updates=[(a, (facts[0], facts[1], facts[2]), 3)], consolidated_ids=[])  # type: ignore[attr-defined]
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=[], rewrites=[(a, "A2", vec(0, 1, 0, 0))])  # type: ignore[attr-defined]
    history = store.observation_history("b", a)
    assert [(h.previous_text, h.previous_source_memory_ids) for h in history] == [
        ("A", (facts[0], facts[1], facts[2])), ("A", (facts[0], facts[1])),
    ]  # fmt: skip
    assert history[0].changed_at == store.bank_last_memory_write_at("b")
    assert history[0].changed_at > history[1].changed_at
    for i in range(OBSERVATION_HISTORY_CAP + 2):
        store.write_consolidation(
            "b", creates=[], updates=[], consolidated_ids=[], rewrites=[(a, f"A{i + 3}", vec(0, 1, 0, 0))]
        )  # type: ignore[attr-defined]
    history = store.observation_history("b", a)
    assert len(history) == OBSERVATION_HISTORY_CAP and history[0].previous_text == f"A{OBSERVATION_HISTORY_CAP + 3}"
    assert store.observation_history("other", a) == [] and store.observation_history("b", facts[0]) == []
    store.delete_observations("b")
    assert store.observation_history("b", a) == []  # the history goes with its observation


def test_observation_scopes_most_populous_first_with_total(store: Store) -> None:
    bank_with_observations(store)
    scopes, total = store.observation_scopes("b", 100, 0)
    assert [(s.tags, s.count) for s in scopes] == [(("x",), 2), ((), 1)] and total == 2
    page, total = store.observation_scopes("b", 1, 1)
    assert [(s.tags, s.count) for s in page] == [((), 1)] and total == 2
    assert store.observation_scopes("b", 10, 5) == ([], 2)
    assert store.observation_scopes("nobody", 10, 0) == ([], 0)


def test_delete_observations_derived_from_a_memory(store: Store) -> None:
    facts, (a, b, c) = bank_with_observations(store)
    assert [o.id for o in store.derived_observations("b", facts[1])] == [a, b]
    assert store.derived_observations("b", a) == [] and store.derived_observations("other", facts[1]) == []
    before = store.bank_last_memory_write_at("b")
    assert store.delete_observations("b", derived_from=facts[1]) == 2
    assert [o.id for o in store.list_observations("b")] == [c]  # type: ignore[attr-defined]
    # the memory and every source of what was deleted go back to consolidation; facts and C's source stay done
    assert [m.id for m in store.unconsolidated_facts("b", 10)] == [facts[0], facts[1]]  # type: ignore[attr-defined]
    stamp = store.bank_last_memory_write_at("b")
    assert stamp is not None and before is not None and stamp > before  # a memory write: citing models go stale
    assert store.get_memories("b", [a, b]) == []
    assert store.vector_search("b", vec(1, 1, 0, 0), 5, MemoryFilter(fact_types=("observation",)))[0][0] == c
    # nothing drawn from it: nothing deleted, no write, but the memory is sent back to consolidation
    assert store.delete_observations("b", derived_from=facts[2]) == 1
    assert store.delete_observations("b", derived_from=facts[2]) == 0
    assert store.bank_last_memory_write_at("b") > stamp  # type: ignore[operator]


def test_delete_all_observations_resets_consolidation(store: Store) -> None:
    facts, _ = bank_with_observations(store)
    assert store.delete_observations("b") == 3
    assert store.list_observations("b") == []  # type: ignore[attr-defined]
    assert [m.id for m in store.unconsolidated_facts("b", 10)] == facts  # type: ignore[attr-defined]
    stamp = store.bank_last_memory_write_at("b")
    assert store.delete_observations("b") == 0 and store.bank_last_memory_write_at("b") == stamp
    assert store.delete_observations("nobody") == 0


def test_clear_memories_by_type_or_all(store: Store) -> None:
    facts, obs = bank_with_observations(store)
    experience = store.write_documents("b", [doc("lived", fact_type="experience")])[0][0]
    assert store.clear_memories("b", "experience") == 1
    assert store.get_memories("b", [experience]) == []
    assert len(store.get_memories("b", [*facts, *obs])) == 6
    assert store.clear_memories("b", "experience") == 0
    stamp = store.bank_last_memory_write_at("b")
    assert store.clear_memories("b") == 6
    assert store.get_memories("b", [*facts, *obs]) == []
    assert (
        store.list_documents(
            "b",
            query=None,
            tags=(),
            tags_match="any",
            time_field="created_at",
            start=None,
            end=None,
            limit=10,
            offset=0,
        )[1]
        == 0
    )
    assert store.bank_last_memory_write_at("b") > stamp  # type: ignore[operator]
    assert store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter()) == []
    assert store.clear_memories("nobody") == 0
    # the bank itself stays, and takes new memories
    assert store.write_documents("b", [replace(doc("again"))])


def test_a_restated_observation_carries_its_history_on(store: Store) -> None:
    facts, (a, _, _) = bank_with_observations(store)
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=[], rewrites=[(a, "A1", vec(0, 1, 0, 0))])  # type: ignore[attr-defined]
    (successor,) = store.write_consolidation(  # type: ignore[attr-defined]
        "b", creates=[observation("A2", (facts[0],), ("x",))], updates=[], consolidated_ids=[], deletes=[a],
        successors=[(a, 0)],
    )  # fmt: skip
    assert store.get_memories("b", [a]) == []
    history = store.observation_history("b", successor)
    assert [(h.previous_text, h.previous_source_memory_ids) for h in history] == [
        ("A1", (facts[0], facts[1])), ("A", (facts[0], facts[1])),
    ]  # fmt: skip
    assert store.observation_history("b", a) == []


def test_delete_memory_is_a_write_that_leaves_every_index(store: Store) -> None:
    kept, gone = (i for (i,) in store.write_documents("b", [doc("kept", vector=vec(0, 1, 0, 0)), doc("gone")]))
    stamp = store.bank_last_memory_write_at("b")
    assert store.delete_memory("nobody", gone) is False and store.delete_memory("b", "nope") is False
    assert store.bank_last_memory_write_at("b") == stamp  # nothing deleted, no write
    assert store.delete_memory("b", gone) is True
    assert store.bank_last_memory_write_at("b") > stamp  # type: ignore[operator]
    assert store.get_memories("b", [kept, gone]) == store.get_memories("b", [kept])
    assert [i for i, _ in store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter())] == [kept]
    assert store.keyword_search("b", ["gone"], 5, MemoryFilter()) == []
    assert store.delete_memory("b", gone) is False
