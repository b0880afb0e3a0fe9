"""Store behaviour every backend must show (run per backend through the ``store`` fixture)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from store_testing import stale_flags

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import Chunk, MentalModel, NewMemory, Operation, RetainItem
from mindbank.domain.tags import TAGS_MATCH_MODES, matches
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.domain.trigger import default_trigger
from mindbank.store.base import AlreadyExists, DocumentWrite, MemoryFilter, StalenessProbe, Store
from mindbank.store.postgres import migrate as postgres_migrate
from mindbank.store.sqlite import migrate as sqlite_migrate

DIM = 4


def vec(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def doc(text: str, *, tags: tuple[str, ...] = (), vector=None, document_id: str | None = None, mode="replace",
        fact_type="world") -> DocumentWrite:  # fmt: skip
    document_id = document_id or uuid.uuid4().hex
    item = RetainItem(content=text, tags=tags, document_id=document_id, update_mode=mode)
    chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=0, text=text)
    memory = NewMemory(
        text=text, fact_type=fact_type, embedding=vector if vector is not None else vec(1, 0, 0, 0), tags=tags,
        context=None, metadata={"k": "v"}, document_id=document_id, chunk_id=chunk.id, occurred_start=None,
        occurred_end=None, mentioned_at=utcnow(),
    )  # fmt: skip
    return DocumentWrite(item=item, document_id=document_id, chunks=[chunk], memories=[memory])


def model(bank: str = "b", model_id: str = "m1", tags: tuple[str, ...] = ()) -> MentalModel:
    now = utcnow()
    return MentalModel(
        id=model_id, bank_id=bank, name="n", source_query="q", content="", tags=tags, max_tokens=2048,
        trigger=default_trigger(), structured_document=None, reflect_response=None, last_refreshed_at=now,
        last_memory_seen_at=None, last_refreshed_source_query=None, last_refresh_failed_at=None,
        last_full_refreshed_at=None, created_at=now,
    )  # fmt: skip


def op(bank: str = "b", model_id: str | None = None, created_offset: float = 0.0) -> Operation:
    now = utcnow() + timedelta(seconds=created_offset)
    return Operation(
        id=str(uuid.uuid4()), bank_id=bank, operation_type="refresh_mental_model" if model_id else "batch_retain",
        status="pending", payload={}, result=None, error=None, retry_count=0, next_retry_at=None,
        mental_model_id=model_id, created_at=now, updated_at=now, completed_at=None,
    )  # fmt: skip


def test_write_creates_bank_and_stamps_strictly_increasing_times(store: Store) -> None:
    assert not store.bank_exists("b")
    store.write_documents("b", [doc("one")])
    first = store.bank_last_memory_write_at("b")
    store.write_documents("b", [doc("two")])
    second = store.bank_last_memory_write_at("b")
    assert store.bank_exists("b") and first is not None and second is not None and second > first


def test_concurrent_writers_never_share_or_reorder_stamps(store: Store) -> None:
    def writer(n: int) -> None:
        for i in range(10):
            store.write_documents("b", [doc(f"w{n}-{i}")])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count_memories("b") == 40
    wm = store.scope_watermark("b", MemoryFilter())
    assert wm == store.bank_last_memory_write_at("b")


def test_replace_and_append_document(store: Store) -> None:
    store.write_documents("b", [doc("old fact", document_id="d")])
    store.write_documents("b", [doc("new fact", document_id="d")])
    hits = store.keyword_search("b", ["fact"], 10, MemoryFilter())
    assert [m.text for m in store.get_memories("b", [h for h, _ in hits])] == ["new fact"]
    store.write_documents("b", [doc("extra fact", document_id="d", mode="append")])
    hits = store.keyword_search("b", ["fact"], 10, MemoryFilter())
    assert sorted(m.text for m in store.get_memories("b", [h for h, _ in hits])) == ["extra fact", "new fact"]
    # the vector index forgets replaced memories too
    assert len(store.vector_search("b", vec(1, 0, 0, 0), 10, MemoryFilter())) == 2


def test_vector_search_orders_by_cosine_and_filters(store: Store) -> None:
    store.write_documents(
        "b",
        [
            doc("north", vector=vec(1, 0, 0, 0), tags=("a",)),
            doc("north-east", vector=vec(1, 1, 0, 0), tags=("b",)),
            doc("east", vector=vec(0, 1, 0, 0), fact_type="experience"),
        ],
    )
    hits = store.vector_search("b", vec(1, 0.1, 0, 0), 3, MemoryFilter())
    texts = [m.text for m in store.get_memories("b", [h for h, _ in hits])]
    assert texts == ["north", "north-east", "east"]
    assert hits[0][1] > hits[1][1] > hits[2][1]
    only_exp = store.vector_search("b", vec(1, 0, 0, 0), 3, MemoryFilter(fact_types=("experience",)))
    assert [m.text for m in store.get_memories("b", [h for h, _ in only_exp])] == ["east"]


TAG_ROWS = {"t-a": ("a",), "t-b": ("b",), "t-ab": ("a", "b"), "t-none": ()}


@pytest.mark.parametrize("mode", TAGS_MATCH_MODES)
@pytest.mark.parametrize("wanted", [(), ("a",), ("a", "b"), ("c",)])
def test_tag_filters_match_the_domain_truth_table(store: Store, mode: str, wanted: tuple[str, ...]) -> None:
    store.write_documents("b", [doc(f"memo {name}", tags=tags) for name, tags in TAG_ROWS.items()])
    expected = {f"memo {n}" for n, tags in TAG_ROWS.items() if matches(tags, wanted, mode)}  # type: ignore[arg-type]
    flt = MemoryFilter(tags=wanted, tags_match=mode)  # type: ignore[arg-type]
    dense = {
        m.text for m in store.get_memories("b", [h for h, _ in store.vector_search("b", vec(1, 0, 0, 0), 10, flt)])
    }
    sparse = {m.text for m in store.get_memories("b", [h for h, _ in store.keyword_search("b", ["memo"], 10, flt)])}
    assert dense == expected
    assert sparse == expected


def test_time_bounds_and_watermark(store: Store) -> None:
    store.write_documents("b", [doc("first", tags=("a",))])
    cut = store.bank_last_memory_write_at("b")
    store.write_documents("b", [doc("second", tags=("a",))])
    store.write_documents("b", [doc("third", tags=("z",))])
    assert store.scope_watermark("b", MemoryFilter(tags=("a",), tags_match="all_strict", updated_before=cut)) == cut
    newer = store.keyword_search("b", ["first", "second", "third"], 10, MemoryFilter(updated_after=cut))
    assert sorted(m.text for m in store.get_memories("b", [h for h, _ in newer])) == ["second", "third"]
    assert store.scope_watermark("b", MemoryFilter(tags=("q",), tags_match="any_strict")) is None


def test_stale_flags_batch_equals_single_answers(store: Store) -> None:
    store.write_documents("b", [doc("a1", tags=("a",))])
    since = store.bank_last_memory_write_at("b")
    store.write_documents("b", [doc("b1", tags=("b",))])
    probes = [
        StalenessProbe("on-a", since, MemoryFilter(tags=("a",), tags_match="all_strict")),
        StalenessProbe("on-b", since, MemoryFilter(tags=("b",), tags_match="all_strict")),
        StalenessProbe("all", since, MemoryFilter()),
        StalenessProbe("never", None, MemoryFilter()),
        StalenessProbe("fresh", store.bank_last_memory_write_at("b"), MemoryFilter()),
        StalenessProbe("exp-only", since, MemoryFilter(fact_types=("experience",))),
    ]
    batch = stale_flags(store, "b", probes)
    assert batch == {"on-a": False, "on-b": True, "all": True, "never": True, "fresh": False, "exp-only": False}
    for p in probes:
        assert stale_flags(store, "b", [p]) == {p.mental_model_id: batch[p.mental_model_id]}


def test_a_cited_memory_leaving_the_read_scope_makes_the_citing_model_stale(store: Store) -> None:
    (ids,) = store.write_documents("b", [doc("Alice runs.", tags=("user:alice",))])
    document = parse_markdown(f"## Running\n\nAlice runs. [mem:{ids[0]}]\n").to_dict()
    for model_id in ("alice", "everyone"):
        store.insert_mental_model(model(model_id=model_id))
        m = store.get_mental_model("b", model_id)
        assert m is not None
        store.save_refresh(replace(m, structured_document=document, content="x"), history=None, history_cap=3)
    since = store.bank_last_memory_write_at("b")
    strict_alice = MemoryFilter(tags=("user:alice",), tags_match="all_strict")
    probes = [
        StalenessProbe("alice", since, strict_alice, read_scope=strict_alice),
        StalenessProbe("everyone", since, MemoryFilter(), read_scope=MemoryFilter()),
    ]
    assert stale_flags(store, "b", probes) == {"alice": False, "everyone": False}
    assert store.update_memory("b", ids[0], tags=["user:bob"])
    # out of alice's scope now, so the scope check alone would miss it; the citation check does not
    assert stale_flags(store, "b", probes) == {"alice": True, "everyone": True}
    assert stale_flags(store, "b", [replace(probes[0], read_scope=None)]) == {"alice": False}
    later = store.bank_last_memory_write_at("b")
    assert stale_flags(store, "b", [replace(probes[0], since=later)]) == {"alice": False}  # bank not written since


def test_citing_models_reads_the_citation_index(store: Store) -> None:
    ids = store.write_documents("b", [doc("Alice runs."), doc("Bob bakes.")])
    alice, bob = ids[0][0], ids[1][0]
    cites = {"both": [alice, bob], "alice-only": [alice], "none": []}
    for model_id, cited in cites.items():
        store.insert_mental_model(model(model_id=model_id))
        m = store.get_mental_model("b", model_id)
        assert m is not None
        text = "## Notes\n\n" + "".join(f"A fact. [mem:{i}]\n\n" for i in cited)
        store.save_refresh(replace(m, structured_document=parse_markdown(text).to_dict(), content="x"), history=None,
                           history_cap=3)  # fmt: skip
    assert store.citing_models("b", alice) == ["alice-only", "both"]
    assert store.citing_models("b", bob) == ["both"]
    assert store.delete_memory("b", alice)
    assert store.citing_models("b", alice) == ["alice-only", "both"]  # a deleted memory's citers stay until refreshed
    assert store.citing_models("other", bob) == [] and store.citing_models("b", "nope") == []


def test_mental_model_insert_conflict_get_list_and_history_cap(store: Store) -> None:
    store.insert_mental_model(model(model_id="m1", tags=("x",)))
    with pytest.raises(AlreadyExists):
        store.insert_mental_model(model(model_id="m1"))
    store.insert_mental_model(model(model_id="m2"))
    assert store.get_mental_model("b", "m1").tags == ("x",)  # type: ignore[union-attr]
    assert store.get_mental_model("b", "nope") is None
    items, total = store.list_mental_models("b", tags=("x",), tags_match="any", limit=10, offset=0)
    assert total == 1 and [m.id for m in items] == ["m1"]
    m1 = store.get_mental_model("b", "m1")
    assert m1 is not None
    for i in range(5):
        store.save_refresh(replace(m1, content=f"v{i}"), history={"previous_content": f"v{i - 1}"}, history_cap=3)
    store.save_refresh(m1, history={"kind": "refresh_failed", "outcome": "x"}, history_cap=3)
    history = store.list_history("b", "m1")
    assert len(history) == 4
    versions = [h.content["previous_content"] for h in history if "previous_content" in h.content]
    assert versions == ["v3", "v2", "v1"]
    # numbers are stored when written: trimming the two oldest rows renumbers none of those kept
    assert [h.version for h in history] == [None, 5, 4, 3]
    with pytest.raises(LookupError):
        store.save_refresh(model(model_id="gone"), history=None, history_cap=3)


def test_history_versions_start_at_the_empty_state_and_survive_trimming(store: Store) -> None:
    store.insert_mental_model(model(model_id="m1"))
    m1 = store.get_mental_model("b", "m1")
    assert m1 is not None
    previous = ""
    for i in range(4):
        store.save_refresh(replace(m1, content=f"v{i}"), history={"previous_content": previous}, history_cap=2)
        if i == 1:
            store.save_refresh(m1, history={"kind": "refresh_failed", "outcome": "x"}, history_cap=2)
        previous = f"v{i}"
    history = store.list_history("b", "m1")
    # the empty starting state is version 0; the failure record has no number and is trimmed on its own
    assert [(h.content.get("previous_content"), h.version) for h in history] == [
        ("v2", 3), ("v1", 2), (None, None),
    ]  # fmt: skip


def test_history_version_backfill_gives_the_numbers_shown_before(store: Store) -> None:
    """Migration 0091 numbers the history rows written before numbers were stored: each version row its position
    among the model's version rows kept, oldest first, from 0 when the oldest replaced the empty state."""
    for model_id, first in (("fresh", ""), ("trimmed", "v-1")):
        store.insert_mental_model(model(model_id=model_id))
        m = store.get_mental_model("b", model_id)
        assert m is not None
        previous = first
        for i in range(3):
            store.save_refresh(replace(m, content=f"v{i}"), history={"previous_content": previous}, history_cap=0)
            previous = f"v{i}"
        store.save_refresh(m, history={"kind": "refresh_failed", "outcome": "x"}, history_cap=0)
    backend = postgres_migrate if type(store).__name__ == "PostgresStore" else sqlite_migrate
    sql = next(text for number, _, text in backend.migrations() if number == 91)
    backfill = next(s for s in sql.split(";") if "UPDATE mental_model_history" in s)
    with store._tx() as conn:  # type: ignore[attr-defined]
        conn.execute("UPDATE mental_model_history SET version = NULL")
        conn.execute(backfill)
    numbers = {mid: [h.version for h in store.list_history("b", mid)] for mid in ("fresh", "trimmed")}
    assert numbers == {"fresh": [None, 2, 1, 0], "trimmed": [None, 3, 2, 1]}


