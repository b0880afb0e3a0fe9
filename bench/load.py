"""Concurrent load on a real server process, the embedded default and PostgreSQL one after the other in one run.

Per store, a fresh ``mindbank serve`` (API and in-process worker, default settings) is started as a subprocess on a
fresh database, then:

1. **Set-up.** A bank of 2,000 short synthetic memories ("<name> <verb> <thing> <when> (note i)"), retained in
   synchronous batches of 200, and one mental model (its first refresh awaited).
2. **Mixed load, twice.** 16 client threads for ``--seconds`` (60) each; every request is drawn 40 %
   ``POST /memories/recall`` (a query from a fixed set of 200), 25 % ``GET /mental-models?detail=metadata``, 20 %
   ``GET /memories/{id}`` (one of 50 ids), 15 % ``POST /memories`` with one short item. Throughput, p50 and p99 per
   run, and the server's RSS after each run (flat within ±10 % is the target).
3. **Readers during retains.** 4 reader threads (the read mix above) while 20 synchronous retains of 25 items each
   run at once: the readers' p99.
4. **1 MB async retain.** One memory of 1,000,000 characters, ``"async": true``: seconds from the accepted response
   to the operation reading ``completed``.

Targets (on 2 cores): the embedded default's throughput ≥ 0.9 × PostgreSQL's in the same run and its
p99 ≤ 500 ms; RSS flat ±10 %; readers' p99 ≤ 250 ms during the retains; the 1 MB retain ≤ 10 s.
"""

from __future__ import annotations

import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from rich.console import Console
from rich.table import Table

from bench.common import RESULTS_DIR, command_line, machine_info, write_json

BANK = "load"
NAMES = ["Ada", "Bo", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Max", "Nia", "Oto",
         "Pia", "Quin", "Rae", "Sol", "Tia"]  # fmt: skip
VERBS = ["bought", "repaired", "painted", "sold", "borrowed", "planted", "cooked", "visited", "found", "lost"]
THINGS = ["a red bicycle", "the old piano", "a sailing boat", "tomato seedlings", "a wool scarf", "the garden shed",
          "a mountain map", "lemon cake", "a vintage camera", "the kitchen table"]  # fmt: skip
WHENS = ["on Monday", "last weekend", "in March", "yesterday", "this morning", "before the trip", "after work",
         "in the summer", "on her birthday", "during the storm"]  # fmt: skip
MIX = (("recall", 0.40), ("models", 0.25), ("get", 0.20), ("retain", 0.15))
READ_MIX = (("recall", 0.40 / 0.85), ("models", 0.25 / 0.85), ("get", 0.20 / 0.85))
BIG_CHARS = 1_000_000


def memory_text(i: int) -> str:
    """The i-th synthetic memory."""
    r = random.Random(i)
    return f"{r.choice(NAMES)} {r.choice(VERBS)} {r.choice(THINGS)} {r.choice(WHENS)} (note {i})"


QUERIES = [f"What did {NAMES[i % 20]} do with {THINGS[(i * 7) % 10]} {WHENS[(i * 3) % 10]}?" for i in range(200)]


def big_text(chars: int = BIG_CHARS) -> str:
    """``chars`` characters of prose in paragraphs (about 2,500 facts of the extractive splitter per MB)."""
    r = random.Random(7)
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        sentences = []
        for _ in range(r.randint(3, 12)):
            words = [r.choice(NAMES + VERBS + [w for t in THINGS for w in t.split()]) for _ in range(r.randint(8, 20))]
            sentences.append(" ".join(words).capitalize() + ".")
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:chars]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``mindbank serve`` in a subprocess on ``database_url``; its log goes to ``log``."""

    def __init__(self, database_url: str, log: Path) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MINDBANK_DATABASE_URL": database_url, "MINDBANK_PORT": str(self.port)}
        self._log = log.open("w")
        code = "import sys; from mindbank.cli import main; sys.exit(main(['serve']))"
        self.proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: see {log}")
            try:
                if httpx.get(f"{self.base}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)

    def rss_mb(self) -> float:
        """Resident set size of the server process (MiB), from /proc."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._log.close()


