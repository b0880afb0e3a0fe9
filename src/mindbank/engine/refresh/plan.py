"""What a refresh decided: :class:`RefreshSettings` in, :class:`RefreshPlan` out, and the small shaping helpers the
pipeline (``runner.py``), the writer (``persist.py``) and the dry run (``dry_run.py``) share.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from mindbank.domain.document import StructuredDocument, parse_markdown
from mindbank.domain.records import MentalModel, ScoredMemory, SourceChunk
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.synthesis.port import SynthesisScope
from mindbank.errors import TransientError

# errors that mean "try again later": the worker retries them with backoff instead of recording a failure
TRANSIENT: tuple[type[BaseException], ...] = (TransientError, TimeoutError, ConnectionError)
BASED_ON_KEYS = ("world", "experience", "observation", "opinion", "directives", "mental-models")
WRITING_OUTCOMES = ("content_written", "content_unchanged")
# the executor outcomes a dry run may report (the reference's MentalModelDryRunRefreshResult.outcome enum)
DRY_RUN_OUTCOMES = (
    *WRITING_OUTCOMES,
    "content_preserved_no_new_facts",
    "refresh_failed_empty_candidate",
    "refresh_failed_delta_not_applied",
)
# The reference's operation-record vocabularies (RefreshMentalModelOperationDetails; its client validates them).
REFERENCE_OUTCOMES = (*DRY_RUN_OUTCOMES, "refresh_failed_structured_output", "refresh_failed_error")
REFERENCE_FAILURE_REASONS = (
    "empty_candidate", "structured_doc_unreadable", "delta_ops_failed", "delta_ops_all_skipped", "delta_not_applied",
    "structured_output_failed", "retrieval_failed", "no_answer", "unexpected_error",
)  # fmt: skip
REFERENCE_FALLBACK_REASONS = (
    "no_baseline_content", "source_query_changed", "structured_doc_unreadable", "delta_ops_failed",
    "delta_ops_all_skipped",
)  # fmt: skip
# Beyond the reference, and the reference value each is reported as where a client validates the enum:
# an empty scope refuses an empty candidate; a re-anchored delta ran full because delta edits failed;
# exhausted transient retries left the provider without an answer.
EXTENDED_OUTCOMES = {"refresh_failed_empty_scope": "refresh_failed_empty_candidate"}
EXTENDED_FAILURE_REASONS = {"empty_scope": "empty_candidate", "provider_unavailable": "no_answer"}
EXTENDED_FALLBACK_REASONS = {"delta_reanchored": "delta_ops_failed"}
Mode = Literal["full", "delta"]


def reference_outcome(outcome: str, *, executor: bool = False) -> str:
    """``outcome`` in the reference's vocabulary: the operation record's (default) or, with ``executor``, the dry
    run's and trace's five values (a failure outside them reads ``refresh_failed_empty_candidate``: nothing was
    written)."""
    mapped = EXTENDED_OUTCOMES.get(outcome, outcome)
    allowed = DRY_RUN_OUTCOMES if executor else REFERENCE_OUTCOMES
    if mapped in allowed:
        return mapped
    return "refresh_failed_empty_candidate" if executor else "refresh_failed_error"


def _in_reference_terms(
    reason: str | None, extended: Mapping[str, str], known: Collection[str], unknown: str
) -> str | None:
    """``reason`` (None stays None) mapped through ``extended`` to its nearest reference value; a value still
    outside the reference's ``known`` set reads ``unknown``."""
    if reason is None:
        return None
    mapped = extended.get(reason, reason)
    return mapped if mapped in known else unknown


def reference_failure_reason(reason: str | None) -> str | None:
    """A failure reason in the reference's vocabulary (unknown ones read ``unexpected_error``)."""
    return _in_reference_terms(reason, EXTENDED_FAILURE_REASONS, REFERENCE_FAILURE_REASONS, "unexpected_error")


def reference_fallback_reason(reason: str | None) -> str | None:
    """A ``mode_fallback_reason`` in the reference's vocabulary (unknown ones read ``delta_ops_failed``)."""
    return _in_reference_terms(reason, EXTENDED_FALLBACK_REASONS, REFERENCE_FALLBACK_REASONS, "delta_ops_failed")


@dataclass(frozen=True, slots=True)
class RefreshSettings:
    """Knobs of a refresh that come from settings (already resolved: trigger > bank > environment)."""

    recall_max_tokens: int = 2048
    recall_candidates: int = 60
    include_chunks: bool = True
    recall_chunks_max_tokens: int = 1000
    history_enabled: bool = True
    history_cap: int = 50
    relevance_threshold: float = 0.04
    # the LLM's context window, as token caps on the evidence (None: no window configured): facts, chunks and
    # observations fit beside the prompt's instructions and the reply (providers/llm/context.py)
    facts_cap: int | None = None
    chunks_cap: int | None = None
    observations_cap: int | None = None

    def capped(self, value: int, cap: int | None) -> int:
        """``value`` within ``cap`` (a budget from settings or a trigger, held to the context window)."""
        return value if cap is None else min(value, cap)


