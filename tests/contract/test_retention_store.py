"""Repeats, restatements and consolidation neighbours on every backend (issue 13): a fact retained again is one fact
with a mention count, an unchanged document re-retained changes nothing, and consolidation finds earlier facts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from store_testing import stale_flags

from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.repeats import repeat_key
from mindbank.domain.scope import MemoryFilter
from mindbank.store.base import DocumentChanged, DocumentWrite, StalenessProbe, Store

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def vec(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def loose(text: str, *, when: datetime = T0, tags: tuple[str, ...] = (), vector: np.ndarray | None = None,
          whole: bool = True) -> DocumentWrite:  # fmt: skip
    """A retained item without document_id, as prepare_documents writes it: a fresh document id, keyed facts."""
    document_id = uuid.uuid4().hex
    item = RetainItem(content=text, timestamp=when, tags=tags)
    chunk = Chunk(uuid.uuid4().hex, document_id, 0, text)
    memory = NewMemory(
        text=text, fact_type="world", embedding=vec(1, 0, 0, 0) if vector is None else vector, tags=tags,
        context=None, metadata={}, document_id=document_id, chunk_id=chunk.id, occurred_start=when,
        occurred_end=when, mentioned_at=when, repeat_key=repeat_key(text, "world", tags, {}),
    )  # fmt: skip
    return DocumentWrite(item, document_id, [chunk], [memory], whole=whole)


def named(document_id: str, text: str, *, tags: tuple[str, ...] = (), metadata: dict[str, str] | None = None,
          when: datetime | None = T0, restate: bool = False) -> DocumentWrite:  # fmt: skip
    item = RetainItem(content=text, timestamp=when, tags=tags, metadata=metadata or {}, document_id=document_id)
    if restate:
        return DocumentWrite(item, document_id, [], [], restate=True)
    chunk = Chunk(uuid.uuid4().hex, document_id, 0, text)

    def fact(i: int, sentence: str) -> NewMemory:
        return NewMemory(
            text=sentence, fact_type="world", embedding=vec(1, i, 0, 0), tags=tags, context=None,
            metadata=dict(metadata or {}), document_id=document_id, chunk_id=chunk.id, occurred_start=when,
            occurred_end=when, mentioned_at=when or T0,
        )  # fmt: skip

    return DocumentWrite(item, document_id, [chunk], [fact(i, s) for i, s in enumerate(text.split(". "))])


def test_the_same_text_again_is_one_fact_with_two_mentions_and_a_write(store: Store) -> None:
    ((first,),) = store.write_documents("b", [loose("Rex is my dog.")])
    before = store.bank_last_memory_write_at("b")
    ((again,),) = store.write_documents("b", [loose("  rex IS   my dog.", when=T0 + timedelta(days=3))])
    assert again == first and store.count_memories("b") == 1
    (fact,) = store.get_memories("b", [first])
    assert fact.mention_count == 2 and fact.last_mentioned_at == T0 + timedelta(days=3)
    assert fact.mentioned_at == T0 and fact.text == "Rex is my dog."  # the first mention's text and time stay
    after = store.bank_last_memory_write_at("b")
    assert before is not None and after is not None and after > before and fact.updated_at == after
    # an older mention retained late counts, but last_mentioned_at keeps the newest
    store.write_documents("b", [loose("Rex is my dog.", when=T0 - timedelta(days=1))])
    (fact,) = store.get_memories("b", [first])
    assert fact.mention_count == 3 and fact.last_mentioned_at == T0 + timedelta(days=3)
    # the repeat left no document behind: only the first retain's document exists
    documents, total = store.list_documents(
        "b", query=None, tags=(), tags_match="any", time_field="updated_at", start=None, end=None, limit=10, offset=0
    )
    assert total == 1 and documents[0].id == fact.document_id


def test_repeats_within_one_write_and_other_tags_or_texts_are_new_facts(store: Store) -> None:
    ids = store.write_documents(
        "b", [loose("Rex is my dog."), loose("Rex is my dog."), loose("Rex is my dog.", tags=("t",)),
              loose("Rex is my dog!")],
    )  # fmt: skip
    assert ids[0] == ids[1] and len({i for (i,) in ids}) == 3
    assert store.get_memories("b", ids[0])[0].mention_count == 2


def test_a_repeat_stales_the_models_whose_scope_holds_the_fact(store: Store) -> None:
    store.write_documents("b", [loose("Rex is my dog.", tags=("user:ann",)), loose("Unrelated.", tags=("x",))])
    since = store.bank_last_memory_write_at("b")
    ann = MemoryFilter(tags=("user:ann",), tags_match="all_strict")
    other = MemoryFilter(tags=("x",), tags_match="all_strict")
    probes = [StalenessProbe("ann", since, ann), StalenessProbe("other", since, other)]
    assert stale_flags(store, "b", probes) == {"ann": False, "other": False}
    store.write_documents("b", [loose("Rex is my dog.", tags=("user:ann",))])
    assert stale_flags(store, "b", probes) == {"ann": True, "other": False}
    # the repeated fact is a memory written since the watermark (what a delta refresh and the relevance gate read)
    window = MemoryFilter(tags=("user:ann",), tags_match="all_strict", updated_after=since)
    assert [m.text for m in store.list_memories("b", window, query=None, limit=10, offset=0)[0]] == ["Rex is my dog."]


def test_a_vector_search_sees_the_restamped_fact_in_time_windows(store: Store) -> None:
    store.write_documents("b", [loose("Rex is my dog.")])
    since = store.bank_last_memory_write_at("b")
    assert store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter(updated_after=since)) == []
    store.write_documents("b", [loose("Rex is my dog.")])
    assert len(store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter(updated_after=since))) == 1


def test_an_unchanged_document_restated_changes_nothing(store: Store) -> None:
    (ids,) = store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("t",), metadata={"k": "v"})])
    stamp = store.bank_last_memory_write_at("b")
    events = store.list_document_events("b", "d1", limit=50, offset=0)
    assert store.document_hashes("b", ["d1", "nope"]).keys() == {"d1"}
    (again,) = store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("t",), metadata={"k": "v"},
                                                 restate=True)])  # fmt: skip
    assert again == ids
    assert store.bank_last_memory_write_at("b") == stamp
    assert store.list_document_events("b", "d1", limit=50, offset=0) == events
    assert [m.updated_at for m in store.get_memories("b", ids)] == [stamp, stamp]
    # no timestamp means "keep the stored time"
    store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("t",), metadata={"k": "v"}, when=None,
                                      restate=True)])  # fmt: skip
    assert store.bank_last_memory_write_at("b") == stamp


def test_a_restatement_with_new_tags_or_metadata_updates_in_place(store: Store) -> None:
    (ids,) = store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("t",), metadata={"k": "v"})])
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=ids)
    stamp = store.bank_last_memory_write_at("b")
    (again,) = store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("u",), metadata={"k": "w"},
                                                 when=T0 + timedelta(days=1), restate=True)])  # fmt: skip
    assert again == ids
    after = store.bank_last_memory_write_at("b")
    assert stamp is not None and after is not None and after > stamp
    for m in store.get_memories("b", ids):
        assert m.tags == ("u",) and m.metadata == {"k": "w"} and m.updated_at == after
        assert m.occurred_start == T0 + timedelta(days=1)
    assert store.get_document("b", "d1").tags == ("u",)  # type: ignore[union-attr]
    assert {m.id for m in store.unconsolidated_facts("b", 10)} == set(ids)  # new tags: consolidated again
    kinds = [e.kind for e in store.list_document_events("b", "d1", limit=50, offset=0)[0]]  # newest first
    assert kinds == ["update", "retain"]
    # the vector index follows the new tags
    assert len(store.vector_search("b", vec(1, 0, 0, 0), 5, MemoryFilter(tags=("u",), tags_match="all_strict"))) == 2
    # metadata alone: in place too, and the facts stay consolidated
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=ids)
    store.write_documents("b", [named("d1", "Ann sails. Ann cooks", tags=("u",), metadata={"k": "x"},
                                      when=T0 + timedelta(days=1), restate=True)])  # fmt: skip
    assert [m.metadata for m in store.get_memories("b", ids)] == [{"k": "x"}, {"k": "x"}]
    assert store.unconsolidated_facts("b", 10) == []


def test_a_restatement_of_changed_content_writes_nothing(store: Store) -> None:
    store.write_documents("b", [named("d1", "Ann sails")])
    stamp = store.bank_last_memory_write_at("b")
    with pytest.raises(DocumentChanged):
        store.write_documents("b", [named("d2", "Bo rows"), named("d1", "Ann rows", restate=True)])
    with pytest.raises(DocumentChanged):
        store.write_documents("b", [named("gone", "x", restate=True)])
    assert store.bank_last_memory_write_at("b") == stamp and store.get_document("b", "d2") is None


def test_consolidated_neighbours_are_facts_already_seen_in_the_scope(store: Store) -> None:
    ((old,), (other,), (tagged,)) = store.write_documents(
        "b", [loose("Ann sails.", vector=vec(1, 0.1, 0, 0)), loose("Bo rows.", vector=vec(0, 1, 0, 0)),
              loose("Ann sails too.", vector=vec(1, 0, 0, 0), tags=("t",))],
    )  # fmt: skip
    probe = (vec(1, 0, 0, 0), MemoryFilter(tags=(), tags_match="exact"))
    assert store.consolidated_neighbours("b", [probe], 3) == [[]]  # nothing consolidated yet
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=[old, other, tagged])
    ((pending,),) = store.write_documents("b", [loose("Ann sails!", vector=vec(1, 0, 0, 0))])
    (hits,) = store.consolidated_neighbours("b", [probe], 3)
    assert [i for i, _ in hits] == [old, other] and hits[0][1] == pytest.approx(float(vec(1, 0.1, 0, 0)[0]), 1e-4)
    per_tag = (vec(1, 0, 0, 0), MemoryFilter(tags=("t",), tags_match="all_strict"))
    assert [[i for i, _ in h] for h in store.consolidated_neighbours("b", [per_tag, probe], 1)] == [[tagged], [old]]
    assert pending not in {i for i, _ in hits}


def test_a_fact_whose_text_or_tags_were_edited_takes_no_more_repeats(store: Store) -> None:
    ((first,),) = store.write_documents("b", [loose("Rex is my dog.")])
    assert store.update_memory("b", first, metadata={"k": "v"})  # metadata alone: still the text retained
    ((again,),) = store.write_documents("b", [loose("Rex is my dog.")])
    assert again == first
    assert store.update_memory("b", first, text="Rex is my old dog.", embedding=vec(1, 0, 0, 0))
    ((third,),) = store.write_documents("b", [loose("Rex is my dog.")])
    assert third != first and [m.mention_count for m in store.get_memories("b", [first, third])] == [2, 1]