def test_operations_claim_once_lease_expiry_and_per_model_serialization(store: Store) -> None:
    a1, a2, other = op(model_id="m1"), op(model_id="m1", created_offset=0.001), op(created_offset=0.002)
    for o in (a1, a2, other):
        store.submit_operation(o)
    first = store.claim_operation("w1", lease_seconds=60)
    assert first is not None and first.id == a1.id and first.status == "processing"
    second = store.claim_operation("w2", lease_seconds=60)
    assert second is not None and second.id == other.id  # a2 waits: m1 already has a running refresh
    assert store.claim_operation("w3", lease_seconds=60) is None
    store.finish_operation(first.id, status="completed", result={"ok": True}, error=None)
    third = store.claim_operation("w3", lease_seconds=-1)  # already-expired lease
    assert third is not None and third.id == a2.id
    reclaimed = store.claim_operation("w4", lease_seconds=60)
    assert reclaimed is not None and reclaimed.id == a2.id  # a dead worker's operation is taken over
    done = store.get_operation("b", a1.id)
    assert done is not None and done.status == "completed" and done.result == {"ok": True}


def test_retry_puts_operation_back_with_due_time(store: Store) -> None:
    o = op()
    store.submit_operation(o)
    claimed = store.claim_operation("w", 60)
    assert claimed is not None
    store.retry_operation(o.id, next_retry_at=utcnow() + timedelta(hours=1), error="boom")
    assert store.claim_operation("w", 60) is None
    again = store.get_operation("b", o.id)
    assert again is not None and again.status == "pending" and again.retry_count == 1 and again.error == "boom"


