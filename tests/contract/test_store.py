"""Store behaviour every backend must show (run per backend through the ``store`` fixture)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from mindbank.domain.records import Chunk, MentalModel, NewMemory, Operation, RetainItem
from mindbank.domain.tags import TAGS_MATCH_MODES, matches
from mindbank.domain.timeutil import utcnow
from mindbank.domain.trigger import default_trigger
from mindbank.store.base import AlreadyExists, DocumentWrite, MemoryFilter, StalenessProbe, Store

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
    batch = store.stale_flags("b", probes)
    assert batch == {"on-a": False, "on-b": True, "all": True, "never": True, "fresh": False, "exp-only": False}
    for p in probes:
        assert store.stale_flags("b", [p]) == {p.mental_model_id: batch[p.mental_model_id]}


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
    with pytest.raises(LookupError):
        store.save_refresh(model(model_id="gone"), history=None, history_cap=3)


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
    assert store.find_pending_refresh("b", "m1") is None
