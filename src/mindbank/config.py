"""Settings, declared as data with help text and read from ``MINDBANK_*`` environment variables.

Every option is listed in :data:`OPTIONS`; ``docs/configuration.md`` documents each one (a test keeps them in step).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


def _default_database_url() -> str:
    return str(Path.home() / ".mindbank" / "mindbank.db")


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: its attribute name, environment variable, type, default and help text."""

    name: str
    type: type
    default: Any
    help: str

    @property
    def env(self) -> str:
        return "MINDBANK_" + self.name.upper()


# The LLM port (docs/llm.md). The global LLM_* settings apply to every operation; an operation's own
# {RETAIN,CONSOLIDATION,REFLECT,REFRESH}_LLM_* settings override them (refresh falls back to reflect first).
LLM_OPERATIONS: tuple[str, ...] = ("retain", "consolidation", "reflect", "refresh")
LLM_OPTIONS: tuple[Option, ...] = (
    Option(
        "llm_provider",
        str,
        "extractive",
        "LLM provider: extractive (no LLM: the offline engine), openai (any OpenAI-compatible server) or anthropic.",
    ),
    Option("llm_model", str, None, "Model name. Default: gpt-4o-mini (openai), claude-haiku-4-5 (anthropic)."),
    Option("llm_api_key", str, None, "API key (never logged). Default: the SDK's OPENAI_API_KEY / ANTHROPIC_API_KEY."),
    Option("llm_base_url", str, None, "Server base URL, e.g. http://localhost:11434/v1 for Ollama."),
    Option("llm_timeout", float, 120.0, "Seconds one LLM request may take; a timeout is retried like a 429."),
    Option("llm_max_retries", int, 3, "Retries of a transient LLM failure (429, 5xx, timeout), exponential backoff."),
    Option("llm_max_concurrent", int, 32, "LLM requests in flight at once, across every operation of the process."),
    Option(
        "llm_context_window",
        int,
        None,
        "Tokens the model's context holds (prompt and reply). Set: the refresh and reflect loops fit their evidence "
        "into it, a prompt that cannot fit is refused, never sent truncated, and a window too small for the loops "
        "stops the start-up. Unset: no limit is assumed.",
    ),
    Option(
        "llm_structured_output",
        str,
        "json_schema",
        "How the openai provider asks for JSON-schema output: json_schema (OpenAI, Ollama, vLLM, llama.cpp's C++ "
        "server) or json_object (llama-cpp-python's server: response_format type json_object with a schema).",
    ),
    *(
        Option(f"{op}_llm_{name}", str, None, f"{op.capitalize()} override of LLM_{name.upper()}.")
        for op in LLM_OPERATIONS
        for name in ("provider", "model", "api_key", "base_url")
    ),
    Option("llm_trace_enabled", bool, False, "Store every LLM prompt and response, readable per operation."),
    Option("llm_trace_retention_hours", float, 168.0, "Hours stored LLM prompts and responses are kept."),
)

# The embedding port (docs/configuration.md "Embeddings"): one model per server; each bank records the model its
# vectors were made with and refuses another.
EMBEDDING_PROVIDERS: tuple[str, ...] = ("local", "openai")
EMBEDDING_OPTIONS: tuple[Option, ...] = (
    Option(
        "embedding_provider",
        str,
        "local",
        "Embedding provider: local (the bundled all-MiniLM-L6-v2, 384 dimensions, on the CPU) or openai (any "
        "OpenAI-compatible /v1/embeddings server: OpenAI, Ollama, llama.cpp, vLLM, Text Embeddings Inference).",
    ),
    Option("embedding_model", str, None, "Embedding model name (openai). Default: text-embedding-3-small."),
    Option("embedding_api_key", str, None, "Embedding API key (never logged). Default: the SDK's OPENAI_API_KEY."),
    Option("embedding_base_url", str, None, "Embedding server base URL, e.g. http://localhost:11434/v1 for Ollama."),
    Option(
        "embedding_dimension",
        int,
        None,
        "Vector width of the embedding model (unset: read from the server's first reply at start-up).",
    ),
    Option(
        "embedding_send_dimension",
        bool,
        False,
        "Send MINDBANK_EMBEDDING_DIMENSION as the request's `dimensions` (OpenAI text-embedding-3 shortens vectors).",
    ),
    Option("embedding_batch_size", int, 64, "Texts per embeddings request."),
    Option(
        "reembed_part_size",
        int,
        256,
        "Memories per part of a re-embedding: one embedder call and one checkpointed transaction each.",
    ),
    Option("embedding_timeout", float, 60.0, "Seconds one embeddings request may take before it is retried."),
    Option("embedding_max_retries", int, 3, "Retries of a transient embeddings failure (429, 5xx, timeout), backoff."),
    Option(
        "embedding_previous_model",
        str,
        None,
        "While banks are re-embedded to the configured model: the model they are moving from, served by the same "
        "OpenAI-compatible server (base URL and key above), so their recalls and retains go on until the switch "
        "commits. Not needed when they move from the bundled MiniLM, which the server can always load.",
    ),
)