def test_no_row_commits_at_or_below_a_watermark_already_read(store: Store) -> None:
    """Invariant 3 under concurrency: once a reader has seen watermark W, every row stamped <= W is already visible.

    Writers race a reader that repeatedly reads the watermark and then everything at or below it; at the end the
    set of rows at or below each W read must be exactly what the reader saw right after reading W.
    """
    everything = ["fact"]
    observed: list[tuple[object, set[str]]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def snapshot(wm: object) -> set[str]:
        hits = store.keyword_search("b", everything, 10_000, MemoryFilter(updated_before=wm))  # type: ignore[arg-type]
        return {h for h, _ in hits}

    def reader() -> None:
        try:
            while not stop.is_set():
                wm = store.scope_watermark("b", MemoryFilter())
                if wm is not None:
                    observed.append((wm, snapshot(wm)))
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)

    def writer(n: int) -> None:
        try:
            for i in range(12):
                store.write_documents("b", [doc(f"fact w{n} n{i}"), doc(f"fact w{n} m{i}")])
        except BaseException as exc:
            errors.append(exc)

    store.write_documents("b", [doc("fact seed")])
    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors, errors
    assert store.count_memories("b") == 1 + 4 * 12 * 2
    assert observed, "the reader never ran"
    for wm, seen in observed:
        assert snapshot(wm) == seen, f"a row stamped at or below {wm} committed after that watermark was read"


