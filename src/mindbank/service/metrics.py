"""Prometheus metrics (``GET /metrics``, text exposition format through ``prometheus-client``).

Two kinds, both in one registry per service:

* **What this process saw**, fed by observers, never by calls scattered through the code that does the work: HTTP
  requests by route template and status with latency histograms (``observe_request``, called by the API's
  middleware), service events (:mod:`mindbank.service.events`: refreshes by outcome, retains, consolidations) and
  LLM calls with their tokens and cost (an observer of every managed LLM). A separate ``mindbank worker`` process
  counts its own refreshes and LLM calls: ``mindbank worker --metrics-port`` serves them.
* **What the database holds**, read at scrape time so every process reports the same cluster-wide numbers:
  operations by type and status, queue depth, the age of the oldest due pending operation, active workers. A scrape
  whose database read fails still answers, with ``mindbank_database_up 0``.

Cost: ``mindbank_llm_cost_usd_total`` prices every LLM call's reported tokens (refreshes, reflect, extraction,
consolidation: failed attempts that reported usage too) at ``MINDBANK_LLM_PRICE_INPUT_PER_MILLION`` /
``MINDBANK_LLM_PRICE_OUTPUT_PER_MILLION``, the prices the refresh spend ledger uses; it stays at 0 while a price is
unset.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from mindbank.domain.governance import token_cost
from mindbank.domain.timeutil import utcnow
from mindbank.providers.llm.base import CallRecord
from mindbank.service.core import ServiceCore
from mindbank.service.events import ServiceEvent

log = logging.getLogger(__name__)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class DatabaseCollector(Collector):
    """Gauges read from the store at scrape time (cluster-wide)."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("mindbank_database_up", "1 when the scrape could read the database.")
        try:
            counts = self.core.store.operation_counts()
            now = utcnow()
            oldest = self.core.store.oldest_due_pending(now)
            since = now - timedelta(seconds=3 * self.core.settings.worker_heartbeat_seconds)
            workers = len(self.core.store.list_heartbeats(since))
        except Exception:  # a scrape must answer even when the database does not
            log.exception("metrics: database read failed")
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        ops = GaugeMetricFamily("mindbank_operations", "Operations by type and status.", labels=["type", "status"])
        for kind, status, n in counts:
            ops.add_metric([kind, status], n)
        yield ops
        depth = GaugeMetricFamily("mindbank_queue_depth", "Pending operations (due or parked).")
        depth.add_metric([], sum(n for _, status, n in counts if status == "pending"))
        yield depth
        age = GaugeMetricFamily(
            "mindbank_queue_oldest_pending_age_seconds", "Age of the oldest pending operation that is due (0: none)."
        )
        age.add_metric([], 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds()))
        yield age
        active = GaugeMetricFamily("mindbank_workers_active", "Workers whose heartbeat is recent (any process).")
        active.add_metric([], workers)
        yield active


class Metrics:
    """The registry and the observers that feed it (module docstring)."""

    def __init__(self, core: ServiceCore) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("mindbank_http_requests", "HTTP requests served, by route template and status.",
                                ["method", "route", "status"], registry=r)  # fmt: skip
        self.latency = Histogram("mindbank_http_request_duration_seconds", "HTTP request latency, by route template.",
                                 ["method", "route"], buckets=LATENCY_BUCKETS, registry=r)  # fmt: skip
        self.events = Counter("mindbank_events", "Service events, by type and status.", ["type", "status"], registry=r)
        self.refreshes = Counter("mindbank_refreshes", "Mental-model refreshes, by outcome and failure reason.",
                                 ["outcome", "reason"], registry=r)  # fmt: skip
        self.llm_calls = Counter("mindbank_llm_calls", "LLM call attempts, by provider, model, scope and status.",
                                 ["provider", "model", "scope", "status"], registry=r)  # fmt: skip
        self.llm_tokens = Counter("mindbank_llm_tokens", "LLM tokens, by provider, model and kind (input, output).",
                                  ["provider", "model", "kind"], registry=r)  # fmt: skip
        self.llm_cost = Counter("mindbank_llm_cost_usd", "LLM cost of the tokens at the configured prices (USD).",
                                registry=r)  # fmt: skip
        self.prices = (core.settings.llm_price_input_per_million, core.settings.llm_price_output_per_million)
        r.register(DatabaseCollector(core))

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One HTTP request served (``route``: the matched route template, not the raw path)."""
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def observe_event(self, event: ServiceEvent) -> None:
        """Event observer: counts every event; refresh events by outcome and failure reason."""
        self.events.labels(event.type, event.status).inc()
        if event.type.startswith("mental_model.refresh"):
            self.refreshes.labels(str(event.data.get("outcome") or event.status),
                                  str(event.data.get("failure_reason") or "")).inc()  # fmt: skip

    def observe_llm_call(self, call: CallRecord) -> None:
        """LLM observer: one attempt, its tokens and their cost at the configured prices."""
        self.llm_calls.labels(call.provider, call.model, call.scope, "error" if call.error else "success").inc()
        if call.result is not None:
            usage = call.result.usage
            self.llm_tokens.labels(call.provider, call.model, "input").inc(usage.input_tokens)
            self.llm_tokens.labels(call.provider, call.model, "output").inc(usage.output_tokens)
            cost = token_cost(usage.input_tokens, usage.output_tokens, self.prices)
            if cost:
                self.llm_cost.inc(cost)

    def render(self) -> bytes:
        """The exposition text of every metric."""
        return generate_latest(self.registry)
