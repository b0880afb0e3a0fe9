"""kill -9 during a re-embedding, both stores: a real ``mindbank serve`` process (API and worker) moving a
2,000-memory bank from ``embed-a`` to ``embed-b`` (the openai provider through the real SDK against a fake
``/v1/embeddings`` that makes each model's vectors differently, and slowly enough to kill mid-way) is killed with
SIGKILL after some parts are staged. The bank is then wholly on ``embed-a``; a fresh process resumes the operation
(embedding only what no committed part staged) and commits: every memory holds ``embed-b``'s vector of its text,
nothing is lost or doubled, recall answers. :func:`kill_mid_reembedding` is the scenario; test_real_model.py runs it
against the real llama.cpp server (from the bundled MiniLM to a model of another width)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest
from conftest import EMBED_DIM
from fake_servers import FakeServer, Seen, hashed_embeddings, hashed_vector, serving
from test_reembed import assert_vectors_are

from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import DocumentWrite, Store
from mindbank.store.open import open_store

DIM = EMBED_DIM
MEMORIES = 2000
SERVE = "import sys; from mindbank.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def fake_embeddings() -> Iterator[FakeServer]:
    """Per-model vectors; ``embed-b`` replies wait 0.1 s, so the re-embedding takes a few seconds."""
    fast, slow = hashed_embeddings(DIM, per_model=True), hashed_embeddings(DIM, per_model=True, delay=0.1)

    def respond(seen: Seen) -> Any:
        return (slow if seen.body.get("model") == "embed-b" else fast)(seen)

    with serving(respond) as server:
        yield server


def note(i: int) -> str:
    """The text of the bank's memory ``i``."""
    return f"Ana moored boat {i} at pier {i % 13}."


def fill(
    store: Store, vectors: npt.NDArray[np.float32], model: tuple[str, int], text_of: Callable[[int], str] = note
) -> None:
    """The bank ``b`` on ``model``: one one-fact document per row of ``vectors`` (the model's vectors of
    ``text_of`` 0, 1, …; :func:`note` by default), written in transactions of 500."""
    writes = []
    for i, vector in enumerate(vectors):
        text, document_id = text_of(i), f"d{i}"
        chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=0, text=text)
        memory = NewMemory(
            text=text, fact_type="world", embedding=vector / np.linalg.norm(vector), tags=(), context=None,
            metadata={}, document_id=document_id, chunk_id=chunk.id, occurred_start=None, occurred_end=None,
            mentioned_at=utcnow(),
        )  # fmt: skip
        writes.append(DocumentWrite(RetainItem(content=text, document_id=document_id), document_id, [chunk], [memory]))
    for start in range(0, len(writes), 500):
        store.write_documents("b", writes[start : start + 500], model=model)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for: {what}"
        time.sleep(0.05)


class Server:
    """``mindbank serve`` (API and worker) on ``database`` embedding with the openai provider at ``embeddings``:
    ``model``, and ``previous`` as the previous model (None: the bundled MiniLM, which needs no setting)."""

    def __init__(
        self, database: str, embeddings: FakeServer, model: str = "embed-b", previous: str | None = "embed-a"
    ) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}/v1/default/banks/b"
        self.env = {
            **os.environ, "MINDBANK_DATABASE_URL": database, "MINDBANK_PORT": str(self.port),
            "MINDBANK_EMBEDDING_PROVIDER": "openai", "MINDBANK_EMBEDDING_MODEL": model,
            "MINDBANK_EMBEDDING_BASE_URL": embeddings.url + "/v1",
            "MINDBANK_EMBEDDING_API_KEY": "test-key", "MINDBANK_WORKER_LEASE_SECONDS": "1",
            "MINDBANK_WORKER_POLL_SECONDS": "0.05", "MINDBANK_ENABLE_AUTO_CONSOLIDATION": "false",
        }  # fmt: skip
        if previous is not None:
            self.env["MINDBANK_EMBEDDING_PREVIOUS_MODEL"] = previous
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", SERVE, "serve"], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        _wait(self.healthy, 180, "server up")  # a loaded 2-core CI machine can take a minute

    def healthy(self) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, "the server died before the kill"
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def operation(self, op_id: str) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/operations/{op_id}", timeout=10).json())

    def recall(self) -> list[str]:
        response = httpx.post(f"{self.base}/memories/recall", json={"query": "Where is boat 77 moored?"}, timeout=30)
        assert response.status_code == 200, response.text
        return [r["text"] for r in response.json()["results"]]


