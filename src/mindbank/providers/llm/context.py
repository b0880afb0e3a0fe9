"""Fitting prompts into the model's context window (``MINDBANK_LLM_CONTEXT_WINDOW``, docs/llm.md "Context window").

A window of ``W`` tokens holds the prompt and the reply. The refresh and reflect loops spend it in three parts: the
fixed instructions, tool definitions and schema (:data:`PROMPT_OVERHEAD_TOKENS`), the reply
(:data:`REPLY_RESERVE_TOKENS`), and evidence (memories, observations, source chunks), which gets the rest
(:func:`context_budget`). A window too small to leave :data:`MIN_EVIDENCE_TOKENS` of evidence is a configuration
error at start-up; a prompt that still does not fit (an agent loop's tool results piling up) is refused before it is
sent (:func:`check_fits`), never truncated by the server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mindbank.domain.document.model import count_tokens

PROMPT_OVERHEAD_TOKENS = 1500  # system prompts, tool definitions and schemas of the refresh and reflect loops
REPLY_RESERVE_TOKENS = 1024  # a call without its own max_tokens is assumed to need this much reply room
MIN_EVIDENCE_TOKENS = 256


class ContextWindowError(ValueError):
    """The configured context window cannot hold what an operation needs (a configuration error)."""


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Token budgets derived from a context window: ``facts`` (recall), ``chunks`` (source chunks) and
    ``observations`` (reflect's observation search), together at most ``evidence``."""

    window: int
    evidence: int

    @property
    def facts(self) -> int:
        return self.evidence // 2

    @property
    def chunks(self) -> int:
        return self.evidence // 4

    @property
    def observations(self) -> int:
        return self.evidence - self.facts - self.chunks


def context_budget(window: int | None) -> ContextBudget | None:
    """The budgets for a ``window``-token context (None: no window configured, no limit). Raises
    :class:`ContextWindowError` naming ``MINDBANK_LLM_CONTEXT_WINDOW`` when it leaves less than
    :data:`MIN_EVIDENCE_TOKENS` of evidence."""
    if window is None:
        return None
    evidence = window - PROMPT_OVERHEAD_TOKENS - REPLY_RESERVE_TOKENS
    if evidence < MIN_EVIDENCE_TOKENS:
        need = PROMPT_OVERHEAD_TOKENS + REPLY_RESERVE_TOKENS + MIN_EVIDENCE_TOKENS
        raise ContextWindowError(
            f"MINDBANK_LLM_CONTEXT_WINDOW={window} is too small: the refresh and reflect prompts need about "
            f"{PROMPT_OVERHEAD_TOKENS} tokens of instructions and tools, {REPLY_RESERVE_TOKENS} of reply and at least "
            f"{MIN_EVIDENCE_TOKENS} of evidence ({need} in all); use a model with a larger context"
        )
    return ContextBudget(window, evidence)


def prompt_tokens(messages: Any, tools: Any = None, schema: Any = None) -> int:
    """An estimate of a request's prompt tokens (the project's token count over its JSON form)."""
    return count_tokens(json.dumps([messages, tools, schema], ensure_ascii=False, default=str))


def check_fits(window: int | None, messages: Any, tools: Any, schema: Any, max_tokens: int | None) -> None:
    """Raise :class:`ContextWindowError` when the prompt plus its reply room would overflow ``window``."""
    if window is None:
        return
    reply = max_tokens or REPLY_RESERVE_TOKENS
    prompt = prompt_tokens(messages, tools, schema)
    if prompt + reply > window:
        raise ContextWindowError(
            f"a prompt of about {prompt} tokens plus {reply} of reply does not fit the model's context window of "
            f"{window} tokens (MINDBANK_LLM_CONTEXT_WINDOW); it is not sent truncated"
        )
