"""kill -9 matrix, both stores: the API process during synchronous retains, and a worker process during a queued
retain, a consolidation and a refresh (before and after the refresh's write). After each kill a fresh process takes
over; then every acknowledged write is present, nothing is duplicated, and every operation completed exactly once.

The worker is a separate process (``mindbank worker``'s loop) with stall points: when ``stall-<point>`` exists in
the markers folder, the worker writes ``at-<point>`` there and sleeps at that point until it is killed. A short lease
(1 s) lets the next worker reclaim the dead one's operation quickly.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from postgres_testing import DatabaseFactory

from mindbank.store.base import MemoryFilter, Store
from mindbank.store.open import open_store

WORKER = textwrap.dedent(
    """
    import sys, threading, time
    from pathlib import Path
    from mindbank.config import Settings
    from mindbank.engine.retain import parts
    from mindbank.service.facade import MindBank
    from mindbank.store.fence import current_fence

    db, markers = sys.argv[1], Path(sys.argv[2])
    parts.PART_FACTS = 40  # several parts from a small retain

    def stall(point):
        if (markers / f"stall-{point}").exists():
            (markers / f"at-{point}").write_text("here")
            time.sleep(600)  # killed long before this returns

    settings = Settings(database_url=db, worker_lease_seconds=1.0, worker_poll_seconds=0.02, worker_slots=2,
                        scheduler_tick_seconds=0)
    mb = MindBank.open(settings)
    write_documents, write_consolidation, persist = (
        mb.store.write_documents, mb.store.write_consolidation, mb.refresher.persist)

    def documents(*args, **kwargs):
        out = write_documents(*args, **kwargs)
        if current_fence() is not None:
            stall("retain")  # one part of a queued retain is committed, the rest is not
        return out

    def consolidation(*args, **kwargs):
        out = write_consolidation(*args, **kwargs)
        stall("consolidation")  # one round committed
        return out

    def refresh(*args, **kwargs):
        stall("refresh-before")  # synthesized, nothing written
        out = persist(*args, **kwargs)
        stall("refresh-after")  # written, the operation not yet settled
        return out

    mb.store.write_documents, mb.store.write_consolidation, mb.refresher.persist = documents, consolidation, refresh
    (markers / "worker-ready").write_text("ready")
    mb.start_worker()
    threading.Event().wait()
    """
)
API = "import sys; from mindbank.cli import main; sys.exit(main(sys.argv[1:]))"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """The API and worker processes on one database, restartable after a kill."""

    def __init__(self, db: str, markers: Path) -> None:
        self.db, self.markers = db, markers
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}/v1/default/banks/b"
        self.api: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None

    def start_api(self) -> None:
        env = {**os.environ, "MINDBANK_DATABASE_URL": self.db, "MINDBANK_PORT": str(self.port)}
        self.api = subprocess.Popen([sys.executable, "-c", API, "serve", "--no-worker"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        wait_until(lambda: _healthy(self.port), 60, "API up")

    def start_worker(self, *stalls: str) -> None:
        for old in self.markers.glob("*"):
            old.unlink()
        for point in stalls:
            (self.markers / f"stall-{point}").write_text("")
        self.worker = subprocess.Popen([sys.executable, "-c", WORKER, self.db, str(self.markers)])
        wait_until(lambda: (self.markers / "worker-ready").exists(), 60, "worker up")

    def kill(self, which: str) -> None:
        proc = self.api if which == "api" else self.worker
        assert proc is not None and proc.poll() is None, f"{which} died before the kill"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def at(self, point: str, timeout: float = 60) -> None:
        wait_until(lambda: (self.markers / f"at-{point}").exists(), timeout, f"worker at {point}")

    def close(self) -> None:
        for proc in (self.api, self.worker):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for: {what}"
        time.sleep(0.05)


def facts(store: Store) -> list[Any]:
    found, _ = store.list_memories("b", MemoryFilter(fact_types=("world", "experience")), query=None, limit=10_000,
                                   offset=0)  # fmt: skip
    return found


def settled(store: Store, op_id: str) -> Any:
    op = store.get_operation("b", op_id)
    return op if op is not None and op.status in ("completed", "failed") else None


def run_matrix(db: str, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    store = open_store(db, dimension=384)
    cluster = Cluster(db, markers)
    try:
        cluster.start_api()
        cluster.start_worker("retain")
        http = httpx.Client(timeout=60)

        # 1. kill -9 the API while four clients retain synchronously: what was acknowledged is there, whole
        acked: list[str] = []
        stop = threading.Event()

        def client(n: int) -> None:
            with httpx.Client(timeout=30) as c:
                for k in range(1000):
                    docs = [f"api-{n}-{k}-{i}" for i in range(3)]
                    items = [{"content": f"Ada noted fact {d}.", "document_id": d} for d in docs]
                    try:
                        if c.post(f"{cluster.base}/memories", json={"items": items}).status_code == 200:
                            acked.extend(docs)
                    except httpx.HTTPError:
                        return
                    if stop.is_set():
                        return

        clients = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for t in clients:
            t.start()
        wait_until(lambda: len(acked) >= 30, 60, "acknowledged retains")
        cluster.kill("api")
        stop.set()
        for t in clients:
            t.join(30)
        cluster.start_api()
        by_doc = Counter(m.document_id for m in facts(store) if (m.document_id or "").startswith("api-"))
        assert set(acked) <= set(by_doc), "an acknowledged retain is missing"
        assert set(by_doc.values()) == {1}, "a document was written twice"
        requests = Counter(d.rsplit("-", 1)[0] for d in by_doc)
        assert set(requests.values()) == {3}, "a retain was committed in part"
        api_facts = len(by_doc)

        # 2. kill -9 the worker after the first part of a queued retain: it resumes, writing each fact once
        # appended to one document: a replay of written parts would add them again (replace mode would hide that)
        items = [{"content": f"Bo planted seedling {i} in the garden.", "tags": ["garden"], "document_id": "log",
                  "update_mode": "append"} for i in range(100)]  # fmt: skip
        op_id = http.post(f"{cluster.base}/memories", json={"items": items, "async": True}).json()["operation_id"]
        cluster.at("retain")
        cluster.kill("worker")
        mid = store.get_operation("b", op_id)
        assert mid is not None and mid.status == "processing" and 0 < mid.progress["memories"] < 100  # type: ignore[index]
        progress = http.get(f"{cluster.base}/operations/{op_id}").json()["progress"]
        assert progress["total"] == 100 and progress["detail"]["memories_written"] == mid.progress["memories"]  # type: ignore[index]
        cluster.start_worker("consolidation")
        wait_until(lambda: settled(store, op_id) is not None, 120, "queued retain settled")
        done = settled(store, op_id)
        assert done.status == "completed" and done.result == {"items_count": 100, "unit_ids_count": 100}
        garden = [m.text for m in facts(store) if "seedling" in m.text]
        assert len(garden) == 100 and len(set(garden)) == 100

        # 3. kill -9 the worker after one consolidation round: the next worker consolidates the rest, once
        cluster.at("consolidation")
        cluster.kill("worker")
        cluster.start_worker("refresh-before")
        consolidation_ops = store.list_operations("b", status=None, operation_type="consolidation", limit=100,
                                                  offset=0)[0]  # fmt: skip
        wait_until(lambda: all(settled(store, o.id) for o in consolidation_ops), 120, "consolidations settled")
        wait_until(lambda: store.unconsolidated_facts("b", 10) == [], 120, "every fact consolidated")  # type: ignore[attr-defined]
        sources = Counter(s for o in store.list_observations("b") for s in o.source_memory_ids)  # type: ignore[attr-defined]
        assert sources and set(sources.values()) == {1}, "a fact was consolidated into two observations"
        assert len(facts(store)) == api_facts + 100

        # 4. kill -9 the worker mid-refresh (nothing written), then after the refresh's write (not yet settled)
        body = {"name": "Garden", "source_query": "What did Bo plant?", "tags": ["garden"]}
        created = http.post(f"{cluster.base}/mental-models", json=body).json()
        model_id, refresh_op = created["mental_model_id"], created["operation_id"]
        cluster.at("refresh-before")
        cluster.kill("worker")
        assert store.get_mental_model("b", model_id).content == ""  # type: ignore[union-attr]
        cluster.start_worker("refresh-after")
        cluster.at("refresh-after")
        cluster.kill("worker")
        written = store.get_mental_model("b", model_id)
        assert written is not None and "seedling" in written.content
        cluster.start_worker()
        wait_until(lambda: settled(store, refresh_op) is not None, 120, "refresh settled")
        refreshed = settled(store, refresh_op)
        assert refreshed.status == "completed" and refreshed.result["outcome"] == "content_written"
        assert store.get_mental_model("b", model_id).content == written.content  # type: ignore[union-attr]
        assert len(store.list_history("b", model_id)) == 1  # refreshed once, not twice
        runs = [o for o in store.list_operations("b", status=None, operation_type=None, limit=500, offset=0)[0]]
        assert all(o.status in ("completed", "pending") for o in runs), [(o.operation_type, o.status) for o in runs]
        http.close()
    finally:
        cluster.close()
        store.close()


def test_kill_matrix_sqlite(tmp_path: Path) -> None:
    run_matrix(str(tmp_path / "kill.db"), tmp_path)


@pytest.fixture
def postgres_url(postgres_databases: DatabaseFactory) -> Iterator[str]:
    url = postgres_databases.create(384)
    yield url
    postgres_databases.drop(url)


def test_kill_matrix_postgres(postgres_url: str, tmp_path: Path) -> None:
    run_matrix(postgres_url, tmp_path)
