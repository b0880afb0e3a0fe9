"""Service events: what happened (a retain, a consolidation, a mental-model refresh), told to whoever listens.

The facade owns one :class:`EventHub`; the webhook dispatcher and the Prometheus metrics subscribe to it, so a
feature that reacts to service activity is an observer, not a call scattered through the code that does the work.
Events are emitted after the work committed, in the thread that did it; an observer that raises is logged and
never breaks that work (nor the other observers).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mindbank.domain.timeutil import utcnow

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServiceEvent:
    """One event: ``type`` (a webhook event type such as ``retain.completed`` or ``mental_model.refreshed``), the
    bank, the operation it came from (None for synchronous work), ``status`` (``completed`` or ``failed``) and its
    ``data`` (JSON-able)."""

    type: str
    bank_id: str
    data: dict[str, Any]
    operation_id: str | None = None
    status: str = "completed"
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    at: datetime = field(default_factory=utcnow)


Observer = Callable[[ServiceEvent], None]


class EventHub:
    """Observers of service events (thread-safe). :meth:`emit` calls each in subscription order."""

    def __init__(self) -> None:
        self._observers: list[Observer] = []
        self._lock = threading.Lock()

    def subscribe(self, observer: Observer) -> None:
        """Call ``observer`` with every event emitted from now on."""
        with self._lock:
            self._observers.append(observer)

    def emit(self, event: ServiceEvent) -> None:
        """Tell every observer; one that raises is logged and skipped."""
        with self._lock:
            observers = list(self._observers)
        for observer in observers:
            try:
                observer(event)
            except Exception:  # an observer (webhooks, metrics) must never break the work it watches
                log.exception("event observer %r failed on %s", observer, event.type)