# Request limits (docs/configuration.md "Limits", docs/security.md): enforced once, by mindbank.domain.limits, for
# every surface (HTTP, MCP, in-process); a value past one is a 422 (413 for the body) naming the field.
LIMIT_OPTIONS: tuple[Option, ...] = (
    Option("max_body_bytes", int, 16_777_216, "Largest HTTP request body in bytes (413 above it)."),
    Option("max_json_depth", int, 64, "Deepest nesting of arrays and objects in a JSON request body."),
    Option("max_items_per_request", int, 10_000, "Items in one retain request."),
    Option("max_content_chars", int, 2_000_000, "Characters of one retained item's content (or an edited fact)."),
    Option("max_query_chars", int, 20_000, "Characters of a recall / reflect query or a mental model's source_query."),
    Option(
        "max_text_chars", int, 65_536, "Characters of any other text field (context, name, mission, metadata value)."
    ),
    Option("max_tags_per_item", int, 100, "Tags on one item, model or filter."),
    Option("max_tag_chars", int, 256, "Characters of one tag (and of a metadata key); control characters are refused."),
    Option("max_document_id_chars", int, 512, "Characters of a document_id; control characters are refused."),
    Option("max_bank_id_chars", int, 128, "Characters of a bank id."),
    Option(
        "bank_id_pattern",
        str,
        r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=~-]*$",
        "Regular expression a bank id must match ('*', '/' and control characters are refused whatever it says).",
    ),
    Option("max_metadata_entries", int, 100, "Keys in one metadata object."),
    Option(
        "max_token_budget",
        int,
        65_536,
        "Largest token budget a request may ask for: recall / reflect max_tokens, trigger and bank recall budgets.",
    ),
    Option("max_offset", int, 1_000_000_000, "Largest offset of a paged listing."),
)

