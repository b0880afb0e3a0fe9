"""Recall latency as a user sees it: ``POST /memories/recall`` over loopback HTTP, SQLite then PostgreSQL.

Per store, a fresh ``mindbank serve`` subprocess (default settings) on a fresh database gets a bank of 1,000 short
synthetic memories (``bench.load.memory_text``, retained in batches of 200), each a turn of a 20-turn conversation
context, a minute apart (so the neighbour expansion runs its lookup); the timing starts once the consolidation
those retains queued has finished. A stdlib ``http.client`` connection
(keep-alive, the kind of client the side-by-side with the reference used) then asks 10 warm-up queries that are
not timed, and 50 distinct queries (:data:`QUERIES`) each once, so the query-embedding cache never answers.
Each request's wall time, from sending the body to reading the whole response, is one sample; the report gives
p50, p95, mean and max in milliseconds, and the server process's CPU time per timed query (``server_cpu_ms``,
from ``/proc``; all its threads), which a busy machine inflates far less than the wall times.

Two more passes on the same server and connection split that time (``parts``): ``cached``, the 50 timed queries
asked again, so each query's vector comes from the embedder's cache (the first pass less the query embedding),
and ``floor``, :data:`FLOOR_REQUESTS` ``GET /version`` requests (what any request costs: HTTP, the middleware
and the app-wide dependencies, the hand-off to a worker thread). The headline figures stay those of the first
pass.

Target: p95 ≤ 7 ms on SQLite, one tenth of the reference's 68.7 ms measured side by side on this machine.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, machine_info, write_json
from bench.load import NAMES, THINGS, WHENS, Server, memory_text, postgres_database

BANK = "latency"
MEMORIES = 1_000
TIMED = 50
WARM_UP = 10
TARGET_P95_MS = 7.0
FLOOR_REQUESTS = 200
SESSION = 20  # memories per conversation context
T0 = datetime(2024, 1, 1, tzinfo=UTC)
# distinct questions over the synthetic bank's vocabulary: a name, a thing and a time each, no two alike
QUERIES = [f"What did {NAMES[i % 20]} do with {THINGS[i % 10]} {WHENS[i // 10]}?" for i in range(WARM_UP + TIMED)]


def _post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.read()


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "n": len(ordered),
        "p50_ms": round(at(0.50), 2),
        "p95_ms": round(at(0.95), 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "max_ms": round(ordered[-1], 2),
    }


def _item(i: int) -> dict[str, Any]:
    """Memory ``i`` as a retain item: a turn of a conversation of :data:`SESSION` turns, a minute apart, so recall's
    neighbour expansion finds the turns said before and after each hit (as it does in a real chat bank)."""
    when = T0 + timedelta(minutes=i)
    return {"content": memory_text(i), "context": f"chat {i // SESSION}", "timestamp": when.isoformat()}


def _settle(conn: http.client.HTTPConnection, timeout_s: float = 600.0) -> None:
    """Wait until the bank has no pending or running operation (the consolidation its retains queued), so the
    timed queries measure recall, not recall beside a background consolidation."""
    deadline = time.monotonic() + timeout_s
    for status in ("pending", "processing"):
        while True:
            conn.request("GET", f"/v1/default/banks/{BANK}/operations?status={status}")
            response = conn.getresponse()
            if not json.loads(response.read())["operations"]:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"operations still {status} after {timeout_s:.0f} s")
            time.sleep(0.5)


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) the process ``pid`` has used, from ``/proc`` (None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(base_port: int, pid: int | None = None) -> dict[str, Any]:
    """Fill the bank and time the queries against the server on ``127.0.0.1:base_port``; with the server's
    ``pid``, also the CPU time it used per timed query (``server_cpu_ms``: steadier than wall time on a busy
    machine, where the wall clock also counts the time other processes held the cores)."""
    conn = http.client.HTTPConnection("127.0.0.1", base_port, timeout=120)
    path = f"/v1/default/banks/{BANK}/memories"
    for start in range(0, MEMORIES, 200):
        items = [_item(i) for i in range(start, min(MEMORIES, start + 200))]
        status, body = _post(conn, path, {"items": items})
        if status != 200:
            raise RuntimeError(f"retain failed: {status} {body[:200]!r}")
    _settle(conn)
    for query in QUERIES[:WARM_UP]:  # not timed; all queries are distinct, so none is answered from a cache
        _recall(conn, path, query)
    timed = QUERIES[WARM_UP:]
    report = _timed(pid, [lambda q=q: _recall(conn, path, q) for q in timed])
    report["parts"] = {
        "cached": _timed(pid, [lambda q=q: _recall(conn, path, q) for q in timed]),
        "floor": _timed(pid, [lambda: _get(conn, "/version")] * FLOOR_REQUESTS),
    }
    conn.close()
    return report


def _recall(conn: http.client.HTTPConnection, path: str, query: str) -> None:
    status, body = _post(conn, f"{path}/recall", {"query": query})
    if status != 200 or not json.loads(body)["results"]:
        raise RuntimeError(f"recall failed: {status} {body[:200]!r}")


def _get(conn: http.client.HTTPConnection, path: str) -> None:
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path} failed: {response.status} {body[:200]!r}")


def _timed(pid: int | None, requests: list[Any]) -> dict[str, Any]:
    """Run ``requests`` (callables) one after the other: their wall-time percentiles and, with the server's
    ``pid``, its CPU time per request (``server_cpu_ms``)."""
    samples: list[float] = []
    cpu_before = None if pid is None else process_cpu_s(pid)
    for request in requests:
        began = time.perf_counter()
        request()
        samples.append((time.perf_counter() - began) * 1000)
    cpu_after = None if pid is None else process_cpu_s(pid)
    report = _percentiles(samples)
    if cpu_before is not None and cpu_after is not None:
        report["server_cpu_ms"] = round((cpu_after - cpu_before) * 1000 / len(samples), 3)
    return report


def run(*, database_url: str | None, json_out: Path | None = None, console: Console | None = None) -> dict[str, Any]:
    """Measure SQLite, then PostgreSQL when ``database_url`` is given; print, write JSON, return the report."""
    console = console or Console()
    stores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mindbank-latency-") as folder:
        plans: list[tuple[str, str, Any]] = [("sqlite", str(Path(folder) / "latency.db"), None)]
        if database_url:
            url, drop = postgres_database(database_url)
            plans.append(("postgres", url, drop))
        for name, url, drop in plans:
            server = Server(url, Path(folder) / f"{name}.log")
            try:
                stores[name] = measure(server.port, server.proc.pid)
            finally:
                server.stop()
                if drop is not None:
                    drop()
    table = Table(title=f"POST /memories/recall over loopback HTTP: {MEMORIES} memories, {TIMED} distinct queries")
    for column in ("store", "p50 ms", "p95 ms", "mean ms", "max ms", "server CPU ms"):
        table.add_column(column, justify="right" if column != "store" else "left")
    keys = ("p50_ms", "p95_ms", "mean_ms", "max_ms", "server_cpu_ms")
    for name, row in stores.items():
        table.add_row(name, *(f"{row[key]:.2f}" if key in row else "-" for key in keys))
        for part, label in (("cached", "query vector cached"), ("floor", "GET /version")):
            cells = row["parts"][part]
            table.add_row(f"  {label}", *(f"{cells[key]:.2f}" if key in cells else "-" for key in keys))
    console.print(table)
    report = {
        "benchmark": "recall-latency",
        "command": command_line(),
        "machine": machine_info(),
        "settings": {
            "memories": MEMORIES,
            "timed_queries": TIMED,
            "warm_up_queries": WARM_UP,
            "floor_requests": FLOOR_REQUESTS,
        },
        "stores": stores,
        "target_p95_ms": TARGET_P95_MS,
        "met": {name: row["p95_ms"] <= TARGET_P95_MS for name, row in stores.items()},
    }
    out = json_out or RESULTS_DIR / "recall-latency.json"
    write_json(out, report)
    console.print(f"wrote {out}")
    return report