def embedded_with(seen: list[Seen], model: str) -> int:
    """Texts the embeddings server was asked to embed with ``model``."""
    return sum(len(s.body["input"]) for s in seen if s.body.get("model") == model and isinstance(s.body["input"], list))


VectorCheck = Callable[[Store], None]


def kill_mid_reembedding(
    database: str, server: Server, embeddings: FakeServer, *, memories: int, old: tuple[str, int],
    new: tuple[str, int], on_old: VectorCheck, on_new: VectorCheck,
) -> None:  # fmt: skip
    """Move the filled bank ``b`` (``memories`` memories on ``old``) to ``new`` with ``server`` (embedding through
    ``embeddings``), SIGKILL it once a fifth of the bank is staged, check the bank is wholly on ``old`` (``on_old``:
    every vector is the old model's), restart it, let the operation resume and commit, and check the bank is wholly
    on ``new`` (``on_new``), nothing lost or doubled, recall answers. A retain and a recall arrive mid-way."""
    total = memories + 1  # and the retain that arrives meanwhile
    server.start()
    try:
        op_id = httpx.post(f"{server.base}/reembed", timeout=10).json()["operation_id"]
        # a retain and a recall while the re-embedding runs: served with the bank's old model
        retained = httpx.post(f"{server.base}/memories", json={"items": [{"content": "Bo moored boat 77 late."}]},
                              timeout=60)  # fmt: skip
        assert retained.status_code == 200, retained.text
        assert server.recall()

        def some_parts_staged() -> bool:
            progress = server.operation(op_id)["progress"]
            return bool(progress) and progress["processed"] >= memories // 5

        _wait(some_parts_staged, 600, "parts staged")
        staged = server.operation(op_id)["progress"]["processed"]
        server.kill()
        assert staged < total

        store = open_store(database, dimension=new[1])
        try:  # the bank is wholly on the old model: nothing switched, nothing mixed
            assert store.bank_embedding_model("b") == old
            assert store.count_memories("b") == total
            on_old(store)
        finally:
            store.close()

        seen_before = len(embeddings.seen)
        server.start()
        _wait(lambda: server.operation(op_id)["status"] == "completed", 900, "re-embedding completed")
        op = server.operation(op_id)
        assert op["result_metadata"]["switched"] is True and op["result_metadata"]["memories"] == total
        # resumed, not restarted: only what no committed part had staged was embedded again (and the probe)
        resumed = embedded_with(embeddings.seen[seen_before:], new[0])
        assert resumed <= total - staged + 1, (resumed, staged)
        assert any("boat 77" in text for text in server.recall())
        server.kill()
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.kill()

    store = open_store(database, dimension=new[1])
    try:  # wholly on the new model, nothing lost or doubled
        assert store.bank_embedding_model("b") == new
        assert store.count_memories("b") == total
        on_new(store)
        assert store.reembed_counts("b", new[0]).staged == 0
    finally:
        store.close()


def test_a_killed_reembedding_leaves_one_model_and_resumes(
    embedding_database: str, fake_embeddings: FakeServer
) -> None:
    store = open_store(embedding_database, dimension=DIM)
    try:
        fill(store, np.asarray([hashed_vector(note(i), DIM, "embed-a") for i in range(MEMORIES)], np.float32),
             ("embed-a", DIM))  # fmt: skip
    finally:
        store.close()
    kill_mid_reembedding(
        embedding_database, Server(embedding_database, fake_embeddings), fake_embeddings, memories=MEMORIES,
        old=("embed-a", DIM), new=("embed-b", DIM), on_old=lambda s: assert_vectors_are(s, "b", "embed-a"),
        on_new=lambda s: assert_vectors_are(s, "b", "embed-b"),
    )  # fmt: skip
