"""``LLMSynthesizer``: the Synthesizer port (engine/synthesis/port.py) backed by an LLM.

* ``compose`` (full refresh) runs the reflect agent loop in document mode (engine/reflect/agent.py) over the
  refresh's scope and snapshot: the pipeline's recall is the seed evidence, the mental-model level is consulted
  first, and every block the agent writes carries the memory ids it rests on, validated against what this run
  retrieved and rendered as ``[mem:<id>]`` citations — per-block provenance holds for LLM documents too. A block
  citing nothing is re-asked once, then dropped; a document over ``max_tokens`` is re-asked once to shorten; the
  agent's ``answer_found`` is handed to the pipeline, which never lets a refusal replace a populated document.
* ``edit`` (delta refresh) asks for delta operations as JSON-schema output (reference facts §4.9). A reply that is
  not JSON, does not fit the operation shapes, or has a block citing no memory gets ONE re-ask quoting the
  rejections, then the refresh fails with ``delta_ops_failed``. Operations naming unknown sections/blocks get ONE
  repair re-ask listing every valid section and block id; what is still rejected after it is dropped by
  ``apply_operations`` with reasons, and the pipeline carries its facts over. An edit that would take the document
  over ``max_tokens`` gets one re-ask to shorten (the pipeline trims whatever is still over). Each operation's
  block texts carry their memory ids as citations (new facts, or ids the edited block already cited).
* ``extract_structured`` fills a ``response_schema`` (one schema-constrained call; a reply that does not fit →
  ``SynthesisError("structured_output_failed")``).

Transient provider errors (429/5xx/timeouts, after the client's own retries) propagate as ``LLMTransientError``, a
:class:`~mindbank.errors.TransientError`: the refresh records nothing and the worker retries the operation.
Permanent provider errors become the refresh failure reasons of reference facts §4.7.
"""

from __future__ import annotations

import json
from collections.abc import Container, Sequence
from dataclasses import fields, replace
from typing import Any

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    DocumentError,
    InsertBlock,
    Operation,
    RemoveBlock,
    RemoveSection,
    RenameSection,
    ReplaceBlock,
    ReplaceSectionBlocks,
    StructuredDocument,
    apply_operations,
    cited_memory_ids,
    count_tokens,
    parse_operation,
    render_markdown,
)
from mindbank.domain.document.curation import has_fixed, is_fixed
from mindbank.domain.records import FACT_TYPES
from mindbank.engine.reflect.agent import block_text, run_agent
from mindbank.engine.reflect.tools import ReflectScope, ReflectTools, ToolExecutionError, chunk_view, memory_view
from mindbank.engine.synthesis.port import Capabilities, Synthesis, SynthesisError, SynthesisInputs, SynthesisScope
from mindbank.engine.synthesis.structured import StructuredOutputError, extract_structured, schema_problems
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import (
    LLM,
    LLMError,
    LLMTransientError,
    Message,
    TokenUsage,
    assistant,
    system,
    user,
)
from mindbank.store.base import Store

DELTA_TEMPERATURE = 0.0  # reference: consolidation temperature, also used for mental-model delta edits
_OP_TYPES = (AppendBlock, InsertBlock, ReplaceBlock, RemoveBlock, AddSection, RemoveSection, ReplaceSectionBlocks,
             RenameSection)  # fmt: skip
OP_FIELDS: dict[str, set[str]] = {cls.op: {f.name for f in fields(cls)} for cls in _OP_TYPES}

_IDS = {"type": "array", "items": {"type": "string"}}
_BLOCK = {"type": "object", "properties": {"text": {"type": "string"}, "memory_ids": _IDS}, "required": ["text"]}
_NULLABLE = {"type": ["string", "null"]}
_NULL_OK = ("after_block_id", "after_section_id", "new_id")  # null is meaningful for these
# One flat operation object (not a oneOf of eight): small local models follow a flat schema far more reliably; the
# per-operation fields are checked after parsing.
DELTA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": sorted(OP_FIELDS)},
                    "section_id": {"type": "string"},
                    "block_id": {"type": "string"},
                    "after_block_id": _NULLABLE,
                    "after_section_id": _NULLABLE,
                    "new_id": _NULLABLE,
                    "text": {"type": "string"},
                    "memory_ids": _IDS,
                    "heading": {"type": "string"},
                    "new_heading": {"type": "string"},
                    "level": {"type": "integer"},
                    "blocks": {"type": "array", "items": _BLOCK},
                },
                "required": ["op"],
            },
        }
    },
    "required": ["operations"],
}