OPTIONS: tuple[Option, ...] = (
    Option("database_url", str, None, "SQLite file path (or sqlite:///path). Default ~/.mindbank/mindbank.db."),
    Option("host", str, "127.0.0.1", "Address `mindbank serve` binds to."),
    Option("port", int, 8888, "Port `mindbank serve` listens on."),
    Option("worker_enabled", bool, True, "Run the in-process operation worker inside `mindbank serve`."),
    Option("worker_poll_seconds", float, 0.2, "How often an idle worker looks for new operations (seconds)."),
    Option(
        "worker_lease_seconds",
        float,
        300.0,
        "Seconds a claimed operation stays claimed before another worker may retake it.",
    ),
    Option("worker_max_retries", int, 3, "Retries of a failing operation before it is marked failed."),
    Option(
        "worker_slots",
        int,
        2,
        "Operations one worker process runs at once (threads); claims are fair by bank and by operation type.",
    ),
    Option(
        "worker_delivery_slots",
        int,
        1,
        "Threads of one worker process that send webhook deliveries, apart from the slots (0: the slots send them).",
    ),
    Option(
        "retain_sync_max_chars",
        int,
        250_000,
        "Largest synchronous retain (characters of content, all items together); larger ones get HTTP 413 and "
        'belong in an async retain ("async": true), which is written in parts and resumes after a crash.',
    ),
    Option("worker_retry_backoff_seconds", float, 5.0, "First retry delay; doubles on each further retry (seconds)."),
    Option(
        "worker_consolidation_wait_seconds",
        float,
        300.0,
        "How long a queued mental-model refresh waits for its bank's consolidation (and queued retain) queued before "
        "it, counted from when it was asked for (seconds; 0: it never waits). Bounds the wait behind a failing or "
        "stuck consolidation.",
    ),
    Option("enable_mental_model_history", bool, True, "Keep a history row each time a mental model's content changes."),
    Option("mental_model_history_max_entries", int, 50, "History rows kept per model and kind (<= 0: unbounded)."),
    Option("recall_max_tokens", int, 2048, "Default token budget of the facts a refresh reads."),
    Option("recall_candidates", int, 60, "Candidates each retriever (dense, BM25) contributes before fusion."),
    Option("recall_include_chunks", bool, True, "Whether a refresh's recall also returns raw chunk text."),
    Option("recall_chunks_max_tokens", int, 1000, "Default token budget of raw chunks a refresh reads."),
    Option("enable_auto_consolidation", bool, True, "Queue a consolidation (one pending per bank) after each retain."),
    Option("observation_scopes", str, "combined", "How consolidation groups facts: combined (tag set) or per_tag."),
    Option("scheduler_tick_seconds", float, 60.0, "How often the scheduler checks refresh_cron models (0: off)."),
    Option(
        "refresh_relevance_threshold",
        float,
        0.04,
        "Relevance gate: an automatic refresh whose new in-scope memories all score below this (cosine similarity "
        "to the source query plus the share of its content words they contain) runs no synthesis and keeps the "
        "document. Calibrated on LoCoMo (python -m bench gate-calibration).",
    ),
    Option(
        "mental_model_min_refresh_interval_seconds",
        int,
        0,
        "Minimum seconds between two automatic refreshes of one model (0: no floor).",
    ),
    Option(
        "refresh_failure_backoff_seconds",
        float,
        300.0,
        "After a recorded refresh failure, automatic refreshes of the model wait this long; doubles per further "
        "consecutive failure.",
    ),
    Option(
        "refresh_failure_backoff_max_seconds", float, 21600.0, "Longest wait of that backoff (seconds; default 6 h)."
    ),
    Option(
        "refresh_breaker_failures",
        int,
        3,
        "Consecutive failures after which a model's automatic refreshes stop until a manual refresh succeeds or the "
        "model is cleared (0: never).",
    ),
    Option(
        "refresh_bank_breaker_models",
        int,
        10,
        "Failing models after which every automatic refresh of the bank stops (0: never).",
    ),
    Option(
        "refresh_model_daily_token_budget",
        int,
        None,
        "LLM tokens (input + output) a model's refreshes may spend per UTC day before automatic refreshes are "
        "refused (budget_exhausted); unset: no budget.",
    ),
    Option(
        "refresh_bank_daily_token_budget",
        int,
        None,
        "LLM tokens all refreshes of a bank may spend per UTC day before automatic refreshes are refused; unset: "
        "no budget.",
    ),
    Option("llm_price_input_per_million", float, None, "Price of one million input tokens (cost = tokens × price)."),
    Option("llm_price_output_per_million", float, None, "Price of one million output tokens (unset: cost is null)."),
    Option(
        "api_key",
        str,
        None,
        "When set, every HTTP and MCP request except /health must send `Authorization: Bearer <key>`.",
    ),
    Option(
        "mcp_enabled", bool, True, "Serve MCP (streamable HTTP) at /mcp and /mcp/{bank_id} inside `mindbank serve`."
    ),
    Option("mcp_enabled_tools", str, "", "Comma-separated MCP tool names to expose (empty: all tools)."),
    Option(
        "webhook_allow_private_targets",
        bool,
        False,
        "Allow webhook URLs whose host resolves to a private, loopback, link-local or otherwise internal address.",
    ),
    Option("webhook_max_attempts", int, 6, "Attempts of one webhook delivery before it is marked failed."),
    Option("webhook_retry_backoff_seconds", float, 2.0, "First webhook retry delay; doubles on each further retry."),
    Option("file_retain_max_bytes", int, 20_000_000, "Largest file POST /files/retain accepts (bytes; 413 above)."),
    Option("worker_heartbeat_seconds", float, 10.0, "How often a running worker reports itself (GET /health/ready)."),
    Option(
        "allowed_hosts",
        str,
        "",
        "Comma-separated Host names (optionally host:port, '*' for any) the HTTP server answers. Empty: loopback "
        "names on a loopback bind, any host otherwise (with a warning at start-up).",
    ),
    Option(
        "allowed_origins",
        str,
        "",
        "Comma-separated browser origins (scheme://host[:port], '*' for any) allowed to call the API cross-origin "
        "(CORS). Loopback origins are always allowed on a loopback bind.",
    ),
    *LIMIT_OPTIONS,
    *EMBEDDING_OPTIONS,
    Option(
        "knowledge_page_default_trigger",
        dict,
        None,
        "JSON object: the trigger a new knowledge page starts from (any trigger field; unset: delta mode, "
        "observations only, refreshed after consolidation). A bank overrides it; a page's own trigger is merged over.",
    ),
    Option(
        "transfer_retention_hours",
        float,
        24.0,
        "Hours an exported bank archive stays downloadable (and an unused uploaded one is kept) before it is purged.",
    ),
    *LLM_OPTIONS,
)

