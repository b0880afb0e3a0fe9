"""Crash safety: a worker killed with SIGKILL mid-refresh leaves a retryable operation, never a half write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank

SLOW_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mindbank.config import Settings
    from mindbank.service.facade import MindBank
    from mindbank.testing import ScriptedSynthesizer

    db, marker = sys.argv[1], Path(sys.argv[2])

    def stall(facts):
        marker.write_text("synthesizing")
        time.sleep(120)  # killed long before this returns

    settings = Settings(database_url=db, worker_lease_seconds=1.0, enable_auto_consolidation=False)
    mb = MindBank.open(settings, synthesizer=ScriptedSynthesizer(compose_script=stall))
    mb.run_pending()
    """
)


def test_sigkill_mid_refresh_is_recovered_by_the_next_worker(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    db = str(tmp_path / "crash.db")
    settings = Settings(database_url=db, worker_lease_seconds=1.0, enable_auto_consolidation=False)
    mb = MindBank.open(settings, embedder=embedder)
    mb.retain("b", [RetainItem(content="Ada: I am restoring a sailing boat in the harbour.", tags=("user:ada",))])
    model_id, _ = mb.create_mental_model("b", name="Ada", source_query="What is Ada doing?", tags=["user:ada"])
    mb.run_pending()
    old = mb.get_mental_model("b", model_id)
    acknowledged = mb.retain("b", [RetainItem(content="Ada: The boat got a new mast today.", tags=("user:ada",))])
    op_id = mb.refresh_mental_model("b", model_id)
    mb.close()

    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", SLOW_WORKER, db, str(marker)], env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "worker exited before synthesizing"
            assert time.monotonic() < deadline, "worker never reached the refresh"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()

    mb = MindBank.open(settings, embedder=embedder)
    try:
        crashed = mb.get_operation("b", op_id)
        assert crashed.status == "processing"  # claimed by the dead worker
        mid = mb.get_mental_model("b", model_id)
        assert mid.content == old.content and mid.last_memory_seen_at == old.last_memory_seen_at  # never partial
        assert len(mb.store.get_memories("b", acknowledged.memory_ids)) == len(acknowledged.memory_ids)
        time.sleep(1.1)  # the dead worker's lease expires
        mb.run_pending()
        assert mb.get_operation("b", op_id).status == "completed"
        new = mb.get_mental_model("b", model_id)
        assert "new mast" in new.content and new.is_stale is False
    finally:
        mb.close()
