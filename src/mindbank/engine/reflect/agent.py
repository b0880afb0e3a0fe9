"""The reflect agent loop: an LLM calling tools through the memory hierarchy until it calls ``done``.

Reference facts §5; spec "Reflect". Rules kept here:

* **Hierarchy.** The first iterations are forced, one tool each (named ``tool_choice``): ``search_mental_models``
  (when the run can see any model), then ``search_observations`` (when observations are in the fact types), then
  ``recall`` (when world/experience are). If the forced model search returns only fresh, non-empty models and the
  budget is not ``high``, the remaining forced steps are released and the agent is told the pages are fresh (it
  may still dig deeper). Then free turns with ``tool_choice=required``; the last iteration forces ``done``.
* **Iterations** by budget: low 5, mid 10, high 20 LLM calls at most.
* **Refusals.** ``done`` before anything was retrieved is refused; ``done`` with ``answer_found: false`` before
  ``recall`` ran is refused once and recall is forced.
* **Citations.** Only ids some tool returned in this run may be cited: declared ids are filtered, ``[mem:<id>]``
  citations in the answer text are scrubbed of ids never seen.
* **Document mode** (mental-model refresh): ``done`` carries ``document.sections[].blocks[] = {text, memory_ids}``;
  each block's ids are validated against the evidence and rendered as ``[mem:<id>]`` citations, so every block's
  provenance is exactly the memories it rests on. No block without a source: a ``done`` with blocks citing nothing
  is refused once, then those blocks are dropped (an answer left with no cited block is a refusal, ``answer_found``
  false); a document over ``max_tokens`` is refused once to shorten; the loop grants each such re-ask its answer
  turn. The refresh pipeline's own scoped recall is handed in as ``seed`` evidence (already retrieved, citable),
  with the source chunks of those facts (``seed_chunks``, when the trigger's ``include_chunks`` is on) as uncitable
  context, so only the mental-model level is forced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mindbank.domain.document import cited_memory_ids, count_tokens, format_citation
from mindbank.domain.records import ScoredMemory, SourceChunk
from mindbank.engine.reflect.tools import Budget, ReflectTools, chunk_view, memory_view
from mindbank.providers.llm.base import (
    LLM,
    ForceTool,
    Message,
    TokenUsage,
    ToolCall,
    ToolChoice,
    ToolSpec,
    assistant,
    system,
    tool_result,
    tool_spec,
    user,
)

Mode = Literal["answer", "document"]
ITERATIONS: dict[str, int] = {"low": 5, "mid": 10, "high": 20}
MIN_RELEASE_RELEVANCE = 0.3  # a "fresh" top model this unrelated to the question releases nothing
REFLECT_TEMPERATURE = 0.9  # reference: reflect 0.9; documents are written at 0.3 so refreshes churn less
DOCUMENT_TEMPERATURE = 0.3

_CITATION = re.compile(r"\s?\[mem:([A-Za-z0-9_-]+)\]")
_BLANK_LINES = re.compile(r"\n\s*\n+")

SYSTEM_ANSWER = """You answer questions from a memory bank by calling tools, then calling done.
The memory is layered, best first:
1. mental models: curated, cited summaries. A fresh one (is_stale false) can answer on its own.
2. observations: facts consolidated from several memories.
3. raw facts (recall): individual statements, with dates.
Use the highest layer that answers the question; go lower when a layer is stale, missing or too thin.
Use only what the tools returned; never invent facts. In done, list the ids of the memories, observations and
mental models your answer rests on (only ids that tools returned). If the memories do not answer the question, say
so and set answer_found to false. Write the answer in markdown, about {max_tokens} tokens or fewer."""

SYSTEM_DOCUMENT = """You write a mental model: a standing, cited markdown document answering one question from a
memory bank. Evidence already retrieved from the model's scope is in the first message; tools can find more.
Finish by calling done with `document`: sections (heading, level 2 unless nesting) of blocks. A block is one
paragraph, list or table. Give each block `memory_ids`: the ids of the memories it rests on, only ids from the
evidence or from tool results. Do not write ids into the text; they are cited for you. Stay within {max_tokens}
tokens. Never invent facts; leave out what no memory supports. If nothing in the evidence answers the question,
call done with an empty document and answer_found false."""

_IDS = {"type": "array", "items": {"type": "string"}}
DONE_ANSWER = tool_spec(
    "done",
    "Finish with your answer and the ids it rests on.",
    {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "description": "The answer, in markdown."},
            "answer_found": {"type": "boolean"},
            "memory_ids": _IDS,
            "observation_ids": _IDS,
            "mental_model_ids": _IDS,
        },
        "required": ["answer"],
    },
)
DONE_DOCUMENT = tool_spec(
    "done",
    "Finish with the document; each block lists the memory ids it rests on.",
    {
        "type": "object",
        "properties": {
            "document": {
                "type": "object",
                "properties": {
                    "sections": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "heading": {"type": "string"},
                                "level": {"type": "integer", "minimum": 1, "maximum": 6},
                                "blocks": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {"text": {"type": "string"}, "memory_ids": _IDS},
                                        "required": ["text", "memory_ids"],
                                    },
                                },
                            },
                            "required": ["heading", "blocks"],
                        },
                    }
                },
                "required": ["sections"],
            },
            "answer_found": {"type": "boolean"},
            "mental_model_ids": _IDS,
        },
        "required": ["document"],
    },
)


@dataclass(slots=True)
class AgentOutcome:
    """What a run produced. ``finished``: a ``done`` (or a plain-text answer) was accepted. ``sections`` (document
    mode) are validated: ``{heading, level, blocks: [text with citations]}``. Declared ids are already filtered to
    the evidence; ``declared_complete`` means they are exact (no "all retrieved" fallback for ``based_on``)."""

    mode: Mode
    tools: ReflectTools
    finished: bool = False
    answer: str = ""
    sections: list[dict[str, Any]] = field(default_factory=list)
    answer_found: bool = False
    declared_memory_ids: list[str] = field(default_factory=list)
    declared_model_ids: list[str] = field(default_factory=list)
    declared_complete: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    iterations: int = 0
    engine: str = "llm"

    def markdown(self) -> str:
        """Document mode: the sections rendered as markdown ("" when there are none)."""
        return _render_sections(self.sections)


def _render_sections(sections: Sequence[dict[str, Any]]) -> str:
    parts: list[str] = []
    for section in sections:
        if section["heading"]:
            parts.append("#" * section["level"] + " " + section["heading"])
        parts.extend(section["blocks"])
    return "\n\n".join(parts) + "\n" if parts else ""


def cited_only(sections: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Document sections keeping only blocks that cite a memory (a section left without blocks goes)."""
    out = []
    for section in sections:
        blocks = [b for b in section["blocks"] if cited_memory_ids(b)]
        if blocks:
            out.append({**section, "blocks": blocks})
    return out


