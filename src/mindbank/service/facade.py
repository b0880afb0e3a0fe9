"""``MindBank``: the one facade every surface (HTTP API, MCP, CLI, demo, in-process users) calls.

The facade builds the service tree and delegates: one shared state (:class:`~mindbank.service.core.ServiceState`:
store, embedder, settings, clock, LLMs, event hub), the components that take what they need from it (governance,
jobs, the heartbeat, the metrics) and the resource services (banks, memories, documents, files, knowledge base,
mental models, curation, operations, directives, reflect, webhooks, health, access, transfer, templates). Each
public method is one line naming the service method it is (:class:`delegate`); no service knows the facade.
Errors are the domain errors of :mod:`mindbank.errors`. A new resource family is a service module, one attribute
built in :meth:`MindBank.__init__` and its delegations below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Concatenate, Generic, ParamSpec, TypeVar, overload

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
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.curation import CurationService
from mindbank.service.directives import DirectivesService
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
from mindbank.service.observations import ObservationsService
from mindbank.service.operations import OperationsService
from mindbank.service.operations_admin import OperationsAdminService
from mindbank.service.reembed import REEMBED, ReembedService
from mindbank.service.reflect import ReflectService
from mindbank.service.templates import TemplatesService
from mindbank.service.tracing import LLMTracer
from mindbank.service.transfer import TransferService
from mindbank.service.webhooks import WebhooksService
from mindbank.store.base import Store
from mindbank.store.open import open_store
from mindbank.worker.runner import Worker, WorkerSettings
from mindbank.worker.scheduler import Scheduler

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


class delegate(Generic[S, P, R]):
    """A facade method that is ``method`` of the service held in the facade's attribute ``service``: the same
    signature (for the type checker and for ``inspect``), docstring and behaviour."""

    def __init__(self, service: str, method: Callable[Concatenate[S, P], R]) -> None:
        self.service = service
        self.method = method
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> delegate[S, P, R]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> delegate[S, P, R] | Callable[P, R]:
        if obj is None:
            return self
        bound: Callable[P, R] = getattr(getattr(obj, self.service), self.method.__name__)
        return bound


class MindBank:
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
        settings = settings or Settings()
        # the request limits of this server (ValueError for a bad MINDBANK_MAX_* value); process-wide default too
        request_limits = limits.Limits.from_settings(settings)
        limits.configure(request_limits)
        # one LLM per operation (None: the extractive engine); built from settings by open(), see docs/llm.md
        self.llms: dict[str, LLM | None] = dict(llms or {})
        refresh_llm, retain_llm = self.llms.get("refresh"), self.llms.get("retain")
        self.synthesizer = synthesizer or (
            LLMSynthesizer(refresh_llm, store=store, embedder=embedder) if refresh_llm else ExtractiveSynthesizer()
        )
        consolidation_llm = self.llms.get("consolidation")
        self.consolidator = consolidator or (
            LLMConsolidator(consolidation_llm, embedder) if consolidation_llm else ExtractiveConsolidator()
        )
        self.state = state = ServiceState(
            settings=settings, limits=request_limits, store=store, embedder=embedder, clock=clock, llms=self.llms,
            extract_facts=LLMFactExtractor(retain_llm) if retain_llm else None,
        )  # fmt: skip
        self.core = core = ServiceCore(state)
        self.store, self.embedder, self.clock, self.limits = store, embedder, clock, request_limits
        self.refresher = RefreshRunner(store, embedder, self.synthesizer, clock=clock)
        # spend governance: every LLM attempt is metered (one meter per client: meters share the metering
        # context, so a client shared by two MindBanks must not count twice)
        for llm in {id(llm): llm for llm in self.llms.values() if llm is not None}.values():
            observers = getattr(llm, "observers", None)
            if isinstance(observers, list) and not any(isinstance(o, SpendMeter) for o in observers):
                observers.append(SpendMeter())
        self.governance = Governance(core)
        self._build_resources(state)
        self.jobs = Jobs(
            core, governance=self.governance, refresher=self.refresher, synthesizer=self.synthesizer,
            consolidator=self.consolidator, retain=self.memories.run_retain_operation,
            handlers={"reprocess_document": self.documents.run_reprocess,
                      "webhook_delivery": self.webhooks.run_webhook_delivery, **self.transfer.transfer_handlers(),
                      REEMBED: self.reembedding.run_reembed},
        )  # fmt: skip
        self.worker = Worker(
            store,
            self.jobs.handlers(),
            WorkerSettings(
                poll_seconds=settings.worker_poll_seconds,
                lease_seconds=settings.worker_lease_seconds,
                max_retries=settings.worker_max_retries,
                retry_backoff_seconds=settings.worker_retry_backoff_seconds,
                slots=settings.worker_slots,
                delivery_slots=settings.worker_delivery_slots,
                consolidation_wait_seconds=settings.worker_consolidation_wait_seconds,
            ),
            clock=clock,
            on_exhausted=self.jobs.record_exhausted,
        )
        state.wake = self.worker.wake
        self.scheduler = Scheduler(self.jobs.scheduler_tick, settings.scheduler_tick_seconds, clock=clock)
        self.heartbeat = Heartbeat(store, self.worker.worker_id, settings.worker_heartbeat_seconds)
        self.health = HealthService(state, heartbeat=self.heartbeat)
        self.metrics = Metrics(core)
        self.events.subscribe(self.metrics.observe_event)
        self.events.subscribe(self.webhooks.dispatch_webhooks)
        for llm in {id(m): m for m in self.llms.values() if isinstance(m, ManagedLLM)}.values():
            llm.observers.append(self.metrics.observe_llm_call)

    def _build_resources(self, state: ServiceState) -> None:
        """The resource services, each with the shared state and the services it works through."""
        self.banks = BanksService(state, governance=self.governance)
        self.memories = MemoriesService(state)
        self.observations = ObservationsService(state)
        self.documents = DocumentsService(state)
        self.files = FilesService(state, memories=self.memories)
        self.mental_models = MentalModelsService(state, governance=self.governance, refresher=self.refresher)
        self.knowledge = KnowledgeService(state, mental_models=self.mental_models)
        self.curation = CurationService(state)
        self.operations = OperationsService(state)
        self.operations_admin = OperationsAdminService(state, operations=self.operations)
        self.directives = DirectivesService(state)
        self.reflection = ReflectService(state, directives=self.directives)
        self.webhooks = WebhooksService(state)
        self.access = AccessService(state)
        self.transfer = TransferService(state, operations=self.operations)
        self.templates = TemplatesService(state, mental_models=self.mental_models, directives=self.directives)
        self.reembedding = ReembedService(state)

    @property
    def settings(self) -> Settings:
        """The configuration every service reads (replacing it is seen by all of them at their next read)."""
        return self.state.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.state.settings = value

    @property
    def events(self) -> EventHub:
        """The service events' hub (webhooks and metrics subscribe to it)."""
        return self.state.events

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

    # shared helpers
    resolved_setting = delegate("core", ServiceCore.resolved_setting)
    _new_operation = staticmethod(ServiceCore._new_operation)

    # banks
    list_banks = delegate("banks", BanksService.list_banks)
    get_bank = delegate("banks", BanksService.get_bank)
    put_bank = delegate("banks", BanksService.put_bank)
    delete_bank = delegate("banks", BanksService.delete_bank)
    get_bank_profile = delegate("banks", BanksService.get_bank_profile)
    update_bank_profile = delegate("banks", BanksService.update_bank_profile)
    bank_config = delegate("banks", BanksService.bank_config)
    update_bank_config = delegate("banks", BanksService.update_bank_config)
    reset_bank_config = delegate("banks", BanksService.reset_bank_config)
    bank_stats = delegate("banks", BanksService.bank_stats)
    stats = delegate("banks", BanksService.stats)
    last_memory_write_at = delegate("banks", BanksService.last_memory_write_at)

    # memories
    retain = delegate("memories", MemoriesService.retain)
    reembed = delegate("reembedding", ReembedService.start_reembed)
    active_reembed = delegate("reembedding", ReembedService.active_reembed)
    get_embedding_model = delegate("reembedding", ReembedService.embedding_model)
    run_retain_operation = delegate("memories", MemoriesService.run_retain_operation)
    recall = delegate("memories", MemoriesService.recall)
    recall_sources = delegate("memories", MemoriesService.recall_sources)
    list_memories = delegate("memories", MemoriesService.list_memories)
    get_memory = delegate("memories", MemoriesService.get_memory)
    update_memory = delegate("memories", MemoriesService.update_memory)
    delete_memory = delegate("memories", MemoriesService.delete_memory)
    list_tags = delegate("memories", MemoriesService.list_tags)
    consolidate = delegate("memories", MemoriesService.consolidate)
    get_observation_history = delegate("observations", ObservationsService.get_observation_history)
    list_observation_scopes = delegate("observations", ObservationsService.list_observation_scopes)
    list_memory_observations = delegate("observations", ObservationsService.list_memory_observations)
    clear_memory_observations = delegate("observations", ObservationsService.clear_memory_observations)
    clear_observations = delegate("observations", ObservationsService.clear_observations)
    clear_bank_memories = delegate("observations", ObservationsService.clear_bank_memories)
    retain_files = delegate("files", FilesService.retain_files)

    # documents
    list_documents = delegate("documents", DocumentsService.list_documents)
    get_document = delegate("documents", DocumentsService.get_document)
    list_document_chunks = delegate("documents", DocumentsService.list_document_chunks)
    get_chunk = delegate("documents", DocumentsService.get_chunk)
    document_history = delegate("documents", DocumentsService.document_history)
    get_document_history = delegate("documents", DocumentsService.get_document_history)
    update_document = delegate("documents", DocumentsService.update_document)
    delete_document = delegate("documents", DocumentsService.delete_document)
    reprocess_document = delegate("documents", DocumentsService.reprocess_document)
    run_reprocess = delegate("documents", DocumentsService.run_reprocess)

    # mental models
    create_mental_model = delegate("mental_models", MentalModelsService.create_mental_model)
    get_mental_model = delegate("mental_models", MentalModelsService.get_mental_model)
    list_mental_models = delegate("mental_models", MentalModelsService.list_mental_models)
    refresh_mental_model = delegate("mental_models", MentalModelsService.refresh_mental_model)
    update_mental_model = delegate("mental_models", MentalModelsService.update_mental_model)
    delete_mental_model = delegate("mental_models", MentalModelsService.delete_mental_model)
    clear_mental_model = delegate("mental_models", MentalModelsService.clear_mental_model)
    revert_mental_model = delegate("mental_models", MentalModelsService.revert_mental_model)
    mental_model_history = delegate("mental_models", MentalModelsService.mental_model_history)
    get_mental_model_history = delegate("mental_models", MentalModelsService.get_mental_model_history)
    scope_preview = delegate("mental_models", MentalModelsService.scope_preview)
    scope_warnings = delegate("mental_models", MentalModelsService.scope_warnings)
    dry_run_refresh = delegate("mental_models", MentalModelsService.dry_run_refresh)
    dry_run_refresh_mental_model = delegate("mental_models", MentalModelsService.dry_run_refresh_mental_model)
    memory_cited_by = delegate("mental_models", MentalModelsService.memory_cited_by)
    models_citing = delegate("mental_models", MentalModelsService.models_citing)

    # curation: hand edits, pins, drafts
    editor_name = delegate("curation", CurationService.editor_name)
    mental_model_blocks = delegate("curation", CurationService.mental_model_blocks)
    get_mental_model_blocks = delegate("curation", CurationService.get_mental_model_blocks)
    edit_mental_model_block = delegate("curation", CurationService.edit_mental_model_block)
    update_mental_model_block = delegate("curation", CurationService.update_mental_model_block)
    add_mental_model_block = delegate("curation", CurationService.add_mental_model_block)
    delete_mental_model_block = delegate("curation", CurationService.delete_mental_model_block)
    pin_mental_model_block = delegate("curation", CurationService.pin_mental_model_block)
    pin_mental_model_section = delegate("curation", CurationService.pin_mental_model_section)
    mental_model_draft = delegate("curation", CurationService.mental_model_draft)
    get_mental_model_draft = delegate("curation", CurationService.get_mental_model_draft)
    approve_mental_model_draft = delegate("curation", CurationService.approve_mental_model_draft)
    reject_mental_model_draft = delegate("curation", CurationService.reject_mental_model_draft)

    # knowledge base
    knowledge_tree = delegate("knowledge", KnowledgeService.knowledge_tree)
    get_knowledge_base_tree = delegate("knowledge", KnowledgeService.get_knowledge_base_tree)
    get_knowledge_page = delegate("knowledge", KnowledgeService.get_knowledge_page)
    get_knowledge_node = delegate("knowledge", KnowledgeService.get_knowledge_node)
    search_knowledge_base = delegate("knowledge", KnowledgeService.search_knowledge_base)
    export_knowledge_base = delegate("knowledge", KnowledgeService.export_knowledge_base)
    create_knowledge_folder = delegate("knowledge", KnowledgeService.create_knowledge_folder)
    create_knowledge_page = delegate("knowledge", KnowledgeService.create_knowledge_page)
    update_knowledge_node = delegate("knowledge", KnowledgeService.update_knowledge_node)
    delete_knowledge_node = delegate("knowledge", KnowledgeService.delete_knowledge_node)

    # operations and the LLM request log
    get_operation = delegate("operations", OperationsService.get_operation)
    list_operations = delegate("operations", OperationsService.list_operations)
    cancel_operation = delegate("operations", OperationsService.cancel_operation)
    wait_for = delegate("operations", OperationsService.wait_for)
    wait = delegate("operations", OperationsService.wait)
    llm_requests = delegate("operations", OperationsService.llm_requests)
    retry_operation = delegate("operations_admin", OperationsAdminService.retry_operation)
    delete_operation = delegate("operations_admin", OperationsAdminService.delete_operation)
    list_llm_requests = delegate("operations_admin", OperationsAdminService.list_llm_requests)
    llm_request_stats = delegate("operations_admin", OperationsAdminService.llm_request_stats)

    # directives and reflect
    create_directive = delegate("directives", DirectivesService.create_directive)
    get_directive = delegate("directives", DirectivesService.get_directive)
    list_directives = delegate("directives", DirectivesService.list_directives)
    update_directive = delegate("directives", DirectivesService.update_directive)
    delete_directive = delegate("directives", DirectivesService.delete_directive)
    applicable_directives = delegate("directives", DirectivesService.applicable_directives)
    reflect = delegate("reflection", ReflectService.reflect)

    # webhooks
    create_webhook = delegate("webhooks", WebhooksService.create_webhook)
    get_webhook = delegate("webhooks", WebhooksService.get_webhook)
    list_webhooks = delegate("webhooks", WebhooksService.list_webhooks)
    update_webhook = delegate("webhooks", WebhooksService.update_webhook)
    delete_webhook = delegate("webhooks", WebhooksService.delete_webhook)
    list_webhook_deliveries = delegate("webhooks", WebhooksService.list_webhook_deliveries)
    dispatch_webhooks = delegate("webhooks", WebhooksService.dispatch_webhooks)
    run_webhook_delivery = delegate("webhooks", WebhooksService.run_webhook_delivery)

    # health and access
    liveness = delegate("health", HealthService.liveness)
    health_live = delegate("health", HealthService.health_live)
    health_ready = delegate("health", HealthService.health_ready)
    readiness = delegate("health", HealthService.readiness)
    create_api_key = delegate("access", AccessService.create_api_key)
    list_api_keys = delegate("access", AccessService.list_api_keys)
    revoke_api_key = delegate("access", AccessService.revoke_api_key)
    authenticate = delegate("access", AccessService.authenticate)

    # transfer and templates
    export_bank = delegate("transfer", TransferService.export_bank)
    export_documents = delegate("transfer", TransferService.export_documents)
    import_bank = delegate("transfer", TransferService.import_bank)
    import_documents = delegate("transfer", TransferService.import_documents)
    clone_bank = delegate("transfer", TransferService.clone_bank)
    write_bank_archive = delegate("transfer", TransferService.write_bank_archive)
    read_bank_archive = delegate("transfer", TransferService.read_bank_archive)
    stored_file = delegate("transfer", TransferService.stored_file)
    stored_file_chunks = delegate("transfer", TransferService.stored_file_chunks)
    download_archive = delegate("transfer", TransferService.download_archive)
    fetch_archive = delegate("transfer", TransferService.fetch_archive)
    transfer_handlers = delegate("transfer", TransferService.transfer_handlers)
    export_bank_template = delegate("templates", TemplatesService.export_bank_template)
    import_bank_template = delegate("templates", TemplatesService.import_bank_template)
    bank_template_schema = staticmethod(TemplatesService.bank_template_schema)
