"""``MindBank``: the one facade every surface (HTTP API, MCP, CLI, demo, in-process users) calls.

It is composed from resource modules — banks, memories, documents, files, knowledge base, mental models, operations
(and their administration), reflect (with directives), webhooks, health, access (scoped API keys), transfer,
templates — over one shared core (store, embedder, settings, clock, LLMs, worker); the worker runs
:class:`~mindbank.service.jobs.Jobs`. Errors are the domain errors of :mod:`mindbank.errors`. A new resource family
is a module here and one base class below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from mindbank.config import Settings
from mindbank.domain import limits
from mindbank.domain.timeutil import utcnow
from mindbank.engine.consolidate.extractive import ExtractiveConsolidator
from mindbank.engine.consolidate.llm import LLMConsolidator
from mindbank.engine.consolidate.plan import Consolidator
from mindbank.engine.refresh.runner import RefreshRunner
from mindbank.engine.retain.llm import LLMFactExtractor
from mindbank.engine.synthesis.extractive import ExtractiveSynthesizer
from mindbank.engine.synthesis.llm import LLMSynthesizer
from mindbank.engine.synthesis.port import Synthesizer
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.embeddings.factory import build_embedder
from mindbank.providers.llm.base import LLM, ManagedLLM
from mindbank.providers.llm.factory import build_llms
from mindbank.service.access import AccessService
from mindbank.service.banks import BanksService
from mindbank.service.curation import CurationService
from mindbank.service.documents import DocumentsService
from mindbank.service.events import EventHub
from mindbank.service.files import FilesService
from mindbank.service.governance import Governance, SpendMeter
from mindbank.service.health import HealthService, Heartbeat
from mindbank.service.jobs import Jobs
from mindbank.service.knowledge import KnowledgeService
from mindbank.service.memories import MemoriesService
from mindbank.service.mental_models import MentalModelsService
from mindbank.service.metrics import Metrics
from mindbank.service.operations import OperationsService
from mindbank.service.operations_admin import OperationsAdminService
from mindbank.service.reflect import ReflectService
from mindbank.service.templates import TemplatesService
from mindbank.service.tracing import LLMTracer
from mindbank.service.transfer import TransferService
from mindbank.service.webhooks import WebhooksService
from mindbank.store.base import Store
from mindbank.store.open import open_store
from mindbank.worker.runner import Worker, WorkerSettings
from mindbank.worker.scheduler import Scheduler


class MindBank(
    BanksService, DocumentsService, FilesService, MemoriesService, KnowledgeService, MentalModelsService,
    OperationsAdminService, OperationsService, ReflectService, WebhooksService, HealthService, AccessService,
    TransferService, TemplatesService, CurationService,
):  # fmt: skip
    """The memory server's engine room, usable in-process: ``MindBank.open()``.

    Thread-safe. Asynchronous work (async retains, consolidations, mental-model refreshes) is queued in the store and
    run by the worker: started with :meth:`start_worker`, or drained synchronously with :meth:`run_pending`.
    """

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        settings: Settings | None = None,
        synthesizer: Synthesizer | None = None,
        consolidator: Consolidator | None = None,
        clock: Callable[[], datetime] = utcnow,
        llms: Mapping[str, LLM | None] | None = None,
    ) -> None:
        self.settings = settings or Settings()
        # the request limits of this server (ValueError for a bad MINDBANK_MAX_* value); process-wide default too
        self.limits = limits.Limits.from_settings(self.settings)
        limits.configure(self.limits)
        self.store = store
        # service events (retains, consolidations, refreshes) told to the webhook dispatcher and the metrics
        self.events = EventHub()
        self.embedder = embedder
        self.clock = clock
        # one LLM per operation (None: the extractive engine); built from settings by open(), see docs/llm.md
        self.llms: dict[str, LLM | None] = dict(llms or {})
        refresh_llm, retain_llm = self.llms.get("refresh"), self.llms.get("retain")
        self.synthesizer = synthesizer or (
            LLMSynthesizer(refresh_llm, store=store, embedder=embedder) if refresh_llm else ExtractiveSynthesizer()
        )
        self._extract_facts = LLMFactExtractor(retain_llm) if retain_llm else None
        consolidation_llm = self.llms.get("consolidation")
        self.consolidator = consolidator or (
            LLMConsolidator(consolidation_llm, embedder) if consolidation_llm else ExtractiveConsolidator()
        )
        self.refresher = RefreshRunner(store, embedder, self.synthesizer, clock=clock)
        # spend governance (issue 14): every LLM attempt is metered (one meter per client: meters share the
        # metering context, so a client shared by two MindBanks must not count twice)
        for llm in {id(llm): llm for llm in self.llms.values() if llm is not None}.values():
            observers = getattr(llm, "observers", None)
            if isinstance(observers, list) and not any(isinstance(o, SpendMeter) for o in observers):
                observers.append(SpendMeter())
        self.governance = Governance(self)
        self.jobs = Jobs(self)
        self.worker = Worker(
            store,
            self.jobs.handlers(),
            WorkerSettings(
                poll_seconds=self.settings.worker_poll_seconds,
                lease_seconds=self.settings.worker_lease_seconds,
                max_retries=self.settings.worker_max_retries,
                retry_backoff_seconds=self.settings.worker_retry_backoff_seconds,
                slots=self.settings.worker_slots,
                delivery_slots=self.settings.worker_delivery_slots,
            ),
            clock=clock,
            on_exhausted=self.jobs.record_exhausted,
        )
        self.scheduler = Scheduler(self.jobs.scheduler_tick, self.settings.scheduler_tick_seconds, clock=clock)
        self.heartbeat = Heartbeat(self, self.worker.worker_id, self.settings.worker_heartbeat_seconds)
        self.metrics = Metrics(self)
        self.events.subscribe(self.metrics.observe_event)
        self.events.subscribe(self.dispatch_webhooks)
        for llm in {id(m): m for m in self.llms.values() if isinstance(m, ManagedLLM)}.values():
            llm.observers.append(self.metrics.observe_llm_call)

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        synthesizer: Synthesizer | None = None,
    ) -> MindBank:
        """Open the configured database (created and migrated if new) with the configured embedder (the bundled
        MiniLM unless ``MINDBANK_EMBEDDING_PROVIDER`` says otherwise)."""
        settings = settings or Settings.from_env()
        if embedder is None:
            # ValueError: unknown provider, missing key; EmbeddingProviderError: the server is unreachable
            embedder = build_embedder(settings)
        store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
        tracer = LLMTracer(
            store, enabled=settings.llm_trace_enabled, retention_hours=settings.llm_trace_retention_hours
        )
        try:
            llms = build_llms(settings, observers=[tracer])  # ValueError: unknown provider, missing key
        except BaseException:
            store.close()
            raise
        return cls(store=store, embedder=embedder, settings=settings, synthesizer=synthesizer, llms=llms)

    def close(self) -> None:
        """Stop the worker and scheduler and close the store."""
        self.stop_worker()
        self.store.close()

    def start_worker(self) -> None:
        """Run queued operations and the cron scheduler in background threads."""
        self.worker.start()
        self.scheduler.start()
        self.heartbeat.start()

    def stop_worker(self) -> None:
        """Stop the background worker and scheduler (the current operation finishes first)."""
        self.heartbeat.stop()
        self.scheduler.stop()
        self.worker.stop()

    def run_pending(self) -> int:
        """Run every operation that is due now, in this thread; returns how many ran."""
        return self.worker.drain()

    def scheduler_tick(self, now: datetime | None = None) -> list[str]:
        """Run one cron tick now (:meth:`Jobs.scheduler_tick`); returns the refresh operation ids submitted."""
        return self.jobs.scheduler_tick(now)