# Settings a bank may override through PATCH /config (model trigger > bank config > environment).
BANK_OVERRIDABLE: dict[str, type] = {
    "mental_model_min_refresh_interval_seconds": int,
    "recall_include_chunks": bool,
    "recall_max_tokens": int,
    "recall_chunks_max_tokens": int,
    "refresh_relevance_threshold": float,
    "knowledge_page_default_trigger": dict,
    "refresh_model_daily_token_budget": int,
    "refresh_bank_daily_token_budget": int,
}
# The trigger field that overrides a bank-overridable setting, where its name differs from the setting's.
TRIGGER_KEYS: dict[str, str] = {
    "mental_model_min_refresh_interval_seconds": "min_refresh_interval_seconds",
    "refresh_model_daily_token_budget": "daily_token_budget",
}


def _parse(option: Option, raw: str) -> Any:
    if option.type is dict:
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"{option.env}: expected a JSON object, got {raw!r}") from exc
        if not isinstance(value, dict):
            raise ValueError(f"{option.env}: expected a JSON object, got {raw!r}")
        return value
    if option.type is bool:
        value = raw.strip().lower()
        if value in ("1", "true", "yes", "on"):
            return True
        if value in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{option.env}: expected true/false, got {raw!r}")
    try:
        return option.type(raw)
    except ValueError as exc:
        raise ValueError(f"{option.env}: expected {option.type.__name__}, got {raw!r}") from exc


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings. Build with :meth:`from_env`; override fields with ``dataclasses.replace``."""

    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8888
    worker_enabled: bool = True
    worker_poll_seconds: float = 0.2
    worker_lease_seconds: float = 300.0
    worker_max_retries: int = 3
    worker_slots: int = 2
    worker_delivery_slots: int = 1
    retain_sync_max_chars: int = 250_000
    worker_retry_backoff_seconds: float = 5.0
    worker_consolidation_wait_seconds: float = 300.0
    enable_mental_model_history: bool = True
    mental_model_history_max_entries: int = 50
    recall_max_tokens: int = 2048
    recall_candidates: int = 60
    recall_include_chunks: bool = True
    recall_chunks_max_tokens: int = 1000
    enable_auto_consolidation: bool = True
    observation_scopes: str = "combined"
    scheduler_tick_seconds: float = 60.0
    refresh_relevance_threshold: float = 0.04
    mental_model_min_refresh_interval_seconds: int = 0
    refresh_failure_backoff_seconds: float = 300.0
    refresh_failure_backoff_max_seconds: float = 21600.0
    refresh_breaker_failures: int = 3
    refresh_bank_breaker_models: int = 10
    refresh_model_daily_token_budget: int | None = None
    refresh_bank_daily_token_budget: int | None = None
    llm_price_input_per_million: float | None = None
    llm_price_output_per_million: float | None = None
    api_key: str | None = field(default=None, repr=False)  # repr=False: a logged Settings never shows the key
    mcp_enabled: bool = True
    mcp_enabled_tools: str = ""
    webhook_allow_private_targets: bool = False
    webhook_max_attempts: int = 6
    webhook_retry_backoff_seconds: float = 2.0
    file_retain_max_bytes: int = 20_000_000
    worker_heartbeat_seconds: float = 10.0
    allowed_hosts: str = ""
    allowed_origins: str = ""

    # request limits (see LIMIT_OPTIONS)
    max_body_bytes: int = 16_777_216
    max_json_depth: int = 64
    max_items_per_request: int = 10_000
    max_content_chars: int = 2_000_000
    max_query_chars: int = 20_000
    max_text_chars: int = 65_536
    max_tags_per_item: int = 100
    max_tag_chars: int = 256
    max_document_id_chars: int = 512
    max_bank_id_chars: int = 128
    bank_id_pattern: str = r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=~-]*$"
    max_metadata_entries: int = 100
    max_token_budget: int = 65_536
    max_offset: int = 1_000_000_000

    # embeddings (see EMBEDDING_OPTIONS)
    embedding_provider: str = "local"
    embedding_model: str | None = None
    embedding_api_key: str | None = field(default=None, repr=False)
    embedding_base_url: str | None = None
    embedding_dimension: int | None = None
    embedding_send_dimension: bool = False
    embedding_batch_size: int = 64
    reembed_part_size: int = 256
    embedding_timeout: float = 60.0
    embedding_max_retries: int = 3
    embedding_previous_model: str | None = None

    knowledge_page_default_trigger: dict[str, Any] | None = None

    transfer_retention_hours: float = 24.0

    # LLM (see LLM_OPTIONS); api keys stay out of repr() so a logged Settings never shows one
    llm_provider: str = "extractive"
    llm_model: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    llm_base_url: str | None = None
    llm_timeout: float = 120.0
    llm_max_retries: int = 3
    llm_max_concurrent: int = 32
    llm_context_window: int | None = None
    llm_structured_output: str = "json_schema"
    retain_llm_provider: str | None = None
    retain_llm_model: str | None = None
    retain_llm_api_key: str | None = field(default=None, repr=False)
    retain_llm_base_url: str | None = None
    consolidation_llm_provider: str | None = None
    consolidation_llm_model: str | None = None
    consolidation_llm_api_key: str | None = field(default=None, repr=False)
    consolidation_llm_base_url: str | None = None
    reflect_llm_provider: str | None = None
    reflect_llm_model: str | None = None
    reflect_llm_api_key: str | None = field(default=None, repr=False)
    reflect_llm_base_url: str | None = None
    refresh_llm_provider: str | None = None
    refresh_llm_model: str | None = None
    refresh_llm_api_key: str | None = field(default=None, repr=False)
    refresh_llm_base_url: str | None = None
    llm_trace_enabled: bool = False
    llm_trace_retention_hours: float = 168.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``). Raises ``ValueError`` naming a malformed variable."""
        env = os.environ if environ is None else environ
        values = {o.name: _parse(o, env[o.env]) for o in OPTIONS if env.get(o.env, "") != ""}
        return cls(**values)

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to ``~/.mindbank/mindbank.db`` (its folder is created)."""
        if self.database_url:
            return self.database_url
        url = _default_database_url()
        Path(url).parent.mkdir(parents=True, exist_ok=True)
        return url


assert {f.name for f in fields(Settings)} == {o.name for o in OPTIONS}, "Settings and OPTIONS must list the same names"