DELTA_PROMPT = """You maintain a mental model: a markdown document that answers a standing question, stored as
sections of blocks, each with an id. You get the document and NEW memories. Reply with JSON
{{"operations": [...]}}: the smallest edits that fold the new memories in. Operations:
- append_block {{section_id, text, memory_ids}}
- insert_block {{section_id, after_block_id (null: first), text, memory_ids}}
- replace_block {{section_id, block_id, text, memory_ids}}: rewrite a block the new memories update or contradict;
  keep the ids it already cites that still hold
- remove_block {{section_id, block_id}}
- add_section {{heading, level, blocks: [{{text, memory_ids}}], after_section_id (null: at the end)}}
- remove_section {{section_id}}
- replace_section_blocks {{section_id, blocks: [{{text, memory_ids}}]}}
- rename_section {{section_id, new_heading}}
Rules: name sections and blocks only by the ids given. A block is one paragraph, list or table. memory_ids are the
memories a block rests on: ids of the new memories, or ids the block already cites; do not write [mem:...] yourself.
A new memory whose id the document already cites was edited: rewrite the blocks citing it (replace_block) so they
say what it says now. "source_excerpts", when present, are the raw turns or paragraphs some new memories were drawn
from: context for reading them, not something to cite. New memories that change nothing need no operation:
{{"operations": []}} is a valid reply. Keep the document within {max_tokens} tokens (it has {current} now)."""


def _usage(tokens: TokenUsage) -> dict[str, int]:
    return {
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "total_tokens": tokens.total_tokens,
    }


def parse_delta_reply(payload: Any, allowed: Container[str]) -> tuple[list[Operation], list[str], list[str]]:
    """A delta reply as ``(operations, problems, memory ids cited)``; any problem refuses the whole reply.

    Block entries (``text`` + ``memory_ids``, or a ``blocks`` list of such objects or strings) become block texts
    with ``[mem:<id>]`` citations for the ids in ``allowed``. Empty placeholder fields of other operations (the flat
    schema invites them) are ignored; a non-empty foreign field is a problem."""
    if payload is None:
        return [], ["the reply is not a JSON object"], []
    if isinstance(payload, dict) and isinstance(payload.get("operations"), list):
        # models filling the flat schema send null for the fields an operation does not use: drop those first
        payload = {
            **payload,
            "operations": [
                {k: v for k, v in op.items() if v is not None or k in _NULL_OK} if isinstance(op, dict) else op
                for op in payload["operations"]
            ],
        }
    problems = schema_problems(payload, DELTA_SCHEMA)
    if problems:
        return [], problems[:10], []
    operations: list[Operation] = []
    cited: list[str] = []
    for i, raw in enumerate(payload["operations"]):
        name = raw["op"]
        data: dict[str, Any] = {"op": name}
        for key, value in raw.items():
            if key in ("op", "memory_ids"):
                continue
            if key not in OP_FIELDS[name]:
                if value not in (None, "", [], {}):
                    problems.append(f"operations[{i}] ({name}): unexpected field '{key}'")
                continue
            if key == "text":
                value, ids = block_text({"text": value, "memory_ids": raw.get("memory_ids") or []}, allowed)
                cited.extend(ids)
                if value and not ids:  # every block rests on a memory: an uncited one is refused
                    problems.append(f"operations[{i}] ({name}): the block cites no memory; give its memory_ids")
            elif key == "blocks":
                texts = []
                for block in value:
                    text, ids = block_text(block, allowed)
                    texts.append(text)
                    cited.extend(ids)
                    if text and not ids:
                        problems.append(f"operations[{i}] ({name}): a block cites no memory; give its memory_ids")
                value = texts
            data[key] = value
        if name == "insert_block":
            data.setdefault("after_block_id", None)
        try:
            operations.append(parse_operation(data))
        except DocumentError as exc:
            problems.append(f"operations[{i}]: {exc}")
    return operations, problems, list(dict.fromkeys(cited))


_UNKNOWN_TARGET = ("unknown section_id", "unknown block_id", "unknown after_section_id", "belongs to section")


def _names_unknown_target(reason: str) -> bool:
    return any(marker in reason for marker in _UNKNOWN_TARGET)


def _unknown_targets_message(skipped: Sequence[dict[str, Any]], document: StructuredDocument) -> str:
    """The repair re-ask: which operations named what, and every valid section id with its block ids."""
    valid = "; ".join(f"section {s.id!r}: blocks {[b.id for b in s.blocks]}" for s in document.sections)
    rejected = "; ".join(f"{s['op']}: {s['reason']}" for s in skipped[:10])
    return (
        f"{len(skipped)} operation(s) name sections or blocks that do not exist ({rejected}). The valid ids are: "
        f'{valid or "none (add_section to start one)"}. Reply again with the complete {{"operations": [...]}} '
        "object, using only these ids."
    )