def test_concurrent_claimers_run_at_most_one_operation_per_model(store: Store) -> None:
    """Many workers claiming at once: each operation is claimed once, and one model never has two running."""
    ops = [op(model_id=f"m{i % 3}", created_offset=i * 0.001) for i in range(9)]
    ops += [op(created_offset=0.02 + i * 0.001) for i in range(6)]
    for o in ops:
        store.submit_operation(o)
    claimed: list[Operation] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def claimer(n: int) -> None:
        barrier.wait()
        while (got := store.claim_operation(f"w{n}", lease_seconds=60)) is not None:
            with lock:
                claimed.append(got)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [c.id for c in claimed]
    assert len(ids) == len(set(ids))  # nobody claimed an operation twice
    per_model = [c.mental_model_id for c in claimed if c.mental_model_id is not None]
    assert sorted(per_model) == ["m0", "m1", "m2"]  # one running per model; the others wait their turn
    assert len(ids) == 3 + 6


def test_migrated_database_has_the_schema(store: Store) -> None:
    tables = set(store.dump())  # type: ignore[attr-defined]
    assert {
        "banks",
        "documents",
        "chunks",
        "memory_units",
        "mental_models",
        "mental_model_history",
        "operations",
        "schema_version",
        "file_storage",
        "file_storage_chunks",
    } <= tables
    versions = [row[0] for row in store.dump()["schema_version"]]  # type: ignore[attr-defined]
    # every shipped migration applied, in order (numbers are ranges reserved per change, so they may skip)
    backend = postgres_migrate if type(store).__name__ == "PostgresStore" else sqlite_migrate
    assert versions and versions == [number for number, _, _ in backend.migrations()]
    assert {"knowledge_nodes", "knowledge_page_vectors"} <= tables


