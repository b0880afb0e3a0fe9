"""The worker: handlers, retries with backoff, permanent failures, and reclaiming a dead worker's operation."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import utcnow
from mindbank.store.open import open_store
from mindbank.worker.runner import PermanentFailure, Worker, WorkerSettings


def submit(store: Any, op_type: str = "job") -> str:
    now = utcnow()
    op = Operation(
        id=str(uuid.uuid4()), bank_id="b", operation_type=op_type, status="pending", payload={"n": 1}, result=None,
        error=None, retry_count=0, next_retry_at=None, mental_model_id=None, created_at=now, updated_at=now,
        completed_at=None,
    )  # fmt: skip
    store.submit_operation(op)
    return op.id


def test_success_retry_and_permanent_failure(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "w.db"), dimension=4)
    calls: list[str] = []

    def flaky(op: Operation) -> dict[str, Any]:
        calls.append(op.id)
        raise RuntimeError("timeout")

    def fatal(op: Operation) -> dict[str, Any]:
        raise PermanentFailure("bad input", {"reason": "x"})

    worker = Worker(
        store,
        {"ok": lambda op: {"n": op.payload["n"] + 1}, "flaky": flaky, "fatal": fatal},
        WorkerSettings(max_retries=2, retry_backoff_seconds=0.0),
    )
    ok, bad, dead, unknown = submit(store, "ok"), submit(store, "flaky"), submit(store, "fatal"), submit(store, "nope")
    worker.drain()
    assert store.get_operation("b", ok).result == {"n": 2}  # type: ignore[union-attr]
    failed = store.get_operation("b", bad)
    assert failed is not None and failed.status == "failed" and failed.retry_count == 2 and len(calls) == 3
    fatal_op = store.get_operation("b", dead)
    assert fatal_op is not None and fatal_op.status == "failed" and fatal_op.result == {"reason": "x"}
    assert fatal_op.retry_count == 0
    assert "no handler" in (store.get_operation("b", unknown).error or "")  # type: ignore[union-attr]


def test_backoff_parks_the_retry_until_due(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "w.db"), dimension=4)

    def boom(op: Operation) -> dict[str, Any]:
        raise RuntimeError("503")

    worker = Worker(store, {"job": boom}, WorkerSettings(max_retries=3, retry_backoff_seconds=60.0))
    op_id = submit(store)
    assert worker.drain() == 1  # the retry is not due for a minute
    op = store.get_operation("b", op_id)
    assert op is not None and op.status == "pending" and op.next_retry_at is not None and op.retry_count == 1


def test_operation_of_a_dead_worker_is_rerun_after_its_lease(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "w.db"), dimension=4)
    op_id = submit(store)
    crashed = store.claim_operation("dead-worker", lease_seconds=-1)  # claimed, then the process died
    assert crashed is not None
    done: list[str] = []
    worker = Worker(store, {"job": lambda op: done.append(op.id) or {}}, WorkerSettings())
    worker.drain()
    assert done == [op_id]
    assert store.get_operation("b", op_id).status == "completed"  # type: ignore[union-attr]


def test_background_thread_runs_submitted_operations(tmp_path: Path) -> None:
    import time

    store = open_store(str(tmp_path / "w.db"), dimension=4)
    worker = Worker(store, {"job": lambda op: {"done": True}}, WorkerSettings(poll_seconds=0.01))
    worker.start()
    try:
        op_id = submit(store)
        deadline = time.monotonic() + 10
        while store.get_operation("b", op_id).status != "completed":  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        worker.stop()