class _DeltaExchange:
    """One delta conversation: asks for operations, re-asks once on a reply that fails the schema, and keeps the
    usage and call log of every turn. ``reject`` appends a follow-up message for the next :meth:`ask`."""

    def __init__(self, llm: LLM, messages: list[Message], allowed: set[str], *, fresh: set[str]) -> None:
        self.llm = llm
        self.messages = messages
        self.allowed = allowed
        self.fresh = fresh
        self.usage = TokenUsage()
        self.calls: list[dict[str, Any]] = []
        self.cited: list[str] = []

    def reject(self, message: str) -> None:
        self.messages.append(user(message))

    def ask(self, scope: str, *, fallback: list[Operation] | None = None) -> list[Operation]:
        """The operations of a schema-valid reply. A reply failing the schema is re-asked once; after that the
        ``fallback`` operations stand (a repair or shorten turn) or ``SynthesisError("delta_ops_failed")``."""
        problems: list[str] = []
        for attempt in (1, 2):
            name = scope if attempt == 1 else f"{scope}_reask"
            try:
                reply = self.llm.chat(
                    self.messages,
                    response_schema=DELTA_SCHEMA,
                    schema_name="delta_operations",
                    temperature=DELTA_TEMPERATURE,
                    scope=name,
                )
            except LLMTransientError:
                raise
            except LLMError as exc:
                raise SynthesisError("delta_ops_failed", f"LLM provider error: {exc}") from exc
            self.usage = self.usage + reply.usage
            self.calls.append({"scope": name, "duration_ms": reply.duration_ms})
            self.messages.append(assistant(reply.text))
            operations, problems, cited = parse_delta_reply(reply.parsed, self.allowed)
            if not problems:
                self.cited = cited
                return operations
            if fallback is not None:
                return fallback  # a repair or shorten turn gone wrong keeps the operations already validated
            self.messages.append(
                user(
                    "Your reply was rejected: "
                    + "; ".join(problems)
                    + '. Reply again with the complete {"operations": [...]} object, fixing these problems.'
                )
            )
        raise SynthesisError("delta_ops_failed", "the delta reply failed the schema twice: " + "; ".join(problems))

    def synthesis(self, operations: list[Operation]) -> Synthesis:
        cited = [i for op in operations for i in _op_citations(op)]
        return Synthesis(
            operations=operations,
            used_ids=[i for i in dict.fromkeys(cited) if i in self.fresh],
            input_tokens=self.usage.input_tokens,
            usage=_usage(self.usage),
            llm_calls=self.calls,
        )


def _op_citations(op: Operation) -> list[str]:
    """The memory ids the text an operation writes cites (none for removals and renames)."""
    texts: Sequence[str] = ()
    if isinstance(op, AppendBlock | InsertBlock | ReplaceBlock):
        texts = (op.text,)
    elif isinstance(op, AddSection | ReplaceSectionBlocks):
        texts = op.blocks
    return [i for t in texts for i in cited_memory_ids(t)]


FIXED_RULE = """
Blocks marked "fixed" were written or pinned by a person: they stay as they are, and their sections stay. Do not
replace, remove or move them. If a new memory contradicts one, you may still reply with a replace_block for it: it is
reported to the person instead of applied."""


def _document_view(document: StructuredDocument) -> dict[str, Any]:
    return {
        "sections": [
            {
                "id": s.id,
                "heading": s.heading,
                "level": s.level,
                # fixed content (person-written, pinned) is marked: the prompt tells the model to leave it be
                "blocks": [
                    {"id": b.id, "text": b.text, **({"fixed": True} if is_fixed(s, b) else {})} for b in s.blocks
                ],
            }
            for s in document.sections
        ]
    }