def test_consolidation_round_trip(store: Store) -> None:
    """Observations are stamped memory writes; marking their source facts consolidated is bookkeeping only."""
    ids = [i for (i,) in store.write_documents("b", [doc("fact one", vector=vec(1, 0, 0, 0)), doc("fact two")])]
    pending = store.unconsolidated_facts("b", 10)  # type: ignore[attr-defined]
    assert [m.id for m in pending] == ids
    vectors = store.memory_vectors("b", [*ids, "missing"])  # type: ignore[attr-defined]
    assert set(vectors) == set(ids) and np.allclose(vectors[ids[0]], vec(1, 0, 0, 0))
    before = store.bank_last_memory_write_at("b")
    observation = NewMemory(
        text="an observation", fact_type="observation", embedding=vec(1, 1, 0, 0), tags=(), context=None,
        metadata={}, document_id=None, chunk_id=None, occurred_start=None, occurred_end=None, mentioned_at=None,
        source_memory_ids=(ids[0],), proof_count=1,
    )  # fmt: skip
    (obs_id,) = store.write_consolidation("b", creates=[observation], updates=[], consolidated_ids=[ids[0]])  # type: ignore[attr-defined]
    stamped = store.bank_last_memory_write_at("b")
    assert before is not None and stamped is not None and stamped > before
    assert [m.id for m in store.unconsolidated_facts("b", 10)] == [ids[1]]  # type: ignore[attr-defined]
    store.write_consolidation("b", creates=[], updates=[], consolidated_ids=[ids[1]])  # type: ignore[attr-defined]
    assert store.bank_last_memory_write_at("b") == stamped  # bookkeeping stamps nothing
    store.write_consolidation("b", creates=[], updates=[(obs_id, (ids[0], ids[1]), 2)], consolidated_ids=[])  # type: ignore[attr-defined]
    (obs,) = store.list_observations("b")  # type: ignore[attr-defined]
    assert obs.id == obs_id and obs.source_memory_ids == (ids[0], ids[1]) and obs.proof_count == 2
    assert obs.updated_at == store.bank_last_memory_write_at("b") and obs.updated_at > stamped
    assert store.unconsolidated_facts("b", 10) == []  # type: ignore[attr-defined]
    # an observation restated (new text and vector, found by keyword and vector search) and one deleted
    other = replace(observation, text="another observation", source_memory_ids=(ids[1],))
    (other_id,) = store.write_consolidation("b", creates=[other], updates=[], consolidated_ids=[])  # type: ignore[attr-defined]
    before_rewrite = store.bank_last_memory_write_at("b")
    store.write_consolidation(  # type: ignore[attr-defined]
        "b", creates=[], updates=[], consolidated_ids=[], rewrites=[(obs_id, "a restated lighthouse", vec(0, 0, 1, 0))],
        deletes=[other_id],
    )  # fmt: skip
    (kept,) = store.list_observations("b")  # type: ignore[attr-defined]
    assert kept.id == obs_id and kept.text == "a restated lighthouse" and kept.updated_at > before_rewrite  # type: ignore[operator]
    assert [h for h, _ in store.keyword_search("b", ["lighthouse"], 5, MemoryFilter())] == [obs_id]
    assert store.vector_search("b", vec(0, 0, 1, 0), 1, MemoryFilter(fact_types=("observation",)))[0][0] == obs_id
    assert store.get_memories("b", [other_id]) == []
    observations_only = MemoryFilter(fact_types=("observation",), tags=(), tags_match="exact")
    assert store.nearest_in("b", [(vec(0, 0, 1, 0), observations_only), (vec(1, 0, 0, 0), MemoryFilter())], 1) == [  # type: ignore[attr-defined]
        store.vector_search("b", vec(0, 0, 1, 0), 1, observations_only),
        store.vector_search("b", vec(1, 0, 0, 0), 1, MemoryFilter()),
    ]
    # what a round reads of the observations: those citing a fact that is gone or sent back to consolidation
    assert store.observations_losing_sources("b", []) == []  # type: ignore[attr-defined]
    assert [o.id for o in store.observations_losing_sources("b", [ids[1]])] == [obs_id]  # type: ignore[attr-defined]
    store.delete_memory("b", ids[0])
    assert [o.id for o in store.observations_losing_sources("b", [])] == [obs_id]  # type: ignore[attr-defined]


