"""Client methods for operators: health probes, Prometheus metrics and the bank's LLM request log."""

from __future__ import annotations

from datetime import datetime

from mindbank.client._wire import Request, bank_path, clean, endpoint, iso_time
from mindbank.client.resource_models import Liveness, LLMCallList, LLMCallStats, Readiness


def _text(body: str) -> str:
    return body


class MonitoringMethods:
    """``health_live``, ``health_ready``, ``metrics``, ``list_llm_requests``, ``llm_request_stats``."""

    @endpoint
    def health_live(self) -> Request[Liveness]:
        """Liveness: the server answers (no database read)."""
        return Request("GET", "/health/live", Liveness.model_validate)

    @endpoint
    def health_ready(self) -> Request[Readiness]:
        """Readiness: database reachable and migrated (a not-ready server raises ``MindBankHTTPError`` 503 whose
        ``detail`` is the report)."""
        return Request("GET", "/health/ready", Readiness.model_validate)

    @endpoint
    def metrics(self) -> Request[str]:
        """Every metric in the Prometheus text format."""
        return Request("GET", "/metrics", _text, text=True)

    @endpoint
    def list_llm_requests(
        self, bank_id: str, *, status: str | None = None, operation: str | None = None, scope: str | None = None,
        provider: str | None = None, trace_id: str | None = None, start_date: str | datetime | None = None,
        end_date: str | datetime | None = None, limit: int = 50, offset: int = 0,
    ) -> Request[LLMCallList]:  # fmt: skip
        """The bank's traced LLM calls, newest first (``MINDBANK_LLM_TRACE_ENABLED``); ``operation``: reflect,
        retain, consolidation or refresh; ``trace_id``: an operation id."""
        params = clean({"status": status, "operation": operation, "scope": scope, "provider": provider,
                        "trace_id": trace_id, "start_date": iso_time(start_date), "end_date": iso_time(end_date),
                        "limit": limit, "offset": offset})  # fmt: skip
        return Request("GET", f"{bank_path(bank_id)}/llm-requests", LLMCallList.model_validate, params=params)

    @endpoint
    def llm_request_stats(
        self, bank_id: str, *, period: str = "7d", operation: str | None = None
    ) -> Request[LLMCallStats]:
        """Traced calls by status and token sums per hour (``1d``) or day (``7d``, ``30d``)."""
        params = clean({"period": period, "operation": operation})
        return Request("GET", f"{bank_path(bank_id)}/llm-requests/stats", LLMCallStats.model_validate, params=params)