class LLMSynthesizer:
    """The Synthesizer port over an :class:`~mindbank.providers.llm.base.LLM` (module docstring)."""

    name = "llm"
    # compose() runs its own tools (a SynthesisScope), the facts' source chunks go into the prompt beside them
    # (trigger include_chunks), and so do the bank's mission and directives (guidance)
    capabilities = Capabilities(retrieves=True, reads_chunks=True, reads_directives=True, extracts_structured=True)

    def __init__(self, llm: LLM, *, store: Store, embedder: Embedder) -> None:
        self.llm = llm
        self.store = store
        self.embedder = embedder

    def compose(self, inputs: SynthesisInputs) -> Synthesis:
        """Full mode: the agent writes the document (see module docstring), following ``inputs.guidance`` (the
        bank's mission and directives). Raises ``SynthesisError`` with reason ``no_answer`` (no valid ``done``, or
        a permanent provider error) or ``retrieval_failed`` (a tool failed)."""
        scope, facts = inputs.scope, inputs.facts
        tools = ReflectTools(self.store, self.embedder, self._reflect_scope(scope))
        try:
            outcome = run_agent(
                self.llm,
                tools,
                query=inputs.source_query,
                budget=(scope.budget if scope else "mid"),  # type: ignore[arg-type]  # low/mid/high: checked when saved
                max_tokens=inputs.max_tokens,
                mode="document",
                name=inputs.name,
                seed=facts,
                seed_chunks=inputs.chunks,
                guidance=inputs.guidance,
            )
        except LLMTransientError:
            raise
        except LLMError as exc:
            raise SynthesisError("no_answer", f"LLM provider error: {exc}") from exc
        except ToolExecutionError as exc:
            raise SynthesisError("retrieval_failed", str(exc)) from exc
        if not outcome.finished:
            raise SynthesisError("no_answer", f"the agent wrote no document within {outcome.iterations} iterations")
        seeded = {h.memory.id for h in facts}
        return Synthesis(
            markdown=outcome.markdown(),
            used_ids=outcome.declared_memory_ids,
            input_tokens=outcome.usage.input_tokens,
            usage=_usage(outcome.usage),
            llm_calls=outcome.llm_calls,
            nothing_relevant=not outcome.sections and not outcome.answer_found,
            answer_found=outcome.answer_found,
            retrieved=[h for h in tools.evidence.memories.values() if h.memory.id not in seeded],
            # with outputs: the stored trace drops them (reference facts §4.11), the dry run shows them (§4.10)
            tool_calls=list(outcome.tool_calls),
        )

    def _reflect_scope(self, scope: SynthesisScope | None) -> ReflectScope:
        if scope is None:  # called outside a refresh: only the facts handed in may be used
            return ReflectScope(bank_id="", fact_types=(), exclude_mental_models=True)
        window = scope.window
        return ReflectScope(
            bank_id=scope.bank_id,
            filter=replace(window, fact_types=None),
            fact_types=window.fact_types or FACT_TYPES,
            exclude_mental_models=scope.exclude_mental_models,
            exclude_mental_model_ids=frozenset(scope.exclude_mental_model_ids),
            self_id=scope.model_id,
            recall_max_tokens=scope.recall_max_tokens,
            observations_max_tokens=scope.observations_max_tokens,
            recall_candidates=scope.recall_candidates,
        )

    def edit(self, document: StructuredDocument, inputs: SynthesisInputs) -> Synthesis:
        """Delta mode: operations folding ``inputs.facts`` into ``document`` (module docstring), following
        ``inputs.guidance``. Raises ``SynthesisError("delta_ops_failed")`` after one refused re-ask or on a
        permanent provider error."""
        source_query, facts, max_tokens = inputs.source_query, inputs.facts, inputs.max_tokens
        chunks, guidance = inputs.chunks, inputs.guidance
        if not facts:
            return Synthesis()  # nothing new: no call, the pipeline keeps the document
        allowed = {h.memory.id for h in facts} | set(document.memory_ids())
        request: dict[str, Any] = {
            "question": source_query,
            "document": _document_view(document),
            "new_memories": [memory_view(h) for h in facts],
        }
        if chunks:
            request["source_excerpts"] = [chunk_view(c) for c in chunks]
        prompt = DELTA_PROMPT.format(max_tokens=max_tokens, current=count_tokens(render_markdown(document)))
        if has_fixed(document):
            prompt += FIXED_RULE
        messages = [
            system(f"{prompt}\n\n{guidance}" if guidance else prompt),
            user(json.dumps(request, ensure_ascii=False)),
        ]
        exchange = _DeltaExchange(self.llm, messages, allowed, fresh={h.memory.id for h in facts})
        operations = exchange.ask("delta_ops")
        # operations naming unknown sections or blocks get ONE re-ask listing the valid ids; the facts
        # of those still rejected are carried over by the pipeline
        unknown = [s for s in apply_operations(document, operations).skipped if _names_unknown_target(s["reason"])]
        if unknown:
            exchange.reject(_unknown_targets_message(unknown, document))
            operations = exchange.ask("delta_ops_repair", fallback=operations)
        # max_tokens is a hard cap: an edit over it gets one re-ask to shorten; the pipeline trims after
        tokens = count_tokens(render_markdown(apply_operations(document, operations).document))
        if tokens > max_tokens:
            exchange.reject(
                f"Applied, these operations make the document {tokens} tokens; the budget is {max_tokens}. Reply "
                'again with the complete {"operations": [...]} object, also shortening the document '
                "(replace_block with a tighter text, or remove_block the least important blocks)."
            )
            operations = exchange.ask("delta_ops_shorten", fallback=operations)
        return exchange.synthesis(operations)

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        """An object matching ``schema`` from ``content``. Raises ``SynthesisError("structured_output_failed")``."""
        try:
            value, _ = extract_structured(self.llm, content=content, schema=schema)
        except StructuredOutputError as exc:
            raise SynthesisError("structured_output_failed", str(exc)) from exc
        extracted: dict[str, Any] = value  # schema_problems checked it against the (object) schema
        return extracted
