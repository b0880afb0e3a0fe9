"""The LLM request log (``MINDBANK_LLM_TRACE_ENABLED``): records, per-operation and per-bank reads, purging."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from mindbank.domain.records import LLMRequestRecord


class LLMRequestStore(Protocol):
    """LLM request records; ``llm_request_buckets`` returns ``(bucket start, failed, count, input tokens, output
    tokens)`` per ``unit`` of time since ``since``."""

    def record_llm_request(self, record: LLMRequestRecord) -> None: ...
    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]: ...
    def purge_llm_requests(self, before: datetime) -> int: ...
    def page_llm_requests(
        self, bank_id: str, *, status: str | None, scope: str | None, provider: str | None,
        operation_id: str | None, start: datetime | None, end: datetime | None, limit: int, offset: int,
        operation: str | None = None,
    ) -> tuple[list[LLMRequestRecord], int]: ...  # fmt: skip
    def llm_request_buckets(
        self, bank_id: str, *, since: datetime, unit: str, operation: str | None = None
    ) -> list[tuple[datetime, bool, int, int, int]]: ...
