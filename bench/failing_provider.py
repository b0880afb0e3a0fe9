"""``python -m bench refresh-cost --failing-provider [--hours H] [--database-url URL]``: what a provider that always
times out costs over a simulated day (automatic spend must stay bounded: backoff, breaker, budget).

A bank with two auto-refreshing models on its one tag — one ``refresh_after_consolidation``, one ``refresh_cron``
every 5 minutes — gets a write in scope every 30 s of simulated time (an injected clock drives the worker, the
scheduler, the backoff and the LLM client's own retry waits; nothing sleeps for real). The refresh LLM is the real
``openai`` SDK against a local HTTP server that never answers within the client's timeout. Everything else runs at
its defaults: 3 client retries per call, 3 worker retries per operation, backoff 5 min doubling to 6 h, breaker at
3 consecutive failures. Reported per model: LLM calls over the day (from the spend ledger, checked against the
requests the server received), recorded failures, whether the breaker opened. Target: at most 50 LLM calls per
model per day. Runs on SQLite, and on PostgreSQL with ``--database-url`` or ``MINDBANK_TEST_POSTGRES_URL``.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, load_embedder, machine_info, write_json
from mindbank.config import Settings
from mindbank.domain.records import RetainItem
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import ManagedLLM
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store
from mindbank.testing import FakeClock

BANK = "bench-failing-provider"
TAG = "user:sam"
WRITE_EVERY_S = 30
TICK_EVERY_S = 60
CLIENT_TIMEOUT_S = 0.05
TARGET_CALLS_PER_DAY = 50
TOPICS = ("the allotment", "a pottery class", "the marathon plan", "the kitchen repaint", "a trip to Porto",
          "the choir concert", "the bike repair", "a new sourdough starter")  # fmt: skip


@contextmanager
def silent_server() -> Iterator[tuple[str, list[float]]]:
    """An HTTP server on 127.0.0.1 that holds every request past the client's timeout; yields its URL and the list
    of request arrival times."""
    seen: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(time.monotonic())
            self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(CLIENT_TIMEOUT_S * 10)  # the client gave up long ago

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def sibling_database(url: str, suffix: str) -> str:
    """A database beside the one ``url`` names (``<name>_<suffix>``, created with the vector extension when
    missing): the test server's own database is the template the test suite clones, so a benchmark must not
    migrate it."""
    import psycopg

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{suffix}"
    with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    target = parts._replace(path="/" + name).geturl()
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return target


def simulate(url: str, embedder: Embedder, hours: float, console: Console) -> dict[str, Any]:
    """One simulated run on the store at ``url``; returns its figures."""
    clock = FakeClock()  # simulated time: moved only by the loop and the client's retry waits
    settings = Settings(database_url=url, enable_auto_consolidation=True)
    # every timed-out call is logged with its traceback by the worker; thousands of them would drown the table
    logging.getLogger("mindbank").setLevel(logging.CRITICAL)
    with silent_server() as (llm_url, seen):
        provider = OpenAIProvider(model="always-times-out", api_key="sk-bench", base_url=llm_url,
                                  timeout=CLIENT_TIMEOUT_S)  # fmt: skip
        llm = ManagedLLM(provider, max_retries=settings.llm_max_retries, sleep=clock.advance)
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        mb = MindBank(store=store, embedder=embedder, settings=settings, llms={"refresh": llm}, clock=clock)
        try:
            store.delete_bank(BANK)
            mb.retain(BANK, [RetainItem(content="Sam: I keep a diary of small projects.", tags=(TAG,))])
            for model_id, trigger in (("after-consolidation", {"refresh_after_consolidation": True}),
                                      ("cron", {"refresh_cron": "*/5 * * * *"})):  # fmt: skip
                mb.create_mental_model(BANK, id=model_id, name=f"Sam ({model_id})",
                                       source_query="What is Sam working on?", tags=[TAG], trigger=trigger)  # fmt: skip
            started = time.perf_counter()
            steps = int(hours * 3600 / WRITE_EVERY_S)
            for step in range(steps):
                clock.advance(WRITE_EVERY_S)
                topic = TOPICS[step % len(TOPICS)]
                mb.retain(BANK, [RetainItem(content=f"Sam: Update {step} on {topic}.", tags=(TAG,))])
                if (step * WRITE_EVERY_S) % TICK_EVERY_S == 0:
                    mb.scheduler_tick(clock())
                mb.run_pending()
            seconds = time.perf_counter() - started
            models = {}
            for model_id in ("after-consolidation", "cron"):
                model = mb.get_mental_model(BANK, model_id)
                status = model.refresh_status or {}
                history = mb.mental_model_history(BANK, model_id)
                models[model_id] = {
                    "llm_calls": status["spend"]["total"]["llm_calls"],
                    "recorded_failures": sum(1 for h in history if h.get("kind") == "refresh_failed"),
                    "consecutive_failures": status["consecutive_failures"],
                    "breaker_open": status["breaker_open"],
                    "content_empty": model.content == "",
                }
            return {
                "simulated_hours": hours,
                "writes": steps,
                "server_requests": len(seen),
                "models": models,
                "max_llm_calls_per_model": max(m["llm_calls"] for m in models.values()),
                "wall_seconds": round(seconds, 1),
            }
        finally:
            mb.close()


def run(
    *, hours: float = 24.0, database_url: str | None = None, json_out: Path | None = None,
    console: Console | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run on SQLite and, when a PostgreSQL URL is given (or ``MINDBANK_TEST_POSTGRES_URL`` is set), on PostgreSQL;
    prints a table and writes JSON. Returns the report."""
    console = console or Console(width=120)
    embedder, _ = load_embedder()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mindbank-failing-") as folder:
        runs["sqlite"] = simulate(str(Path(folder) / "failing.db"), embedder, hours, console)
    postgres = database_url
    if postgres is None and os.environ.get("MINDBANK_TEST_POSTGRES_URL"):
        postgres = sibling_database(os.environ["MINDBANK_TEST_POSTGRES_URL"], "bench")
    if postgres:
        runs["postgres"] = simulate(postgres, embedder, hours, console)
    table = Table(title=f"a provider that always times out, {hours:g} simulated hours, a write every 30 s")
    for column in ("store", "model", "LLM calls", "recorded failures", "breaker open", "server requests"):
        table.add_column(column, justify="right")
    for store, result in runs.items():
        for model_id, m in result["models"].items():
            table.add_row(store, model_id, str(m["llm_calls"]), str(m["recorded_failures"]),
                          "yes" if m["breaker_open"] else "no", str(result["server_requests"]))  # fmt: skip
    console.print(table)
    worst = max(r["max_llm_calls_per_model"] for r in runs.values())
    console.print({"max_llm_calls_per_model": worst, "simulated_hours": hours, "target_per_day": TARGET_CALLS_PER_DAY})
    report = {
        "benchmark": "refresh-cost --failing-provider",
        "command": f"python -m bench refresh-cost --failing-provider --hours {hours:g}"
        + (" --database-url URL" if database_url else ""),
        "postgres": None if postgres is None else ("--database-url" if database_url else "<test database>_bench"),
        "machine": machine_info(),
        "runs": runs,
        "max_llm_calls_per_model": worst,
        "target_per_model_per_day": TARGET_CALLS_PER_DAY,
    }
    write_json(json_out or RESULTS_DIR / "refresh-cost-failing-provider.json", report)
    return report
