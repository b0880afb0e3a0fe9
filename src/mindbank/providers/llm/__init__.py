"""The LLM port (``base``), its two SDK-backed providers (``openai_provider``, ``anthropic_provider``) and the
settings-driven ``factory``. The SDKs are imported only when a provider is built, so the extractive default never
loads them."""

from mindbank.providers.llm.base import (
    LLM,
    ChatResult,
    ForceTool,
    LLMError,
    LLMTransientError,
    ManagedLLM,
    TokenUsage,
    ToolCall,
)

__all__ = [
    "LLM",
    "ChatResult",
    "ForceTool",
    "LLMError",
    "LLMTransientError",
    "ManagedLLM",
    "TokenUsage",
    "ToolCall",
]
