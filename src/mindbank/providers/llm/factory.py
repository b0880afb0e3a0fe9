"""Build the LLM of each operation from settings (``MINDBANK_LLM_*`` and the per-operation overrides).

Reference facts §1: a global provider/model/key/base URL, overridden per operation (retain, consolidation, reflect,
refresh); refresh falls back to the reflect overrides before the global values. An override applies field by field,
and a level's model/key/base URL are inherited only by an operation running that level's provider (the level's own, or
the one it inherits from below), so an ``anthropic`` override never inherits an OpenAI model or key. ``extractive``
means "no LLM" for that operation.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from mindbank.config import LLM_OPERATIONS, Settings
from mindbank.providers.llm.base import LLM, ManagedLLM, Observer, Provider
from mindbank.providers.llm.context import context_budget

PROVIDERS: tuple[str, ...] = ("extractive", "openai", "anthropic")
STRUCTURED_OUTPUTS: tuple[str, ...] = ("json_schema", "json_object")
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
_FALLBACK = {"refresh": ("refresh", "reflect")}  # the levels an operation reads before the global one


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """One operation's resolved LLM settings. The key is kept out of ``repr`` (configs get logged)."""

    operation: str
    provider: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    timeout: float = 120.0
    max_retries: int = 3
    structured_output: str = "json_schema"


def _env_name(level: str, name: str) -> str:
    return f"MINDBANK_{'' if level == 'global' else level.upper() + '_'}LLM_{name.upper()}"


def _get(settings: Settings, level: str, name: str) -> str | None:
    attr = f"llm_{name}" if level == "global" else f"{level}_llm_{name}"
    value = getattr(settings, attr)
    return value.strip() if isinstance(value, str) and value.strip() else None


def resolve_llm_config(settings: Settings, operation: str) -> LLMConfig | None:
    """The LLM settings of ``operation`` (one of ``config.LLM_OPERATIONS``), or None for the extractive engine.

    Raises ``ValueError`` naming the variable for an unknown provider or operation."""
    if operation not in LLM_OPERATIONS:
        raise ValueError(f"unknown LLM operation {operation!r} (expected one of {', '.join(LLM_OPERATIONS)})")
    levels = [*_FALLBACK.get(operation, (operation,)), "global"]
    provider, provider_level = "extractive", "global"
    for level in levels:
        value = _get(settings, level, "provider")
        if value is not None:
            provider, provider_level = value.lower(), level
            break
    if provider not in PROVIDERS:
        raise ValueError(
            f"{_env_name(provider_level, 'provider')}: unknown provider {provider!r} (expected {', '.join(PROVIDERS)})"
        )
    if provider == "extractive":
        return None
    structured = (settings.llm_structured_output or "json_schema").strip().lower()
    if structured not in STRUCTURED_OUTPUTS:
        raise ValueError(
            f"MINDBANK_LLM_STRUCTURED_OUTPUT: unknown value {structured!r} (expected {', '.join(STRUCTURED_OUTPUTS)})"
        )

    def level_provider(index: int) -> str:
        """The provider a level runs with: its own, else the one it inherits from the levels below it."""
        found = (_get(settings, level, "provider") for level in levels[index:])
        return next((p.lower() for p in found if p is not None), "extractive")

    def inherited(name: str) -> str | None:
        for index, level in enumerate(levels):
            if level_provider(index) != provider:
                continue  # this level configures another provider: its model/key/URL are not ours
            value = _get(settings, level, name)
            if value is not None:
                return value
        return None

    return LLMConfig(
        operation=operation,
        provider=provider,
        model=inherited("model") or DEFAULT_MODELS[provider],
        api_key=inherited("api_key"),
        base_url=inherited("base_url"),
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        structured_output=structured,
    )


def build_provider(config: LLMConfig) -> Provider:
    """The SDK adapter for ``config``. Raises ``ValueError`` when its credentials are missing."""
    if config.provider == "openai":
        from mindbank.providers.llm.openai_provider import OpenAIProvider

        return OpenAIProvider(
            model=config.model,
            api_key=config.api_key,
            base_url=config.base_url,
            timeout=config.timeout,
            structured_output=config.structured_output,
        )
    if config.provider == "anthropic":
        from mindbank.providers.llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider(
            model=config.model, api_key=config.api_key, base_url=config.base_url, timeout=config.timeout
        )
    raise ValueError(f"no LLM provider {config.provider!r}")


def build_llms(settings: Settings, *, observers: Sequence[Observer] = ()) -> dict[str, LLM | None]:
    """One :class:`ManagedLLM` per operation (None where the operation stays extractive), all sharing one
    concurrency cap (``MINDBANK_LLM_MAX_CONCURRENT``). Operations with identical settings share one client.

    Raises ``ValueError`` for an unknown provider or missing credentials, so a misconfiguration fails at start-up."""
    semaphore = threading.BoundedSemaphore(max(1, settings.llm_max_concurrent))
    context_budget(settings.llm_context_window)  # ContextWindowError (a ValueError): too small for the loops
    built: dict[tuple[str, str, str | None, str | None], LLM] = {}
    out: dict[str, LLM | None] = {}
    for operation in LLM_OPERATIONS:
        config = resolve_llm_config(settings, operation)
        if config is None:
            out[operation] = None
            continue
        key = (config.provider, config.model, config.api_key, config.base_url)
        if key not in built:
            built[key] = ManagedLLM(
                build_provider(config),
                max_retries=config.max_retries,
                semaphore=semaphore,
                observers=observers,
                context_window=settings.llm_context_window,
            )
        out[operation] = built[key]
    return out
