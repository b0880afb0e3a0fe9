"""Exactly-once operations on both stores: claim tokens, the claim fence, lease renewal, fair claims, idempotent
submission, and two workers racing over one operation whose handler outlives its lease."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from test_store import doc, op

from mindbank.domain.records import Chunk, Operation
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import DocumentWrite, MemoryFilter, Store
from mindbank.store.fence import Fence, LeaseLost, fenced
from mindbank.worker.runner import Requeue, Worker, WorkerSettings


def texts(store: Store) -> list[str]:
    found, _ = store.list_memories("b", MemoryFilter(), query=None, limit=1000, offset=0)
    return sorted(m.text for m in found)


def test_fenced_writes_commit_only_while_the_claim_holds(store: Store) -> None:
    queued = op()
    store.submit_operation(queued)
    first = store.claim_operation("w1", 60)
    assert first is not None and first.claim_token and first.progress is None
    fence = Fence(first.id, first.claim_token)
    with fenced(fence):
        fence.stage({"parts": 1})
        store.write_documents("b", [doc("written under the first claim")])
    assert store.get_operation("b", queued.id).progress == {"parts": 1}  # type: ignore[union-attr]

    # the first worker stalls past its lease; another worker reclaims the operation under a new token
    second = store.claim_operation("w2", 60, now=utcnow() + timedelta(minutes=2))
    assert second is not None and second.id == queued.id and second.claim_token not in (None, first.claim_token)
    assert second.progress == {"parts": 1}  # a reclaimed operation resumes from the committed checkpoint
    with fenced(fence), pytest.raises(LeaseLost):
        fence.stage({"parts": 2})
        store.write_documents("b", [doc("written after the claim was lost")])
    assert fence.lost.is_set()
    assert texts(store) == ["written under the first claim"]  # the stale worker's write rolled back whole
    assert store.get_operation("b", queued.id).progress == {"parts": 1}  # type: ignore[union-attr]

    assert store.renew_lease(queued.id, first.claim_token, 60) is False
    assert store.renew_lease(queued.id, second.claim_token or "", 60) is True
    assert (
        store.finish_operation(queued.id, status="completed", result={"by": 1}, error=None, token=first.claim_token)
        is False
    )
    assert store.get_operation("b", queued.id).status == "processing"  # type: ignore[union-attr]
    assert store.defer_operation(queued.id, next_retry_at=utcnow(), token=first.claim_token) is False
    assert store.retry_operation(queued.id, next_retry_at=utcnow(), error="x", token=first.claim_token) is False
    assert store.finish_operation(queued.id, status="completed", result={"by": 2}, error=None, token=second.claim_token)
    done = store.get_operation("b", queued.id)
    assert done is not None and done.status == "completed" and done.result == {"by": 2} and done.retry_count == 0
    # finished: no token holds it any more, not even the last one
    assert store.renew_lease(queued.id, second.claim_token or "", 60) is False
    assert (
        store.finish_operation(queued.id, status="failed", result=None, error="late", token=second.claim_token) is False
    )


def test_submit_once_returns_the_stored_operation(store: Store) -> None:
    queued = replace(op(), payload={"items": [{"content": "x"}]})
    stored, created = store.submit_operation_once(queued)  # type: ignore[attr-defined]
    assert created and stored.id == queued.id
    again, created = store.submit_operation_once(replace(queued, payload={"items": []}))  # type: ignore[attr-defined]
    assert not created and again.payload == {"items": [{"content": "x"}]}
    with pytest.raises(KeyError):
        store.submit_operation_once(replace(queued, bank_id="other"))  # type: ignore[attr-defined]
    assert store.list_operations("b", status=None, operation_type=None, limit=10, offset=0)[1] == 1  # type: ignore[attr-defined]


def test_claims_are_fair_by_bank_and_by_operation_type(store: Store) -> None:
    def submit(bank: str, kind: str, offset: float) -> Operation:
        queued = replace(op(bank=bank, created_offset=offset), operation_type=kind)
        store.submit_operation(queued)
        return queued

    bulk = [submit("import", "batch_retain", i) for i in range(3)]
    assert store.claim_operation("w", 60).id == bulk[0].id  # type: ignore[union-attr]
    refresh_elsewhere = submit("other", "refresh_mental_model", 10)
    # bank "import" holds a live claim: the younger operation of a bank nobody is serving goes first
    assert store.claim_operation("w", 60).id == refresh_elsewhere.id  # type: ignore[union-attr]
    consolidation = submit("third", "consolidation", 20)
    retain_third = submit("third", "batch_retain", 5)
    # bank "third" is idle and batch_retain already has a live claim while consolidation has none: type decides
    assert store.claim_operation("w", 60).id == consolidation.id  # type: ignore[union-attr]
    # every bank now has one live claim and both candidates are retains: the one ready first goes first
    assert store.claim_operation("w", 60).id == bulk[1].id  # type: ignore[union-attr]
    assert store.claim_operation("w", 60).id == retain_third.id  # type: ignore[union-attr]


def test_continuation_parts_add_facts_to_a_document_begun_earlier(store: Store) -> None:
    first = doc("part one", document_id="big")
    store.write_documents("b", [first])
    chunk_id = first.chunks[0].id
    more = [replace(first.memories[0], text=f"part {n}", chunk_id=chunk_id) for n in ("two", "three")]
    store.write_documents("b", [DocumentWrite(first.item, "big", [], more, continuation=True)])
    assert texts(store) == ["part one", "part three", "part two"]
    sources = store.memory_sources("b", [m.id for m in store.list_memories("b", MemoryFilter(), query=None, limit=9,
                                                                               offset=0)[0]])  # fmt: skip
    assert {s.chunk_text for s in sources} == {"part one"} and {s.document_id for s in sources} == {"big"}
    # a fresh replace of the document removes every part
    store.write_documents("b", [doc("replaced", document_id="big")])
    assert texts(store) == ["replaced"]
    assert isinstance(first.chunks[0], Chunk)


class StalledHeartbeat:
    """The store as a worker whose process stalls sees it: its lease renewals never reach the database."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def renew_lease(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_two_workers_and_a_handler_that_outlives_a_short_lease_have_one_effect(store: Store) -> None:
    """Worker 1's handler outlives its 0.3 s lease while its heartbeat is stalled; worker 2 reclaims the operation
    and finishes it; when worker 1 wakes up, its write is fenced off: one effect, one completion."""
    queued = op()
    store.submit_operation(queued)
    resume = threading.Event()
    calls: list[str] = []

    def handler(o: Operation) -> dict[str, Any]:
        calls.append(o.claim_token or "")
        if len(calls) == 1:
            resume.wait(10)  # worker 1 stalls here past its lease
        store.write_documents("b", [doc("the effect", document_id="effect")])
        return {"run": len(calls)}

    settings = WorkerSettings(lease_seconds=0.3, poll_seconds=0.01)
    stalled = Worker(StalledHeartbeat(store), {"batch_retain": handler}, settings)  # type: ignore[arg-type]
    healthy = Worker(store, {"batch_retain": handler}, settings)
    first = threading.Thread(target=stalled.run_once)
    first.start()
    deadline = time.monotonic() + 10
    while not calls:  # worker 1 holds the claim
        assert time.monotonic() < deadline
        time.sleep(0.01)
    while not healthy.run_once():  # nothing runnable until worker 1's lease expires
        assert time.monotonic() < deadline
        time.sleep(0.05)
    resume.set()
    first.join(10)
    assert len(calls) == 2 and calls[0] != calls[1]  # two claims, two tokens ...
    assert texts(store) == ["the effect"]  # ... one effect
    done = store.get_operation("b", queued.id)
    assert done is not None and done.status == "completed" and done.result == {"run": 2} and done.retry_count == 0


