"""Reflect without an LLM: rank through the hierarchy and quote, with citations. No prose is written.

The same tools the agent uses run in the agent's order: fresh, relevant mental models first; when one answers (and
the budget is not ``high``) the lower levels are released, exactly as in the agent loop. Otherwise observations,
then raw facts. The answer is a cited quotation: the relevant models' documents (whole blocks, within
``max_tokens``), then observations and facts grouped by theme (``engine/synthesis/compose.py``), observations
ranked first, each with its proof ("mentioned N times, last D": an observation's mentions are its sources), and
no fact an observation quoted above already states. Its first line says what it is, so nobody mistakes it for an
LLM's answer.
"""

from __future__ import annotations

from typing import Any

from mindbank.domain.document import count_tokens, parse_markdown
from mindbank.domain.records import MentalModel
from mindbank.engine.reflect.agent import AgentOutcome
from mindbank.engine.reflect.tools import Budget, ReflectTools
from mindbank.engine.synthesis.compose import compose_markdown, rank_for_document

MODEL_RELEVANCE = 0.4  # cosine (query vs model name/question/content) above which a model is taken as an answer
MAX_MODELS = 2
NOTHING_FOUND = "No memory in scope answers this question."


def _model_excerpt(model: MentalModel, budget: int) -> str:
    """The model's document cut at a block boundary to fit ``budget`` tokens (at least its first block)."""
    parts: list[str] = []
    used = 0
    for section in parse_markdown(model.content).sections:
        heading = ("#" * max(3, section.level) + " " + section.heading) if section.heading else None
        for i, block in enumerate(section.blocks):
            piece = [heading, block.text] if heading and i == 0 else [block.text]
            cost = sum(count_tokens(p) for p in piece if p)
            if parts and used + cost > budget:
                return "\n\n".join(parts)
            parts.extend(p for p in piece if p)
            used += cost
    return "\n\n".join(parts)


def extractive_reflect(
    tools: ReflectTools, *, query: str, budget: Budget = "low", max_tokens: int = 4096
) -> AgentOutcome:
    """The offline reflect answer (module docstring). Raises what the store raises."""
    outcome = AgentOutcome(mode="answer", tools=tools, engine="extractive", declared_complete=True)
    iteration = 0

    def use(name: str, args: dict[str, object]) -> dict[str, Any]:
        nonlocal iteration
        iteration += 1
        output, entry = tools.timed(name, args, iteration)
        outcome.tool_calls.append(entry)
        return output

    models: list[MentalModel] = []
    if tools.can_search_models:
        found = use("search_mental_models", {"reason": "mental models first", "query": query, "max_results": 5})
        by_id = tools.evidence.mental_models
        for hit in found.get("mental_models") or []:
            if not hit["is_stale"] and hit["relevance"] >= MODEL_RELEVANCE and len(models) < MAX_MODELS:
                models.append(by_id[hit["id"]])
    release = bool(models) and budget != "high"

    ranked = []
    if not release:
        if tools.can_search_observations:
            use("search_observations", {"reason": "consolidated facts", "query": query})
            observations = [h for h in tools.evidence.memories.values() if h.memory.fact_type == "observation"]
            ranked.extend(rank_for_document(observations))
        if tools.can_recall:
            use("recall", {"reason": "raw facts", "query": query})
            # a fact an observation found above already states is not quoted twice
            stated = {s for h in ranked for s in (h.memory.source_memory_ids or ())}
            facts = [
                h for h in tools.evidence.memories.values()
                if h.memory.fact_type != "observation" and h.memory.id not in stated
            ]  # fmt: skip
            ranked.extend(rank_for_document(facts))

    parts = ["_Extractive answer (no LLM configured): the memories below are quoted, not summarised._"]
    remaining = max_tokens - count_tokens(parts[0])
    for model in models:
        excerpt = _model_excerpt(model, max(64, remaining // max(1, len(models))))
        parts.append(f"From the mental model **{model.name}** (fresh):\n\n{excerpt}")
        remaining -= count_tokens(parts[-1])
    cited: list[str] = []
    if ranked and remaining > 32:
        markdown, cited = compose_markdown(source_query=query, hits=ranked, max_tokens=remaining, ranked=True)
        if markdown:
            parts.append(markdown.strip())
    answered = bool(models) or bool(cited)
    if not answered:
        parts.append(NOTHING_FOUND)
    outcome.answer = "\n\n".join(parts) + "\n"
    outcome.answer_found = answered
    outcome.finished = True
    outcome.declared_model_ids = [m.id for m in models]
    outcome.declared_memory_ids = cited
    outcome.iterations = iteration
    return outcome
