"""``POST /reflect`` end to end: run the agent (or the extractive reflect) and shape the reference's response.

Reference facts §3 "Reflect" (``ReflectResponse``: ``text``, ``based_on``, ``structured_output``,
``structured_output_error``, ``usage``, ``trace``) and §5 (``based_on`` from tool outputs filtered to the declared
ids; a category with no declared id lists everything retrieved in it; directives: every one the LLM was given).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mindbank.domain.projection import MEMORY_RENAMES, project
from mindbank.domain.records import FACT_TYPES, ScoredMemory
from mindbank.domain.resources import Directive, guidance_prompt
from mindbank.engine.reflect.agent import AgentOutcome, run_agent
from mindbank.engine.reflect.extractive import extractive_reflect
from mindbank.engine.reflect.tools import Budget, ReflectScope, ReflectTools
from mindbank.engine.synthesis.structured import StructuredOutputError, extract_structured
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import LLM, LLMError, LLMTransientError, TokenUsage
from mindbank.store.base import Store

EXTRACTIVE_SCHEMA_ERROR = (
    "the extractive engine cannot fill a response_schema; configure an LLM provider (MINDBANK_LLM_PROVIDER)"
)


class ReflectNoAnswer(LLMError):
    """The agent spent its iterations without a valid ``done`` (reference ``no_answer``)."""


@dataclass(frozen=True, slots=True)
class ReflectOptions:
    """The request knobs that are not about scope. ``tool_calls`` includes the trace; ``tool_outputs`` keeps the
    tools' outputs in it."""

    query: str
    budget: Budget = "low"
    max_tokens: int = 4096
    include_facts: bool = False
    tool_calls: bool = False
    tool_outputs: bool = True
    response_schema: dict[str, Any] | None = None
    request_id: str | None = None  # LLM request tracing files this run's calls under it
    # the bank's directives that apply to this request (prompt order) and its mission: the LLM follows them, the
    # extractive engine cannot
    directives: tuple[Directive, ...] = ()
    mission: str | None = None


def reflect(
    store: Store, embedder: Embedder, llm: LLM | None, scope: ReflectScope, options: ReflectOptions
) -> dict[str, Any]:
    """The ``ReflectResponse`` dict. Raises ``LLMError`` / ``LLMTransientError`` from the provider and
    :class:`ReflectNoAnswer`; store errors propagate."""
    tools = ReflectTools(store, embedder, scope)
    if llm is None:
        outcome = extractive_reflect(tools, query=options.query, budget=options.budget, max_tokens=options.max_tokens)
    else:
        outcome = run_agent(
            llm, tools, query=options.query, budget=options.budget, max_tokens=options.max_tokens,
            guidance=guidance_prompt(options.directives, options.mission),
        )  # fmt: skip
        if not outcome.finished:
            raise ReflectNoAnswer(f"the reflect agent gave no answer within {outcome.iterations} iterations")
    usage = outcome.usage
    structured, structured_error = None, None
    if options.response_schema is not None:
        if llm is None:
            structured_error = EXTRACTIVE_SCHEMA_ERROR
        else:
            # reference: a failed extraction never fails the reflect; it is reported beside the answer
            try:
                structured, extra = extract_structured(llm, content=outcome.answer, schema=options.response_schema)
                usage = usage + extra
            except (StructuredOutputError, LLMTransientError) as exc:
                structured_error = str(exc)
    return {
        "text": outcome.answer,
        "based_on": based_on(outcome, options.directives if llm is not None else ()) if options.include_facts else None,
        "structured_output": structured,
        "structured_output_error": structured_error,
        "usage": usage.to_dict() if llm is not None else TokenUsage().to_dict(),
        "trace": trace(outcome, outputs=options.tool_outputs, request_id=options.request_id)
        if options.tool_calls
        else None,
    }


def _fact(hit: ScoredMemory) -> dict[str, Any]:
    m = hit.memory
    return {**project(m, _FACT_KEYS, MEMORY_RENAMES), "metadata": m.metadata or None}


_FACT_KEYS = (
    "id",
    "text",
    "type",
    "context",
    "occurred_start",
    "occurred_end",
    "mentioned_at",
    "document_id",
    "chunk_id",
    "tags",
)


def based_on(outcome: AgentOutcome, directives: Sequence[Directive] = ()) -> dict[str, Any]:
    """``ReflectBasedOn``: memories per fact type (declared ids, or all retrieved of a type none was declared for,
    unless the outcome's declarations are exact), mental models ``{id, text: "<name>: <content>", context}`` and the
    directives the answer was written under ``{id, name, content}`` (the reference lists every applied one)."""
    evidence = outcome.tools.evidence
    declared = set(outcome.declared_memory_ids)
    memories: list[dict[str, Any]] = []
    for fact_type in FACT_TYPES:
        of_type = [h for h in evidence.memories.values() if h.memory.fact_type == fact_type]
        chosen = [h for h in of_type if h.memory.id in declared]
        if not chosen and not outcome.declared_complete:
            chosen = of_type
        memories.extend(_fact(h) for h in chosen)
    model_ids = outcome.declared_model_ids or ([] if outcome.declared_complete else list(evidence.mental_models))
    models = [
        {"id": m.id, "text": f"{m.name}: {m.content}", "context": None}
        for m in (evidence.mental_models[i] for i in model_ids)
    ]
    applied = [{"id": d.id, "name": d.name, "content": d.content} for d in directives]
    return {"memories": memories, "mental_models": models, "directives": applied}


def trace(outcome: AgentOutcome, *, outputs: bool, request_id: str | None = None) -> dict[str, Any]:
    """``ReflectTrace``: tool calls (input, output when asked, duration, iteration) and LLM calls; beyond the
    reference, ``engine`` and ``request_id`` (its traced LLM calls: ``GET /operations/{request_id}/llm-requests``)."""
    return {
        "tool_calls": [
            {
                "tool": c["tool"],
                "input": c["input"],
                "output": c["output"] if outputs else None,
                "duration_ms": c["duration_ms"],
                "iteration": c["iteration"],
            }
            for c in outcome.tool_calls
        ],
        "llm_calls": list(outcome.llm_calls),
        "engine": outcome.engine,
        "request_id": request_id,
    }
