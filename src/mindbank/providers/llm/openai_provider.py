"""The ``openai`` provider: the official ``openai`` SDK against any OpenAI-compatible chat-completions server.

OpenAI itself, Ollama (``http://localhost:11434/v1``), vLLM, LM Studio, llama.cpp server, OpenRouter, Groq ... all
speak ``POST {base_url}/chat/completions``. Tools go in OpenAI function format unchanged; JSON-schema output uses
``response_format: {"type": "json_schema"}`` (non-strict, which local servers accept; or llama-cpp-python's
``{"type": "json_object", "schema": ...}`` with ``MINDBANK_LLM_STRUCTURED_OUTPUT=json_object``) and the reply is parsed
leniently. The SDK's own retries are off (``max_retries=0``): :class:`~mindbank.providers.llm.base.ManagedLLM`
owns the retry policy. Errors map to ``LLMTransientError`` (408/409/429, 5xx, timeouts, connection) or ``LLMError``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai

from mindbank.providers.llm.base import (
    ChatRequest,
    ChatResult,
    ForceTool,
    LLMError,
    Message,
    SDKErrors,
    TokenUsage,
    ToolCall,
    ToolChoice,
    call_sdk,
    parse_json_reply,
)
from mindbank.providers.openai_key import openai_key

# APITimeoutError is an APIConnectionError; OpenAIError also covers a body that is not a chat completion
_ERRORS = SDKErrors(connection=openai.APIConnectionError, status=openai.APIStatusError, base=openai.OpenAIError)


class OpenAIProvider:
    """One attempt per :meth:`complete`. Raises ``ValueError`` at construction when no key can be found for the
    public OpenAI endpoint (a local server named by ``base_url`` needs none)."""

    provider = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        timeout: float,
        structured_output: str = "json_schema",
    ) -> None:
        key = openai_key(api_key, base_url, setting="LLM")
        self.model = model
        self.base_url = base_url
        self.structured_output = structured_output
        self._key = key
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)

    def __repr__(self) -> str:  # never the key
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: ChatRequest) -> ChatResult:
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(request.messages)}
        if request.tools:
            kwargs["tools"] = list(request.tools)
            if request.tool_choice is not None:
                kwargs["tool_choice"] = _tool_choice(request.tool_choice)
        if request.response_schema is not None:
            kwargs["response_format"] = self._response_format(request)
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        return call_sdk(
            lambda: self._client.chat.completions.create(**kwargs),
            lambda completion: self._result(completion, request),
            provider=self.provider,
            errors=_ERRORS,
            secret=self._key,
        )

    def _response_format(self, request: ChatRequest) -> dict[str, Any]:
        if self.structured_output == "json_object":
            # llama-cpp-python's server: its own form, a grammar built from the schema (it refuses "json_schema")
            return {"type": "json_object", "schema": request.response_schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.response_schema, "strict": False},
        }

    def _result(self, completion: Any, request: ChatRequest) -> ChatResult:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise LLMError("the server returned no choices", provider=self.provider)
        message = choices[0].message
        text = message.content or ""
        calls = tuple(_tool_call(c, i) for i, c in enumerate(message.tool_calls or ()))
        usage = getattr(completion, "usage", None)
        cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None) or 0
        tokens = TokenUsage(
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cached_tokens=int(cached),
        )
        parsed = parse_json_reply(text) if request.response_schema is not None else None
        return ChatResult(
            text=text,
            tool_calls=calls,
            usage=tokens,
            model=getattr(completion, "model", None) or self.model,
            finish_reason=choices[0].finish_reason,
            parsed=parsed,
        )


def _tool_call(call: Any, index: int) -> ToolCall:
    function = call.function
    raw = function.arguments or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = None
    return ToolCall(id=call.id or f"call_{index}", name=function.name, arguments=arguments, raw_arguments=raw)


def _tool_choice(choice: ToolChoice) -> Any:
    if isinstance(choice, ForceTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages (``providers.llm.base``) in the chat-completions shape."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": m.get("content") or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": c["arguments"]
                                if isinstance(c["arguments"], str)
                                else json.dumps(c["arguments"]),
                            },
                        }
                        for c in m["tool_calls"]
                    ],
                }
            )
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out