def _url(base: str, path: str) -> str:
    return f"{base}/v1/default/banks/{BANK}{path}"


def wait_operation(client: httpx.Client, base: str, op_id: str, timeout: float = 900.0, poll: float = 0.05) -> str:
    """Poll until the operation is terminal; returns its status."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(_url(base, f"/operations/{op_id}")).json()["status"]
        if status in ("completed", "failed", "cancelled"):
            return str(status)
        time.sleep(poll)
    raise TimeoutError(op_id)


def populate(base: str, memories: int = 2000, batch: int = 200) -> list[str]:
    """Retain the synthetic bank, create the mental model; returns 50 memory ids for GETs."""
    with httpx.Client(timeout=600) as c:
        for start in range(0, memories, batch):
            items = [{"content": memory_text(i)} for i in range(start, min(memories, start + batch))]
            c.post(_url(base, "/memories"), json={"items": items}).raise_for_status()
        body = {"name": "People", "source_query": "What are people doing, and with what?"}
        created = c.post(_url(base, "/mental-models"), json=body)
        created.raise_for_status()
        wait_operation(c, base, created.json()["operation_id"])
        listed = c.get(_url(base, "/memories/list"), params={"limit": 50}).json()["items"]
    return [m["id"] for m in listed]


def _request(client: httpx.Client, base: str, kind: str, r: random.Random, ids: list[str]) -> int:
    if kind == "recall":
        resp = client.post(_url(base, "/memories/recall"), json={"query": r.choice(QUERIES)})
    elif kind == "models":
        resp = client.get(_url(base, "/mental-models"), params={"detail": "metadata"})
    elif kind == "get":
        resp = client.get(_url(base, f"/memories/{r.choice(ids)}"))
    else:
        text = memory_text(r.randrange(10_000, 10_000_000))
        resp = client.post(_url(base, "/memories"), json={"items": [{"content": text}]})
    return resp.status_code


def _pick(r: random.Random, mix: tuple[tuple[str, float], ...]) -> str:
    x, total = r.random(), 0.0
    for kind, share in mix:
        total += share
        if x < total:
            return kind
    return mix[-1][0]


def _clients(base: str, threads: int, ids: list[str], mix: tuple[tuple[str, float], ...], stop: threading.Event,
             seed: int) -> tuple[list[threading.Thread], list[tuple[str, float, int]]]:  # fmt: skip
    samples: list[tuple[str, float, int]] = []
    lock = threading.Lock()

    def loop(n: int) -> None:
        r = random.Random(seed * 1000 + n)
        mine: list[tuple[str, float, int]] = []
        with httpx.Client(timeout=120) as client:
            while not stop.is_set():
                kind = _pick(r, mix)
                t0 = time.perf_counter()
                try:
                    status = _request(client, base, kind, r, ids)
                except httpx.HTTPError:
                    status = 0
                mine.append((kind, time.perf_counter() - t0, status))
        with lock:
            samples.extend(mine)

    workers = [threading.Thread(target=loop, args=(n,)) for n in range(threads)]
    return workers, samples


def _summary(samples: list[tuple[str, float, int]], seconds: float) -> dict[str, Any]:
    def stats(values: list[float]) -> dict[str, float]:
        if not values:
            return {"n": 0}
        ordered = sorted(values)
        p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
        return {"n": len(values), "p50_ms": round(p(0.50) * 1000, 1), "p99_ms": round(p(0.99) * 1000, 1),
                "mean_ms": round(statistics.fmean(values) * 1000, 1)}  # fmt: skip

    kinds = sorted({k for k, _, _ in samples})
    return {
        "requests": len(samples),
        "errors": sum(1 for _, _, s in samples if s != 200),
        "seconds": round(seconds, 1),
        "requests_per_s": round(len(samples) / seconds, 1),
        **stats([t for _, t, _ in samples]),
        "by_kind": {k: stats([t for kk, t, _ in samples if kk == k]) for k in kinds},
    }


def mixed_load(base: str, ids: list[str], seconds: float, threads: int = 16, seed: int = 1) -> dict[str, Any]:
    """``threads`` clients on the 40/25/20/15 mix for ``seconds``."""
    stop = threading.Event()
    workers, samples = _clients(base, threads, ids, MIX, stop, seed)
    start = time.perf_counter()
    for w in workers:
        w.start()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    return _summary(samples, time.perf_counter() - start)


def readers_during_retains(base: str, ids: list[str], retains: int = 20, items: int = 25) -> dict[str, Any]:
    """4 readers on the read mix while ``retains`` synchronous retains of ``items`` items run at once."""
    stop = threading.Event()
    readers, samples = _clients(base, 4, ids, READ_MIX, stop, seed=99)
    for w in readers:
        w.start()
    time.sleep(1.0)  # readers in steady state before the retains land
    begin = len(samples)  # (samples are gathered at the end; the window is the retains' span)
    durations: list[float] = []

    def one(n: int) -> None:
        batch = [{"content": memory_text(1_000_000 + n * items + i)} for i in range(items)]
        t0 = time.perf_counter()
        with httpx.Client(timeout=600) as client:
            client.post(_url(base, "/memories"), json={"items": batch}).raise_for_status()
        durations.append(time.perf_counter() - t0)

    writers = [threading.Thread(target=one, args=(n,)) for n in range(retains)]
    start = time.perf_counter()
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    span = time.perf_counter() - start
    stop.set()
    for w in readers:
        w.join()
    del begin
    return {"retains": retains, "items_each": items, "retains_seconds": round(span, 2),
            "retain_p50_ms": round(statistics.median(durations) * 1000, 1),
            "readers": _summary(samples, span)}  # fmt: skip


def big_async_retain(base: str, chars: int = BIG_CHARS, *, timeout_s: float = 900.0) -> dict[str, Any]:
    """One ``chars``-character memory retained async: accepted → completed, in seconds (waiting up to
    ``timeout_s``)."""
    content = big_text(chars)
    with httpx.Client(timeout=600) as c:
        t0 = time.perf_counter()
        resp = c.post(_url(base, "/memories"), json={"items": [{"content": content}], "async": True})
        resp.raise_for_status()
        accepted = time.perf_counter()
        status = wait_operation(c, base, resp.json()["operation_id"], timeout=timeout_s, poll=0.05)
        done = time.perf_counter()
        op = c.get(_url(base, f"/operations/{resp.json()['operation_id']}")).json()
    return {"chars": chars, "status": status, "accept_s": round(accepted - t0, 2),
            "accepted_to_completed_s": round(done - accepted, 2),
            "memories": (op.get("result_metadata") or {}).get("unit_ids_count")}  # fmt: skip


def postgres_database(url: str) -> tuple[str, Any]:
    """A fresh database (with pgvector) beside the one ``url`` names; returns its URL and a dropper."""
    import psycopg

    name = f"mindbank_load_{uuid.uuid4().hex[:8]}"
    admin = urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    fresh = urlsplit(url)._replace(path=f"/{name}").geturl()
    with psycopg.connect(fresh, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return fresh, drop


def run_store(
    name: str, database_url: str, seconds: float, folder: Path, console: Console, big_chars: int = BIG_CHARS
) -> dict[str, Any]:
    """Every phase against one store; returns its report."""
    console.print(f"[bold]{name}[/]: starting the server (load average {os.getloadavg()[0]:.1f})")
    server = Server(database_url, folder / f"{name}.log")
    try:
        t0 = time.perf_counter()
        ids = populate(server.base)
        setup_s = time.perf_counter() - t0
        rss = [server.rss_mb()]
        mixed_load(server.base, ids, min(5.0, seconds))  # warm-up, not reported
        runs = []
        for n in range(2):
            load_avg = round(os.getloadavg()[0], 2)
            result = mixed_load(server.base, ids, seconds, seed=n + 1)
            rss.append(server.rss_mb())
            runs.append({**result, "load_avg_1m": load_avg, "rss_mb_after": rss[-1]})
            console.print(f"  run {n + 1}: {result['requests_per_s']} req/s, p50 {result.get('p50_ms')} ms, "
                          f"p99 {result.get('p99_ms')} ms, errors {result['errors']}, RSS {rss[-1]} MiB")  # fmt: skip
        readers = readers_during_retains(server.base, ids)
        console.print(f"  readers during 20 retains of 25: p99 {readers['readers'].get('p99_ms')} ms")
        big = big_async_retain(server.base, big_chars)
        console.print(
            f"  {big_chars:,}-character async retain: {big['accepted_to_completed_s']} s ({big['memories']} memories)"
        )
        return {
            "store": name,
            "setup_s": round(setup_s, 1),
            "rss_mb": {
                "after_setup": rss[0],
                "after_run_1": rss[1],
                "after_run_2": rss[2],
                "run_2_vs_run_1": round(rss[2] / rss[1] - 1, 3),
            },
            "runs": runs,
            "readers_during_retains": readers,
            "big_async_retain": big,
            "load_avg_1m_end": round(os.getloadavg()[0], 2),
        }
    finally:
        server.stop()


def run(
    *, database_url: str | None, seconds: float = 60.0, stores: tuple[str, ...] = ("sqlite", "postgres"),
    json_out: Path | None = None, console: Console | None = None, big_chars: int = BIG_CHARS,
) -> dict[str, Any]:  # fmt: skip
    """Run every phase on each store in ``stores`` (PostgreSQL needs ``database_url``); print, write JSON, return."""
    console = console or Console()
    report: dict[str, Any] = {"benchmark": "load", "command": command_line(), "machine": machine_info(), "stores": {}}
    with tempfile.TemporaryDirectory(prefix="mindbank-load-") as tmp:
        folder = Path(tmp)
        for store in stores:
            if store == "sqlite":
                report["stores"]["sqlite"] = run_store(
                    "sqlite", str(folder / "load.db"), seconds, folder, console, big_chars
                )
            elif database_url:
                url, drop = postgres_database(database_url)
                try:
                    report["stores"]["postgres"] = run_store("postgres", url, seconds, folder, console, big_chars)
                finally:
                    drop()
            else:
                console.print("[yellow]postgres skipped: pass --database-url postgresql://...[/]")
    report["targets"] = targets(report["stores"])
    _print(report, console)
    write_json(json_out or RESULTS_DIR / "load.json", report)
    return report


def targets(stores: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets, judged on the second (warm) run."""
    out: dict[str, Any] = {}
    lite = stores.get("sqlite")
    if lite is None:
        return out
    warm = lite["runs"][-1]
    pg = stores.get("postgres")
    if pg is not None:
        ratio = warm["requests_per_s"] / max(pg["runs"][-1]["requests_per_s"], 1e-9)
        out["throughput_vs_postgres"] = {"value": round(ratio, 2), "target": ">= 0.9", "met": ratio >= 0.9}
    out["p99_ms"] = {"value": warm.get("p99_ms"), "target": "<= 500", "met": warm.get("p99_ms", 1e9) <= 500}
    drift = lite["rss_mb"]["run_2_vs_run_1"]
    out["rss_flat"] = {"value": drift, "target": "within ±0.10", "met": abs(drift) <= 0.10}
    readers = lite["readers_during_retains"]["readers"].get("p99_ms", 1e9)
    out["readers_p99_ms"] = {"value": readers, "target": "<= 250", "met": readers <= 250}
    big = lite["big_async_retain"]["accepted_to_completed_s"]
    out["big_retain_s"] = {"value": big, "target": "<= 10", "met": big <= 10}
    return out


def _print(report: dict[str, Any], console: Console) -> None:
    table = Table(title="python -m bench load")
    for column in ("store", "run", "req/s", "p50 ms", "p99 ms", "recall p99", "errors", "RSS MiB", "load"):
        table.add_column(column, justify="right")
    for name, s in report["stores"].items():
        for n, r in enumerate(s["runs"], start=1):
            recall = r["by_kind"].get("recall", {}).get("p99_ms")
            table.add_row(name, str(n), str(r["requests_per_s"]), str(r.get("p50_ms")), str(r.get("p99_ms")),
                          str(recall), str(r["errors"]), str(r["rss_mb_after"]), str(r["load_avg_1m"]))  # fmt: skip
    console.print(table)
    for key, t in report["targets"].items():
        console.print(f"{key}: {t['value']} (target {t['target']}) {'met' if t['met'] else 'NOT met'}")
