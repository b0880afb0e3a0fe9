"""Health: the schema version and worker heartbeats."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from mindbank.domain.resources import WorkerHeartbeat


class HealthStore(Protocol):
    """``schema_status`` returns ``(applied version, latest known version)``."""

    def schema_status(self) -> tuple[int, int]: ...
    def beat(self, heartbeat: WorkerHeartbeat) -> None: ...
    def list_heartbeats(self, since: datetime) -> list[WorkerHeartbeat]: ...
    def drop_heartbeat(self, worker_id: str) -> None: ...