def test_an_observation_mentions_are_its_sources(store: Store) -> None:
    """A grown observation (and a new one of several sources) counts its sources as mentions, the newest last."""
    first, second = doc("fact one"), doc("fact two")
    first.memories[0] = replace(first.memories[0], mentioned_at=datetime(2024, 1, 1, tzinfo=UTC))
    second.memories[0] = replace(second.memories[0], mentioned_at=datetime(2024, 2, 1, tzinfo=UTC))
    ids = [i for (i,) in store.write_documents("b", [first, second])]
    observation = NewMemory(
        text="an observation", fact_type="observation", embedding=vec(1, 0, 0, 0), tags=(), context=None,
        metadata={}, document_id=None, chunk_id=None, occurred_start=None, occurred_end=None, mentioned_at=None,
        source_memory_ids=tuple(ids), proof_count=2,
    )  # fmt: skip
    (obs_id,) = store.write_consolidation("b", creates=[observation], updates=[], consolidated_ids=ids)  # type: ignore[attr-defined]
    (obs,) = store.get_memories("b", [obs_id])
    assert obs.mention_count == 2 and obs.last_mentioned_at == datetime(2024, 2, 1, tzinfo=UTC)
    store.write_consolidation("b", creates=[], updates=[(obs_id, (ids[0],), 1)], consolidated_ids=[])  # type: ignore[attr-defined]
    (obs,) = store.get_memories("b", [obs_id])
    assert obs.mention_count == 1 and obs.last_mentioned_at == datetime(2024, 1, 1, tzinfo=UTC)


def test_coalescing_deferral_injected_clock_and_trigger_lookup(store: Store) -> None:
    first = replace(op(model_id="m1"), payload={"automatic": True})
    queued, dedup = store.submit_coalesced(first)  # type: ignore[attr-defined]
    assert queued.id == first.id and not dedup
    manual = replace(op(model_id="m1"), payload={})
    folded, dedup = store.submit_coalesced(manual, full=True)  # type: ignore[attr-defined]
    # manual: automatic flag cleared, and when it was asked for recorded (it waits for consolidations queued before)
    assert dedup and folded.id == first.id
    assert folded.payload == {"mode": "full", "requested_at": to_iso(manual.created_at)}
    assert store.get_operation("b", first.id).payload == folded.payload  # type: ignore[union-attr]
    other, dedup = store.submit_coalesced(op(model_id="m2"))  # type: ignore[attr-defined]
    assert not dedup and other.id != first.id
    later = utcnow() + timedelta(hours=1)
    claimed = store.claim_operation("w", 60, now=later)  # type: ignore[call-arg]
    assert claimed is not None and claimed.id == first.id
    store.defer_operation(first.id, next_retry_at=later + timedelta(minutes=5))  # type: ignore[attr-defined]
    parked = store.get_operation("b", first.id)
    assert parked is not None and parked.status == "pending" and parked.retry_count == 0 and parked.error is None
    assert store.claim_operation("w", 60, now=later)  # type: ignore[call-arg]  # m2 is due, m1 is parked
    assert store.claim_operation("w", 60, now=later) is None  # type: ignore[call-arg]
    # at +6 min both are runnable, in the order they became so: m2's claim expired at +1 min, m1's park at +5 min
    reclaimed = store.claim_operation("w", 60, now=later + timedelta(minutes=6))  # type: ignore[call-arg]
    assert reclaimed is not None and reclaimed.id == other.id
    assert store.claim_operation("w", 60, now=later + timedelta(minutes=6)).id == first.id  # type: ignore[union-attr,call-arg]
    store.insert_mental_model(
        replace(model(model_id="cron"), trigger={**default_trigger(), "refresh_cron": "0 * * * *"})
    )
    store.insert_mental_model(replace(model(model_id="plain"), trigger={**default_trigger(), "refresh_cron": ""}))
    assert [m.id for m in store.list_models_with_trigger("refresh_cron")] == ["cron"]  # type: ignore[attr-defined]