def scrub_citations(text: str, allowed: Container[str]) -> str:
    """``text`` without ``[mem:<id>]`` citations of ids outside ``allowed``."""
    return _CITATION.sub(lambda m: m.group(0) if m.group(1) in allowed else "", text)


def block_text(raw: Any, allowed: Container[str]) -> tuple[str, list[str]]:
    """One agent block as markdown: invalid citations dropped, its valid ``memory_ids`` cited at its end (unless
    already cited inline); blank lines folded so it stays one block. Returns ``(text, cited ids)``."""
    if isinstance(raw, str):
        text, ids = raw, []
    elif isinstance(raw, dict):
        given = raw.get("text")
        text = given if isinstance(given, str) else ""
        ids = [i for i in raw.get("memory_ids") or [] if isinstance(i, str)]
    else:
        return "", []
    text = _BLANK_LINES.sub("\n", scrub_citations(text, allowed).strip())
    if not text:
        return "", []
    inline = set(cited_memory_ids(text))
    extra = [i for i in dict.fromkeys(ids) if i in allowed and i not in inline]
    if extra:
        text += " " + " ".join(format_citation(i) for i in extra)
    return text, list(cited_memory_ids(text))


def document_sections(raw: Any, allowed: Container[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Validate ``done.document``: ``(sections, cited ids)``. Headings lose leading ``#``; levels clamp to 1..6;
    empty blocks and block-less sections are dropped; an empty heading is kept only for the first section."""
    sections: list[dict[str, Any]] = []
    cited: list[str] = []
    raw_sections = raw.get("sections") if isinstance(raw, dict) else None
    for i, section in enumerate(raw_sections if isinstance(raw_sections, list) else []):
        if not isinstance(section, dict):
            continue
        heading = " ".join(str(section.get("heading") or "").lstrip("#").split())
        level = section.get("level")
        level = min(6, max(1, level)) if isinstance(level, int) and not isinstance(level, bool) else 2
        blocks = []
        for block in section.get("blocks") or []:
            text, ids = block_text(block, allowed)
            if text:
                blocks.append(text)
                cited.extend(ids)
        if not blocks:
            continue
        if not heading and (i > 0 or sections):
            heading = "Notes"
        sections.append({"heading": heading, "level": level, "blocks": blocks})
    return sections, list(dict.fromkeys(cited))


def _seed_message(seed: Sequence[ScoredMemory], chunks: Sequence[SourceChunk] = ()) -> str:
    if not seed:
        return "No memories were retrieved up front; use the tools."
    lines = "\n".join(json.dumps(memory_view(h), ensure_ascii=False) for h in seed)
    message = f"Evidence already retrieved from this model's scope ({len(seed)} memories, best match first):\n{lines}"
    if chunks:
        excerpts = "\n".join(json.dumps(chunk_view(c), ensure_ascii=False) for c in chunks)
        message += f"\n\nSource excerpts (the raw turns or paragraphs some of these memories came from):\n{excerpts}"
    return message


class _Run:
    """State of one loop (kept off the public function so the steps read top to bottom)."""

    def __init__(self, llm: LLM, tools: ReflectTools, *, mode: Mode, budget: Budget, temperature: float) -> None:
        self.llm = llm
        self.tools = tools
        self.mode = mode
        self.budget = budget
        self.temperature = temperature
        self.outcome = AgentOutcome(mode=mode, tools=tools)
        self.specs: list[ToolSpec] = tools.specs(DONE_DOCUMENT if mode == "document" else DONE_ANSWER)
        self.messages: list[Message] = []
        self.forced: list[str] = []
        self.refused_not_found = False
        self.seeded = False  # document mode with the pipeline's recall handed in: that recall already ran
        self.max_tokens = 4096
        self.reasked: set[str] = set()  # document-mode re-asks already spent ("uncited", "long")

    def call(self, choice: ToolChoice, scope: str) -> tuple[str, tuple[ToolCall, ...]]:
        reply = self.llm.chat(
            self.messages, tools=self.specs, tool_choice=choice, temperature=self.temperature, scope=scope
        )
        self.outcome.usage = self.outcome.usage + reply.usage
        self.outcome.llm_calls.append({"scope": scope, "duration_ms": reply.duration_ms})
        self.messages.append(assistant(reply.text, reply.tool_calls))
        return reply.text, reply.tool_calls

    def run_tool(self, call: ToolCall, iteration: int) -> None:
        if call.arguments is None:
            output: dict[str, Any] = {"error": f"arguments are not a JSON object: {call.raw_arguments[:200]!r}"}
            entry = {"tool": call.name, "input": {}, "output": output, "result_count": 0, "duration_ms": 0,
                     "iteration": iteration}  # fmt: skip
        else:
            output, entry = self.tools.timed(call.name, call.arguments, iteration)
        if call.name == "search_mental_models" and "error" not in output:
            self.maybe_release(output)
        self.outcome.tool_calls.append(entry)
        self.messages.append(tool_result(call.id, call.name, json.dumps(output, ensure_ascii=False)))

    def maybe_release(self, output: dict[str, Any]) -> None:
        """Fresh, non-empty, relevant models release the forced lower levels (not on a high budget)."""
        hits = output.get("mental_models") or []
        fresh = bool(hits) and all(not h["is_stale"] for h in hits) and hits[0]["relevance"] >= MIN_RELEASE_RELEVANCE
        if fresh and self.budget != "high" and self.forced:
            self.forced.clear()
            output["note"] = (
                "These mental models are fresh: they already hold what the memories say. Answer from them unless "
                "they lack something the question needs."
            )

    def check_document(self, sections: list[dict[str, Any]]) -> str | None:
        """The one-time re-asks of document mode: blocks citing no memory, then a document over ``max_tokens``
        (each refused once; the loop grants the extra turn). None: accept."""
        uncited = sum(1 for s in sections for b in s["blocks"] if not cited_memory_ids(b))
        if uncited and "uncited" not in self.reasked:
            self.reasked.add("uncited")
            return (
                f"{uncited} block(s) cite no memory: give every block memory_ids from the evidence (only ids tools "
                "returned), or leave the block out."
            )
        tokens = count_tokens(_render_sections(cited_only(sections)))
        if tokens > self.max_tokens and "long" not in self.reasked:
            self.reasked.add("long")
            return (
                f"The document is {tokens} tokens; the budget is {self.max_tokens}. Call done again with a shorter "
                "document: merge or drop the least important blocks."
            )
        return None

    def handle_done(self, call: ToolCall) -> str | None:
        """Accept ``done`` (returns None) or return the refusal sent back to the model."""
        args = call.arguments
        if args is None:
            return "done arguments must be a JSON object"
        evidence = self.tools.evidence
        if not evidence.retrieved_anything:
            return "You must search for information first: call a retrieval tool before done."
        found = args.get("answer_found")
        if (
            found is False
            and not self.refused_not_found
            and self.tools.can_recall
            and "recall" not in evidence.tools_run
            and not self.seeded
        ):
            self.refused_not_found = True
            self.forced.insert(0, "recall")
            return "Before giving up, search the raw facts: recall has not been tried yet."
        outcome = self.outcome
        outcome.answer_found = found is not False
        outcome.declared_model_ids = [i for i in args.get("mental_model_ids") or [] if i in evidence.mental_models]
        if self.mode == "document":
            sections, cited = document_sections(args.get("document"), evidence.memories)
            refusal = self.check_document(sections) if outcome.answer_found else None
            if refusal:
                return refusal
            # every block must rest on a memory this run retrieved (a reader can check it): an uncited one is dropped
            sections = cited_only(sections)
            if not sections and outcome.answer_found:
                if self.reasked:  # asked once already: an answer still without a cited block is a refusal
                    outcome.answer_found = False
                else:
                    self.reasked.add("empty")
                    return (
                        "The document has no cited blocks; write sections of blocks with memory_ids (or set "
                        "answer_found false)."
                    )
            outcome.sections = sections
            outcome.declared_memory_ids = cited
        else:
            answer = args.get("answer")
            if not isinstance(answer, str):
                return "done needs an answer string"
            outcome.answer = scrub_citations(answer.strip(), evidence.memories)
            declared = [*(args.get("memory_ids") or []), *(args.get("observation_ids") or [])]
            outcome.declared_memory_ids = [i for i in dict.fromkeys(declared) if i in evidence.memories]
        outcome.finished = True
        return None


def run_agent(
    llm: LLM,
    tools: ReflectTools,
    *,
    query: str,
    budget: Budget = "low",
    max_tokens: int = 4096,
    mode: Mode = "answer",
    name: str | None = None,
    seed: Sequence[ScoredMemory] = (),
    seed_chunks: Sequence[SourceChunk] = (),
    guidance: str = "",
) -> AgentOutcome:
    """Run the loop (module docstring). ``guidance``: the bank's mission and directives, appended to the system
    prompt (``domain.resources.guidance_prompt``). Raises what the LLM raises (``LLMError`` /
    ``LLMTransientError``) and what a tool raises other than a bad argument; a run that never gets a valid ``done``
    returns ``finished=False``."""
    document = mode == "document"
    run = _Run(
        llm,
        tools,
        mode=mode,
        budget=budget,
        temperature=DOCUMENT_TEMPERATURE if document else REFLECT_TEMPERATURE,
    )
    tools.evidence.add_memories(seed)
    run.seeded = bool(seed)
    prompt = (SYSTEM_DOCUMENT if document else SYSTEM_ANSWER).format(max_tokens=max_tokens)
    run.messages = [system(f"{prompt}\n\n{guidance}" if guidance else prompt)]
    if document:
        opening = f"Mental model: {name or query}\nStanding question: {query}"
        run.messages.append(user(f"{opening}\n\n{_seed_message(seed, seed_chunks)}"))
    else:
        run.messages.append(user(f"Question: {query}"))
    if tools.can_search_models:
        run.forced.append("search_mental_models")
    if not document:  # a refresh's seed already covers the memory levels of its scope
        if tools.can_search_observations:
            run.forced.append("search_observations")
        if tools.can_recall:
            run.forced.append("recall")

    run.max_tokens = max_tokens
    limit = ITERATIONS[budget]
    iteration = 0
    while iteration < limit:
        iteration += 1
        run.outcome.iterations = iteration
        last = iteration == limit
        if last:
            choice: ToolChoice = ForceTool("done")
        elif run.forced:
            choice = ForceTool(run.forced.pop(0))
        else:
            choice = "required"
        text, calls = run.call(choice, "final" if last else f"agent_{iteration}")
        if not calls:
            if not document and text.strip() and tools.evidence.retrieved_anything:
                # some servers ignore tool_choice and answer in prose: take it as the answer
                run.outcome.answer = scrub_citations(text.strip(), tools.evidence.memories)
                run.outcome.answer_found = True
                run.outcome.finished = True
                break
            run.messages.append(user("Reply with a tool call (a retrieval tool, or done to finish)."))
            continue
        done_call = None
        for call in calls:
            if call.name == "done" and done_call is None:
                done_call = call
            elif call.name == "done":
                run.messages.append(tool_result(call.id, "done", json.dumps({"error": "done was already called"})))
            else:
                run.run_tool(call, iteration)
        if done_call is not None:
            asked = len(run.reasked)
            refusal = run.handle_done(done_call)
            verdict = {"error": refusal} if refusal else {"status": "accepted"}
            run.messages.append(tool_result(done_call.id, "done", json.dumps(verdict)))
            if refusal is None:
                break
            if last and len(run.reasked) > asked:
                limit += 1  # a document re-ask (citations, length) always gets its answer turn
    return run.outcome
