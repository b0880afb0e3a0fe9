"""The scheduler thread: calls a tick function every ``tick_seconds`` (cron-driven refreshes live in the tick)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from mindbank.domain.timeutil import utcnow

log = logging.getLogger(__name__)


class Scheduler:
    """Runs ``tick(now)`` every ``tick_seconds`` in a daemon thread; ``tick_seconds <= 0`` disables it.

    Several processes may each run a scheduler: the tick must be idempotent (refresh submissions coalesce).
    """

    def __init__(
        self, tick: Callable[[datetime], object], tick_seconds: float, *, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.tick = tick
        self.tick_seconds = tick_seconds
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start ticking (no-op when disabled or already running)."""
        if self._thread is not None or self.tick_seconds <= 0:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="mindbank-scheduler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current tick."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            try:
                self.tick(self.clock())
            except Exception:
                log.exception("scheduler tick failed")