def test_memory_sources_give_chunk_and_document_text(store: Store) -> None:
    from mindbank.domain.records import MemorySource

    write = doc("Alice moved to Lisbon.", document_id="d1")
    (ids,) = store.write_documents("b", [write])
    (source,) = store.memory_sources("b", [*ids, "missing"])
    assert source == MemorySource(
        ids[0], "d1", write.chunks[0].id, "Alice moved to Lisbon.", "Alice moved to Lisbon.", chunk_index=0
    )
    assert store.memory_sources("other-bank", ids) == []
    # a refresh reading source chunks never pulls whole documents
    (chunk_only,) = store.memory_sources("b", ids, documents=False)
    assert chunk_only == MemorySource(ids[0], "d1", write.chunks[0].id, "Alice moved to Lisbon.", None, chunk_index=0)


def test_llm_requests_are_recorded_listed_per_operation_and_purged(store: Store) -> None:
    from mindbank.domain.records import LLMRequestRecord

    now = utcnow()

    def record(rid: str, operation_id: str, at: timedelta) -> LLMRequestRecord:
        return LLMRequestRecord(
            id=rid, bank_id="b", operation_id=operation_id, scope="agent_1", provider="openai", model="m", attempt=1,
            request={"messages": [{"role": "user", "content": "q"}]}, response={"text": "a"}, error=None,
            input_tokens=3, output_tokens=2, duration_ms=5, created_at=now + at,
        )  # fmt: skip

    store.record_llm_request(record("r1", "op1", timedelta(hours=-2)))
    store.record_llm_request(replace(record("r2", "op1", timedelta(0)), response=None, error="LLMTransientError: 429"))
    store.record_llm_request(record("r3", "op2", timedelta(0)))
    listed = store.list_llm_requests("b", "op1", limit=10)
    assert [r.id for r in listed] == ["r1", "r2"]
    assert listed[0] == record("r1", "op1", timedelta(hours=-2))
    assert listed[1].response is None and listed[1].error == "LLMTransientError: 429"
    assert store.list_llm_requests("other", "op1", limit=10) == []
    assert store.purge_llm_requests(now - timedelta(hours=1)) == 1
    assert [r.id for r in store.list_llm_requests("b", "op1", limit=10)] == ["r2"]


def test_memory_edit_is_a_stamped_write_and_reindexes(store: Store) -> None:
    ((memory_id,),) = store.write_documents("b", [doc("old harbour text", tags=("a",), vector=vec(1, 0, 0, 0))])
    before = store.bank_last_memory_write_at("b")
    assert store.update_memory("b", memory_id, text="new lighthouse text", embedding=vec(0, 1, 0, 0), tags=("z",))  # type: ignore[attr-defined]
    (edited,) = store.get_memories("b", [memory_id])
    assert edited.text == "new lighthouse text" and edited.tags == ("z",) and edited.updated_at > before  # type: ignore[operator]
    assert store.bank_last_memory_write_at("b") == edited.updated_at
    assert [h for h, _ in store.keyword_search("b", ["lighthouse"], 5, MemoryFilter())] == [memory_id]
    assert store.keyword_search("b", ["harbour"], 5, MemoryFilter()) == []
    strict = MemoryFilter(tags=("z",), tags_match="all_strict")
    assert store.vector_search("b", vec(0, 1, 0, 0), 1, strict)[0][0] == memory_id
    assert store.unconsolidated_facts("b", 5)[0].id == memory_id  # type: ignore[attr-defined]
    assert not store.update_memory("b", "missing", text="x")  # type: ignore[attr-defined]
