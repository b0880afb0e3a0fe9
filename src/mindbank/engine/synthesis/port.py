"""The Synthesizer port: what turns retrieved facts into a mental-model document, and new facts into edits.

The refresh pipeline (``engine/refresh/``) owns retrieval, snapshots, watermarks, fallbacks and persistence; a
synthesizer only writes. ``synthesis/extractive.py`` is the offline engine (quotes and organises facts; no model);
``synthesis/llm.py`` implements the same three methods with an LLM. Each declares its :class:`Capabilities`; every
call gets one :class:`SynthesisInputs`. Tests inject scripted synthesizers (``mindbank.testing``) to drive every
failure path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mindbank.domain.document import Operation, StructuredDocument
from mindbank.domain.records import MemoryUnit, ScoredMemory, SourceChunk
from mindbank.domain.scope import MemoryFilter


class SynthesisError(Exception):
    """The synthesizer could not produce an answer (provider failure, unreadable reply). ``reason`` is one of the
    refresh failure reasons (e.g. ``delta_ops_failed``, ``no_answer``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class StructuredOutputUnsupported(SynthesisError):
    """This synthesizer cannot extract a ``response_schema`` object (the extractive engine never can)."""


@dataclass(slots=True)
class Synthesis:
    """A synthesizer's answer: a markdown candidate (full) or operations (delta), the memory ids it used, and what
    it read (``input_tokens``: the size of the synthesis input) and spent (``usage``: LLM tokens, 0 offline)."""

    markdown: str = ""
    operations: list[Operation] = field(default_factory=list)
    used_ids: list[str] = field(default_factory=list)
    input_tokens: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    nothing_relevant: bool = False  # empty markdown because no fact was worth quoting (not a failure)
    answer_found: bool | None = None  # an LLM's own verdict (None: the engine does not say); False is a refusal
    # synthesizers that retrieve on their own (the LLM agent): what else they read (citable like the pipeline's
    # facts) and their tool calls, for the refresh trace
    retrieved: list[ScoredMemory] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # memory id -> why a fact the synthesizer read is not quoted, or a fact the document cited is no longer quoted
    # (the extractive engine says; others leave it empty), in the order a capped trace keeps them: most needed first
    left_out: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SynthesisScope:
    """What a synthesizer that retrieves on its own may read during one full refresh (``Capabilities.retrieves``).

    ``window`` is the model's scope with the refresh's snapshot bounds, so the agent's tools see exactly what the
    pipeline may read; ``budget`` is the trigger's (default mid); ``model_id`` is never its own source."""

    bank_id: str
    model_id: str
    window: MemoryFilter
    budget: str = "mid"
    recall_max_tokens: int = 2048
    recall_candidates: int = 60
    exclude_mental_models: bool = False
    exclude_mental_model_ids: tuple[str, ...] = ()
    observations_max_tokens: int = 5000


@dataclass(frozen=True, slots=True)
class ScopeRead:
    """What the pipeline hands a synthesizer that reads its whole scope (``Capabilities.reads_scope``), beside the
    facts.

    ``facts`` are then every in-scope memory of the refresh's window (bounded: ``engine/refresh/reading.py``,
    ``SCOPE_MAX_FACTS``), best match to the source query first. ``vectors``: the stored embeddings of those facts
    and of ``cited`` (unit float32 vectors, memory id -> vector). ``query_vector``: the source query embedded.
    ``embed``: the embedder (texts -> ``(n, d)`` unit vectors), for short texts such as heading candidates.
    ``cited`` (delta only): the memories the current document cites that are still in scope.
    ``relevance``: memory id -> the fact's hybrid recall score for the source query (``engine/recall.py``: the
    score ``/recall`` ranks by) over the whole scope, so full and delta refreshes compare facts on one scale; empty
    when the caller has none (the briefing then falls back to the cosine to ``query_vector``). ``previous``: memory
    id -> the text of the other speaker's turn just before that fact (``synthesis/exchange.py``), read whether or
    not that turn is in the scope, for every fact and cited memory that has one. ``current`` (full mode): the
    model's document now, whose section layout a full refresh keeps (``synthesis/layout.py``); None when it has
    none."""

    vectors: Mapping[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    query_vector: npt.NDArray[np.float32] | None = None
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]] | None = None
    cited: Sequence[MemoryUnit] = ()
    relevance: Mapping[str, float] = field(default_factory=dict)
    previous: Mapping[str, str] = field(default_factory=dict)
    current: StructuredDocument | None = None


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a synthesizer reads beside the facts, and what it can do. The refresh pipeline decides what to fetch
    and hand over from these flags alone (``engine/refresh/inputs.py``), so a synthesizer gets exactly the
    :class:`SynthesisInputs` fields its flags name and the defaults for the rest.

    ``retrieves``: runs its own retrieval while writing a full document (the LLM agent); gets ``scope``.
    ``reads_chunks``: reads the raw source chunks of its facts (trigger ``include_chunks``); gets ``chunks``,
    possibly empty. ``reads_scope``: reads its whole scope (the extractive briefing): its ``facts`` are every
    in-scope memory of the refresh's window (bounded), and it gets ``read`` with their vectors.
    ``reads_directives``: follows written guidance (the bank's mission, its active directives, the document's
    fixed content); gets ``guidance``. ``extracts_structured``: can fill a trigger's ``response_schema``; when
    False a dry run says a real refresh would fail without trying (spec "Structured Output")."""

    retrieves: bool = False
    reads_chunks: bool = False
    reads_scope: bool = False
    reads_directives: bool = False
    extracts_structured: bool = False


@dataclass(frozen=True, slots=True)
class SynthesisInputs:
    """Everything one :meth:`Synthesizer.compose` or :meth:`Synthesizer.edit` call reads.

    ``source_query``: the model's standing question. ``facts``: the facts to write from (full) or to fold in
    (delta), best first. ``max_tokens``: the document's budget in tokens (a hard cap the pipeline enforces after).
    ``name``: the model's name (full mode's heading; "" in delta). The rest are filled only for a synthesizer whose
    :class:`Capabilities` ask for them: ``scope`` (``retrieves``, full mode only), ``chunks`` (``reads_chunks``),
    ``read`` (``reads_scope``), ``guidance`` (``reads_directives``: prompt text, "" when the bank has none)."""

    source_query: str
    facts: Sequence[ScoredMemory]
    max_tokens: int
    name: str = ""
    scope: SynthesisScope | None = None
    chunks: Sequence[SourceChunk] = ()
    read: ScopeRead | None = None
    guidance: str = ""


class Synthesizer(Protocol):
    """Writes documents. ``name`` appears in ``reflect_response.engine``; ``capabilities`` says which inputs beyond
    the facts it reads and whether it can fill a ``response_schema`` (:class:`Capabilities`)."""

    name: str

    @property
    def capabilities(self) -> Capabilities:
        """What this synthesizer reads and can do (constant for the life of the refresh that reads it)."""
        ...

    def compose(self, inputs: SynthesisInputs) -> Synthesis:
        """Full mode: a complete markdown answer citing facts as ``[mem:<id>]``; empty markdown = no answer.
        Raises :class:`SynthesisError` when it cannot write one."""
        ...

    def edit(self, document: StructuredDocument, inputs: SynthesisInputs) -> Synthesis:
        """Delta mode: operations against ``document`` that fold in the new ``inputs.facts``. Raises
        :class:`SynthesisError` (reason ``delta_ops_failed``) when it cannot."""
        ...

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        """An object matching ``schema`` drawn from ``content``; raises :class:`SynthesisError` if it cannot."""
        ...
