"""Contract: re-embedding a bank. Vectors of a target model are staged per memory (against the text embedded), the
bank keeps its vectors and recorded model until one transaction switches both, a memory written or edited after its
part makes the switch refuse (nothing changed) until it is staged too, and a memory write embedded with a model that
is no longer the bank's is refused under the bank lock."""

from __future__ import annotations

import numpy as np
import pytest
from test_store import doc, vec

from mindbank.errors import EmbeddingModelMismatchError
from mindbank.store.base import MemoryFilter, ReembedCounts, Store

OLD = vec(1, 0, 0, 0)


def new_vector(text: str) -> np.ndarray:
    """The target model's vector of ``text`` (distinct from OLD, and per text)."""
    return vec(0, 1, len(text) % 5 + 1, 0)


def _bank(store: Store, texts: list[str]) -> list[str]:
    ids = [i for written in store.write_documents("b", [doc(t) for t in texts], model=("old", 4)) for i in written]
    assert store.bank_embedding_model("b") == ("old", 4)
    return ids


def _stage_all(store: Store, model: str = "new", batch: int = 2) -> int:
    parts = 0
    while pending := store.reembed_pending("b", model, batch):
        store.reembed_stage("b", model, [(m, t, new_vector(t)) for m, t in pending])
        parts += 1
    return parts


def _vectors(store: Store, ids: list[str]) -> dict[str, np.ndarray]:
    return store.memory_vectors("b", ids)


def test_staging_leaves_the_bank_alone_until_the_switch_commits(store: Store) -> None:
    ids = _bank(store, ["alpha one", "beta three", "gamma seven", "delta eleven", "epsilon"])
    assert store.reembed_counts("b", "new").total == 5 and store.reembed_counts("b", "new").staged == 0
    first = store.reembed_pending("b", "new", 2)
    assert len(first) == 2 and first == sorted(first)
    store.reembed_stage("b", "new", [(m, t, new_vector(t)) for m, t in first])
    assert store.reembed_counts("b", "new").staged == 2
    assert [m for m, _ in store.reembed_pending("b", "new", 10)] == sorted(set(ids) - {m for m, _ in first})
    rest = sorted(set(ids) - {m for m, _ in first})
    # a keyset cursor reads on past an id
    assert [m for m, _ in store.reembed_pending("b", "new", 10, after=rest[0])] == rest[1:]
    # a partial staging never switches; the bank is wholly on the old model
    assert store.commit_reembed("b", "new", 4) is False
    assert all(np.allclose(v, OLD) for v in _vectors(store, ids).values())
    assert store.bank_embedding_model("b") == ("old", 4)
    assert _stage_all(store) == 2  # resumes with the three left: 2 + 1
    assert store.commit_reembed("b", "new", 4) is True
    memories, _ = store.list_memories("b", MemoryFilter(), query=None, limit=10, offset=0)
    vectors = _vectors(store, ids)
    assert all(np.allclose(vectors[m.id], new_vector(m.text)) for m in memories)
    assert store.bank_embedding_model("b") == ("new", 4)
    assert store.reembed_counts("b", "new").staged == 0  # the staging rows went with the switch
    # the switched vectors are what search ranks by
    hits = store.vector_search("b", new_vector("gamma seven"), 5, MemoryFilter())
    assert hits and all(np.isclose(score, 1.0, atol=1e-4) for _, score in hits[:1])


def test_a_memory_written_or_edited_after_its_part_is_embedded_again_before_the_switch(store: Store) -> None:
    ids = _bank(store, ["alpha one", "beta three", "gamma seven"])
    _stage_all(store)
    late = store.write_documents("b", [doc("zeta arrived late")], model=("old", 4))[0]
    assert store.update_memory("b", ids[0], text="alpha one, edited", embedding=OLD) is True
    assert store.commit_reembed("b", "new", 4) is False  # nothing changed
    assert store.bank_embedding_model("b") == ("old", 4)
    assert {m for m, _ in store.reembed_pending("b", "new", 10)} == {ids[0], *late}
    _stage_all(store)
    assert store.commit_reembed("b", "new", 4) is True
    vectors = _vectors(store, [ids[0], *late])
    assert np.allclose(vectors[ids[0]], new_vector("alpha one, edited"))
    assert np.allclose(vectors[late[0]], new_vector("zeta arrived late"))


def test_a_deleted_memory_leaves_nothing_staged_and_the_switch_goes_on(store: Store) -> None:
    ids = _bank(store, ["alpha one", "beta three"])
    _stage_all(store)
    assert store.delete_memory("b", ids[1]) is True
    assert store.reembed_counts("b", "new").total == 1 == store.reembed_counts("b", "new").staged
    # staging a memory deleted since it was read is skipped, not an error
    store.reembed_stage("b", "new", [(ids[1], "beta three", new_vector("beta three"))])
    assert store.commit_reembed("b", "new", 4) is True
    assert list(_vectors(store, ids)) == [ids[0]]


def test_another_target_model_starts_over_and_discard_forgets(store: Store) -> None:
    _bank(store, ["alpha one", "beta three"])
    _stage_all(store, "new")
    store.reembed_begin("b", "other")
    assert store.reembed_counts("b", "new").staged == 0
    assert len(store.reembed_pending("b", "other", 10)) == 2
    _stage_all(store, "other")
    store.reembed_discard("b")
    assert store.reembed_counts("b", "other").staged == 0
    assert store.bank_embedding_model("b") == ("old", 4)


def test_a_write_embedded_with_a_model_the_bank_no_longer_has_is_refused(store: Store) -> None:
    _bank(store, ["alpha one"])
    _stage_all(store)
    assert store.commit_reembed("b", "new", 4) is True
    before = store.count_memories("b")
    with pytest.raises(EmbeddingModelMismatchError) as refused:
        store.write_documents("b", [doc("written with the old model")], model=("old", 4))
    assert "'old'" in str(refused.value) and "'new'" in str(refused.value)
    assert store.count_memories("b") == before
    store.write_documents("b", [doc("written with the new model", vector=new_vector("x"))], model=("new", 4))
    assert store.count_memories("b") == before + 1
    # a bank's first write records the model it was embedded with
    store.write_documents("c", [doc("first")], model=("new", 4))
    assert store.bank_embedding_model("c") == ("new", 4)


def test_deleting_a_bank_takes_its_staged_vectors(store: Store) -> None:
    _bank(store, ["alpha one", "beta three"])
    _stage_all(store)
    assert store.delete_bank("b") == 2
    store.write_documents("b", [doc("gamma seven")], model=("old", 4))
    assert store.reembed_counts("b", "new") == ReembedCounts(total=1, staged=0)
