"""Contract: re-embedding a bank. Vectors of a target model are staged per memory (against the text embedded), the
bank keeps its vectors and recorded model until one transaction switches both, a memory written or edited after its
part makes the switch refuse (nothing changed) until it is staged too, and a memory write embedded with a model that
is no longer the bank's is refused under the bank lock. The target model may have another width: one database holds
banks of several widths, each searched with its own."""

from __future__ import annotations

import numpy as np
import pytest
from postgres_testing import DatabaseFactory
from test_store import doc, vec

from mindbank.errors import EmbeddingModelMismatchError
from mindbank.store.base import MemoryFilter, ReembedCounts, Store
from mindbank.store.open import open_store

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


def wide_vector(text: str) -> np.ndarray:
    """A 6-dimension target model's vector of ``text``."""
    return vec(0, 0, 0, 1, len(text) % 5 + 1, len(text) % 3)


def _reopened(store: Store, dimension: int) -> Store:
    """The same database opened by a server configured for a model ``dimension`` wide."""
    location = getattr(store, "url", None) or getattr(store, "path", None)
    return open_store(str(location), dimension=dimension)


def test_a_bank_moves_to_a_model_of_another_width_and_the_others_keep_theirs(store: Store) -> None:
    texts = ["alpha one", "beta three", "gamma seven", "delta eleven"]
    ids = _bank(store, texts)
    other = store.write_documents("c", [doc("the other bank stays", vector=vec(0, 0, 1, 0))], model=("old", 4))[0]
    # the server restarts configured for the wider model: the database opens for it, the banks keep their width
    wide = _reopened(store, 6)
    try:
        while pending := wide.reembed_pending("b", "wide", 3):
            wide.reembed_stage("b", "wide", [(m, t, wide_vector(t)) for m, t in pending])
        # until the switch the bank is searched with its old model's vectors
        assert wide.vector_search("b", OLD, 10, MemoryFilter())[0][0] in ids
        assert all(v.shape == (4,) for v in _vectors(wide, ids).values())
        assert wide.commit_reembed("b", "wide", 6) is True
        assert wide.bank_embedding_model("b") == ("wide", 6)
        vectors = _vectors(wide, ids)
        assert all(np.allclose(vectors[m], wide_vector(t)) for m, t in zip(ids, texts, strict=True))
        hits = wide.vector_search("b", wide_vector("gamma seven"), 2, MemoryFilter())
        assert {m for m, _ in hits} <= set(ids) and np.isclose(hits[0][1], 1.0, atol=1e-3)
        # the other bank is still on its 4-wide model, searched with it, and only its own memories come back
        assert wide.bank_embedding_model("c") == ("old", 4)
        assert [m for m, _ in wide.vector_search("c", vec(0, 0, 1, 0), 10, MemoryFilter())] == other
        # a write of the bank's new width goes in; so does one of the other bank's own width
        wide.write_documents("b", [doc("epsilon", vector=wide_vector("epsilon"))], model=("wide", 6))
        wide.write_documents("c", [doc("zeta", vector=vec(0, 1, 0, 0))], model=("old", 4))
        assert wide.count_memories("b") == 5 and wide.count_memories("c") == 2
    finally:
        wide.close()


def test_postgres_searches_each_width_through_its_own_index(postgres_databases: DatabaseFactory) -> None:
    """Each width has its partial HNSW index, and a search of that width is planned through it (the width written
    into the SQL, so the planner can prove the index's condition)."""
    import psycopg

    from mindbank.store.postgres.migrate import embedding_index_name, nearest_sql
    from mindbank.store.postgres.queries import Q

    url = postgres_databases.create(4)
    try:
        narrow = open_store(url, dimension=4)
        narrow.write_documents("n", [doc(f"narrow {i}", vector=vec(1, i, 0, 0)) for i in range(30)], model=("m4", 4))
        narrow.close()
        wide = open_store(url, dimension=6)  # a server of another model: the width gets its index as it opens
        wide.write_documents("w", [doc(f"wide {i}", vector=wide_vector("x" * i)) for i in range(30)], model=("m6", 6))
        wide.close()
        with psycopg.connect(url, autocommit=True) as conn:
            # a 60-row table: a scan and a sort would be cheaper, so rule them out to see which index serves
            for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                conn.execute(f"SET {setting} = off")
            for bank, query in (("n", vec(1, 2, 0, 0)), ("w", wide_vector("xx"))):
                literal = "[" + ",".join(str(float(x)) for x in query) + "]"
                sql = nearest_sql(Q["vector_search"], "TRUE", len(query))
                plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, (literal, bank, literal, 5)).fetchall())
                assert embedding_index_name(len(query)) in plan, plan
                rows = conn.execute(sql, (literal, bank, literal, 5)).fetchall()
                assert len(rows) == 5
    finally:
        postgres_databases.drop(url)
