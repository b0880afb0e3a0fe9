"""Probes for operators: liveness (the process answers), readiness (the database answers and its schema is
current; the worker's heartbeat is reported, never required), and the heartbeat a running worker writes.

Readiness never fails an API-only process (``mindbank serve --no-worker`` beside ``mindbank worker`` processes):
workers are reported as a field. The database probe runs in a daemon thread with a time limit, so a hung database
makes readiness fail fast instead of hanging the probe.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from datetime import timedelta
from typing import Any

from mindbank.domain.resources import WorkerHeartbeat
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.store.base import Store
from mindbank.version import __version__

STARTED = time.monotonic()
READY_TIMEOUT_SECONDS = 5.0  # the database probe's limit
LIVE_BEATS = 3  # a worker silent for this many heartbeat intervals no longer counts as active


class Heartbeat:
    """A daemon thread recording, every ``interval`` seconds, that this process runs a worker; dropped on stop."""

    def __init__(self, store: Store, worker_id: str, interval: float) -> None:
        self.store = store
        self.worker_id = worker_id
        self.interval = max(0.05, interval)
        self.started_at = utcnow()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> None:
        """Record one heartbeat now."""
        self.store.beat(WorkerHeartbeat(self.worker_id, socket.gethostname(), os.getpid(), self.started_at,
                                           utcnow()))  # fmt: skip

    def start(self) -> None:
        """Beat now (before returning, so a readiness probe right after start sees this worker) and then every
        interval, until :meth:`stop`."""
        if self._thread is not None:
            return
        with contextlib.suppress(Exception):  # a database hiccup must not stop the worker from starting
            self.beat()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=f"{self.worker_id}-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and forget this worker (a clean stop is not a dead worker)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(5)
        self._thread = None
        with contextlib.suppress(Exception):  # the database may be gone at shutdown; the row then ages out
            self.store.drop_heartbeat(self.worker_id)

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(Exception):  # a database hiccup must not kill the heartbeat
                self.beat()


class HealthService(ServiceCore):
    """Liveness and readiness; ``heartbeat`` is this process's worker heartbeat (reported, never required)."""

    def __init__(self, state: ServiceState, *, heartbeat: Heartbeat) -> None:
        super().__init__(state)
        self.heartbeat = heartbeat

    def liveness(self) -> dict[str, Any]:
        """``LivenessResponse``: answering is the check (no database read)."""
        return {"status": "alive", "version": __version__, "uptime_seconds": round(time.monotonic() - STARTED, 3)}

    def health_live(self) -> dict[str, Any]:
        """Alias of :meth:`liveness` (the client's name)."""
        return self.liveness()

    def health_ready(self) -> dict[str, Any]:
        """The readiness report of :meth:`readiness` (the client's name; ``status`` says whether it is ready)."""
        return self.readiness()[1]

    def readiness(self, *, timeout: float = READY_TIMEOUT_SECONDS) -> tuple[bool, dict[str, Any]]:
        """``(ready, report)``: ready when the database answers within ``timeout`` seconds and every shipped
        migration is applied. ``workers`` reports the workers whose heartbeat is recent (any process) and whether
        this process runs one; it never makes the answer not ready."""
        result: dict[str, Any] = {}

        def probe() -> None:
            try:
                result["schema"] = self.store.schema_status()
                since = utcnow() - timedelta(seconds=LIVE_BEATS * self.settings.worker_heartbeat_seconds)
                result["workers"] = self.store.list_heartbeats(since)
            except Exception as exc:  # any failure to read is "not reachable", reported, never raised
                result["error"] = f"{type(exc).__name__}: {exc}"

        thread = threading.Thread(target=probe, name="readiness-probe", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            result.setdefault("error", f"the database did not answer within {timeout:g} s")
        report: dict[str, Any] = {"version": __version__, "database": "connected"}
        if "schema" not in result:
            report.update(database="unreachable", error=result.get("error"))
            ready = False
        else:
            applied, shipped = result["schema"]
            ready = applied >= shipped
            report.update(schema_version=applied, expected_schema_version=shipped, migrations_applied=ready)
        workers = result.get("workers") or []
        report["workers"] = {
            "active": len(workers),
            "last_heartbeat_at": to_iso(workers[0].last_seen_at) if workers else None,
            "in_process": self.heartbeat.running,
        }
        report["status"] = "ready" if ready else "not_ready"
        return ready, report
