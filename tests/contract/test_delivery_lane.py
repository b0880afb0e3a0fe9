"""Webhook deliveries are claimed in a lane of their own, on every backend: a ``deliveries`` claim takes only them,
a ``work`` claim everything else, and a worker sends them from threads apart from its slots, so a receiver that
answers slowly holds no retain behind it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from test_store import op

from mindbank.store.base import Store
from mindbank.worker.runner import Worker, WorkerSettings


def test_claims_keep_to_their_lane(store: Store) -> None:
    delivery = replace(op(), operation_type="webhook_delivery")
    retain = op(created_offset=0.001)
    for o in (delivery, retain):
        store.submit_operation(o)
    work = store.claim_operation("w1", 60, lane="work")
    assert work is not None and work.id == retain.id
    assert store.claim_operation("w2", 60, lane="work") is None
    sent = store.claim_operation("w3", 60, lane="deliveries")
    assert sent is not None and sent.id == delivery.id
    assert store.claim_operation("w4", 60, lane="deliveries") is None


def test_a_slow_delivery_holds_no_slot(store: Store) -> None:
    release, done = threading.Event(), threading.Event()

    def slow_delivery(_op: object) -> dict[str, bool]:
        release.wait(30)  # a receiver dripping its answer
        return {"sent": True}

    def retain(_op: object) -> dict[str, bool]:
        done.set()
        return {"ok": True}

    handlers = {"webhook_delivery": slow_delivery, "batch_retain": retain}
    worker = Worker(store, handlers, WorkerSettings(poll_seconds=0.01, slots=1, delivery_slots=1))  # type: ignore[dict-item]
    store.submit_operation(replace(op(), operation_type="webhook_delivery"))
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not store.list_operations("b", status="processing", operation_type=None, limit=10, offset=0)[0]:
            assert time.monotonic() < deadline, "the delivery never started"
            time.sleep(0.01)
        store.submit_operation(op(created_offset=0.001))
        worker.wake()
        assert done.wait(10)  # the one slot ran the retain while the delivery was still being sent
    finally:
        release.set()
        worker.stop()