def test_a_heartbeat_keeps_a_long_handler_claimed(store: Store) -> None:
    """With a live heartbeat, a handler running for many leases is never reclaimed by a second worker."""
    queued = op()
    store.submit_operation(queued)
    calls: list[int] = []

    def handler(o: Operation) -> dict[str, Any]:
        calls.append(1)
        time.sleep(1.0)  # about three leases
        store.write_documents("b", [doc("slow effect")])
        return {}

    settings = WorkerSettings(lease_seconds=0.3, poll_seconds=0.01)
    one, two = Worker(store, {"batch_retain": handler}, settings), Worker(store, {"batch_retain": handler}, settings)
    runner = threading.Thread(target=one.run_once)
    runner.start()
    while not calls:
        time.sleep(0.01)
    while runner.is_alive():
        assert not two.run_once()
        time.sleep(0.05)
    assert calls == [1] and texts(store) == ["slow effect"]
    assert store.get_operation("b", queued.id).status == "completed"  # type: ignore[union-attr]


def test_a_requeued_operation_keeps_its_progress_and_queues_behind_waiting_work(store: Store) -> None:
    long_op = replace(op(bank="bulk", created_offset=-2), payload={"parts": 3})
    store.submit_operation(long_op)
    seen: list[tuple[str, Any]] = []

    def step(o: Operation) -> dict[str, Any]:
        done = (o.progress or {}).get("done", 0) + 1
        seen.append((o.bank_id, done))
        store.write_documents(o.bank_id, [doc(f"part {done}")])  # checkpointed with the part it records
        if done < o.payload["parts"]:
            raise Requeue("more to do")
        return {"done": done}

    def stage_then_step(o: Operation) -> dict[str, Any]:
        from mindbank.store.fence import current_fence

        fence = current_fence()
        assert fence is not None
        if o.bank_id == "bulk":
            fence.stage({"done": (o.progress or {}).get("done", 0) + 1})
        return step(o)

    # queued after the long operation but before its first part ends (whatever the speed of that part): it runs
    # before the long operation's second part
    quick = replace(op(bank="quick", created_offset=-1), payload={"parts": 1}, id=str(uuid.uuid4()))
    store.submit_operation(quick)
    worker = Worker(store, {"batch_retain": stage_then_step}, WorkerSettings())
    worker.drain()
    assert seen == [("bulk", 1), ("quick", 1), ("bulk", 2), ("bulk", 3)]
    done = store.get_operation("bulk", long_op.id)
    assert done is not None and done.status == "completed" and done.progress == {"done": 3} and done.retry_count == 0


def test_one_consolidation_per_bank_runs_at_a_time(store: Store) -> None:
    def consolidation(bank: str, offset: float) -> Operation:
        queued = replace(op(bank=bank, created_offset=offset), operation_type="consolidation")
        store.submit_operation(queued)
        return queued

    first, second = consolidation("b", 0), consolidation("b", 1)
    elsewhere = consolidation("c", 2)
    running = store.claim_operation("w1", 60)
    assert running is not None and running.id == first.id
    assert store.claim_operation("w2", 60).id == elsewhere.id  # type: ignore[union-attr]  # another bank's runs
    assert store.claim_operation("w2", 60) is None  # b's second consolidation waits for the first
    store.finish_operation(first.id, status="completed", result={}, error=None, token=running.claim_token)
    assert store.claim_operation("w2", 60).id == second.id  # type: ignore[union-attr]
