"""Two worker PROCESSES sharing one PostgreSQL queue: every operation runs exactly once, and operations of one
mental model never overlap (one running per model), with claims made by ``FOR UPDATE SKIP LOCKED``."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from postgres_testing import DatabaseFactory

from mindbank.domain.records import Operation
from mindbank.domain.timeutil import utcnow
from mindbank.store.open import open_store

DIM = 4
PLAIN_OPS = 150
MODEL_OPS = 50  # spread over 5 mental models: they must run one at a time per model
MODELS = 5

# What `mindbank worker` does, minus the engine: a Worker polling the shared store; each run is recorded in
# worker_runs (with database-clock start/end times) by the handler itself.
WORKER_SCRIPT = r"""
import os, sys, time
import psycopg
from mindbank.store.open import open_store
from mindbank.worker.runner import Worker, WorkerSettings

url, go_file, name = sys.argv[1:4]
store = open_store(url, dimension=4)
record = psycopg.connect(url, autocommit=True)

def handler(op):
    started = record.execute("SELECT clock_timestamp()").fetchone()[0]
    time.sleep(0.002 if op.mental_model_id is None else 0.01)
    record.execute(
        "INSERT INTO worker_runs (operation_id, worker, mental_model_id, started_at, finished_at) "
        "VALUES (%s, %s, %s, %s, clock_timestamp())",
        (op.id, name, op.mental_model_id, started),
    )
    return {"by": name}

worker = Worker(store, {"job": handler, "refresh_mental_model": handler}, WorkerSettings(poll_seconds=0.01))
while not os.path.exists(go_file):  # start both workers at the same moment
    time.sleep(0.005)
idle = 0
while idle < 50:  # ~0.5 s with nothing runnable: the queue is drained (or the rest is the other worker's)
    if worker.run_once():
        idle = 0
    else:
        idle += 1
        time.sleep(0.01)
store.close()
record.close()
"""


@pytest.fixture
def database_url(postgres_databases: DatabaseFactory) -> Iterator[str]:
    url = postgres_databases.create(DIM)
    yield url
    postgres_databases.drop(url)


def _operation(index: int, model: str | None) -> Operation:
    created = utcnow() + timedelta(microseconds=index)
    return Operation(
        id=str(uuid.uuid4()), bank_id="b", operation_type="refresh_mental_model" if model else "job",
        status="pending", payload={"n": index}, result=None, error=None, retry_count=0, next_retry_at=None,
        mental_model_id=model, created_at=created, updated_at=created, completed_at=None,
    )  # fmt: skip


def test_two_worker_processes_run_each_operation_exactly_once(database_url: str, tmp_path: Path) -> None:
    import psycopg

    store = open_store(database_url, dimension=DIM)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE worker_runs (operation_id text NOT NULL, worker text NOT NULL, mental_model_id text, "
            "started_at timestamptz NOT NULL, finished_at timestamptz NOT NULL)"
        )
    # interleave model-bound and plain operations so both kinds are in flight at once
    every = (PLAIN_OPS + MODEL_OPS) // MODEL_OPS
    ops = [_operation(i, f"m{(i // every) % MODELS}" if i % every == 0 else None) for i in range(PLAIN_OPS + MODEL_OPS)]
    assert sum(o.mental_model_id is not None for o in ops) == MODEL_OPS
    for o in ops:
        store.submit_operation(o)

    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER_SCRIPT, database_url, str(go), f"proc{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for n in range(2)
    ]
    try:
        time.sleep(0.5)  # let both import and connect before the race starts
        go.touch()
        outputs = []
        for p in procs:
            out, _ = p.communicate(timeout=180)
            outputs.append(out.decode(errors="replace"))
            assert p.returncode == 0, out.decode(errors="replace")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()

    with psycopg.connect(database_url, autocommit=True) as conn:
        runs = conn.execute("SELECT operation_id, worker, mental_model_id, started_at, finished_at FROM worker_runs")
        rows = runs.fetchall()
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r[0]] += 1
    assert len(rows) == PLAIN_OPS + MODEL_OPS, outputs
    assert set(counts) == {o.id for o in ops} and set(counts.values()) == {1}  # each ran exactly once
    assert {r[1] for r in rows} == {"proc0", "proc1"}  # both processes took part
    for o in ops:
        done = store.get_operation("b", o.id)
        assert done is not None and done.status == "completed" and done.result is not None
    by_model: dict[str, list[tuple[object, object]]] = defaultdict(list)
    for r in rows:
        if r[2] is not None:
            by_model[r[2]].append((r[3], r[4]))
    for model, spans in by_model.items():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, f"two operations of {model} ran at the same time"
    store.close()