@dataclass(slots=True)
class RefreshPlan:
    """Everything a refresh decided, before (or instead of) writing it. ``failure_reason`` set = a failed run."""

    model: MentalModel
    requested_mode: Mode
    effective_mode: Mode
    mode_fallback_reason: str | None = None
    outcome: str = "content_preserved_no_new_facts"
    failure_reason: str | None = None
    error_message: str | None = None
    refresh_skipped: str | None = None
    scope: dict[str, Any] = field(default_factory=dict)
    window: dict[str, datetime | None] = field(default_factory=dict)
    retrieved: list[ScoredMemory] = field(default_factory=list)
    chunks: list[SourceChunk] = field(default_factory=list)
    used_ids: list[str] = field(default_factory=list)
    based_on: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    candidate_content: str | None = None
    document: StructuredDocument | None = None
    content: str = ""
    emitted: list[dict[str, Any]] = field(default_factory=list)
    applied: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    retraction: dict[str, Any] | None = None
    structured_output: Any = None
    watermark: datetime | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    synthesis_input_tokens: int = 0
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    duration_ms: int = 0
    engine: str = ""
    synthesis_scope: SynthesisScope | None = None  # for a synthesizer that retrieves on its own
    dry_run: bool = False
    structured_output_would_fail: bool = False  # dry run only: the engine cannot fill the response_schema
    # governance (beyond the reference): facts a delta could not place (carried to the next one), why the next
    # refresh must re-anchor as full, blocks trimmed to the max_tokens cap, and the candidate's size before the cap
    carried_over: list[str] = field(default_factory=list)
    reanchor: str | None = None
    trimmed: list[str] = field(default_factory=list)
    candidate_tokens: int = 0
    # curation (``engine/refresh/curation.py``): the document whose fixed content (person-written, pinned) every
    # candidate keeps, and the report of what the refresh refused, restored or retracted about it
    fixed: StructuredDocument | None = None
    curation: dict[str, Any] | None = None
    # facts written since the watermark that the document does not quote, each with the synthesizer's reason
    left_out: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.failure_reason is not None

    @property
    def would_persist(self) -> bool:
        """Whether a real refresh would write content: the reference's definition (a writing outcome), except that
        a dry run which knows the structured-output step would fail the refresh says False."""
        return self.outcome in WRITING_OUTCOMES and not self.structured_output_would_fail

    def fail(self, outcome: str, reason: str, message: str) -> RefreshPlan:
        self.outcome, self.failure_reason, self.error_message = outcome, reason, message
        return self

    def trace(self, *, with_outputs: bool = False) -> dict[str, Any]:
        """``reflect_response.trace`` (spec "What a trace contains"): no tool outputs, only counts; the dry run's
        trace (``with_outputs``) keeps each tool call's ``output``, as the reference's does."""
        calls = self.tool_calls if with_outputs else [{k: v for k, v in c.items() if k != "output"}
                                                      for c in self.tool_calls]  # fmt: skip
        return {
            "recorded_at": to_iso(utcnow()),
            "effective_mode": self.effective_mode,
            "mode_fallback_reason": self.mode_fallback_reason,
            "outcome": self.outcome,
            "tool_calls": calls,
            "llm_calls": self.llm_calls,
            "delta_operations": self.delta_operations(),
            "retraction": self.retraction,
            "usage": self.usage,
            "synthesis_input_tokens": self.synthesis_input_tokens,
            "carried_over": self.carried_over,
            "trimmed_block_ids": self.trimmed,
            **({"curation": self.curation} if self.curation else {}),
            "left_out": self.left_out,
            "duration_ms": self.duration_ms,
            "warnings": self.warnings,
        }

    def delta_operations(self) -> dict[str, Any] | None:
        if self.requested_mode != "delta" and not self.emitted:
            return None
        return {"emitted": self.emitted, "applied": self.applied, "skipped": self.skipped}


def newer(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def fact_entry(hit: ScoredMemory) -> dict[str, Any]:
    m = hit.memory
    return {"id": m.id, "text": m.text, "type": m.fact_type, "context": m.context}


def based_on_by_type(entries: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``based_on`` by fact type, deduplicated by id: an id keeps its first place and its latest entry (a memory
    edited since it was first cited shows its current text)."""
    latest: dict[str, dict[str, Any]] = {}
    for entry in entries:
        latest[entry["id"]] = entry
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in BASED_ON_KEYS}
    for entry in latest.values():
        out.setdefault(entry["type"], []).append(entry)
    return out


def flat_based_on(based_on: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [e for k in ("world", "experience", "observation") for e in (based_on or {}).get(k, [])]


def scope_report(model: MentalModel, scope: MemoryFilter) -> dict[str, Any]:
    """The dry run's ``scope``: what actually filtered memories (resolved, not as stored)."""
    trigger = model.trigger
    return {
        "tags": list(scope.tags) if scope.tag_groups is None else None,
        "tags_match": scope.tags_match if scope.tag_groups is None else "any",  # groups replace flat tags
        "tag_groups": scope.groups or None,
        "fact_types": None if scope.fact_types is None else list(scope.fact_types),
        "exclude_mental_models": bool(trigger.get("exclude_mental_models")),
        "exclude_mental_model_ids": sorted({*(trigger.get("exclude_mental_model_ids") or []), model.id}),
    }


def synthesis_scope(model: MentalModel, window: MemoryFilter, budget: int, settings: RefreshSettings) -> SynthesisScope:
    """What a retrieving synthesizer may read in this refresh: the snapshot window, the trigger's exclusions."""
    trigger = model.trigger
    return SynthesisScope(
        bank_id=model.bank_id,
        model_id=model.id,
        window=window,
        budget=trigger.get("budget") or "mid",
        recall_max_tokens=budget,
        recall_candidates=settings.recall_candidates,
        exclude_mental_models=bool(trigger.get("exclude_mental_models")),
        exclude_mental_model_ids=tuple(trigger.get("exclude_mental_model_ids") or ()),
        observations_max_tokens=settings.capped(
            int(trigger.get("reflect_search_observations_max_tokens") or 5000), settings.observations_cap
        ),
    )


def load_document(model: MentalModel) -> StructuredDocument:
    """The model's authoritative document (imported from its markdown once if it has none). Raises
    ``DocumentError`` when the stored structure is unreadable."""
    if model.structured_document is not None:
        return StructuredDocument.from_dict(model.structured_document)
    return parse_markdown(model.content)
