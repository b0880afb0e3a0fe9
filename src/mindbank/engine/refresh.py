"""The mental-model refresh pipeline (full mode, extractive engine).

Spec sections "What a Refresh Reads" and "Staleness Gating"; reference facts §4.3 and §4.6. The rules it keeps:

* Snapshot: the refresh reads only memories stamped at or before a database-time cutoff taken at its start (the
  bank's newest write stamp; stamps are strictly increasing and committed in order, so everything at or below it
  is committed and everything committed later is newer).
* Watermark: ``last_memory_seen_at`` becomes the newest in-scope memory it saw (never now(), never backwards);
  untouched when nothing is in scope.
* ``last_refreshed_at`` advances on every completed refresh, including one that found nothing, never on failure.
* Nothing is lost: a failed refresh changes neither content, document, watermark nor ``last_refreshed_at``; it
  stamps ``last_refresh_failed_at`` and writes a failure history row. An empty answer never overwrites a document.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from mindbank.domain.document import parse_markdown
from mindbank.domain.records import MentalModel, ScoredMemory
from mindbank.domain.scope import MemoryFilter, model_scope
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.compose import compose_markdown
from mindbank.engine.recall import RecallRequest, recall
from mindbank.providers.embeddings.base import Embedder
from mindbank.store.base import Store

BASED_ON_KEYS = ("world", "experience", "observation", "opinion", "directives", "mental-models")


class RefreshFailed(Exception):
    """A refresh could not produce a document; the model was left as it was. ``outcome``/``reason`` say why."""

    def __init__(self, outcome: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RefreshSettings:
    """Knobs of a refresh that come from settings rather than from the model."""

    recall_max_tokens: int = 2048
    recall_candidates: int = 60
    history_enabled: bool = True
    history_cap: int = 50


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    """What a completed refresh did: ``outcome`` (content_written | content_unchanged |
    content_preserved_no_new_facts), the facts it cited, and the watermark it stored."""

    outcome: str
    mental_model_id: str
    cited: int
    retrieved: int
    watermark: datetime | None

    def as_result(self) -> dict[str, Any]:
        """The operation's ``result_metadata`` entry."""
        return {
            "outcome": self.outcome,
            "mental_model_id": self.mental_model_id,
            "facts_cited": self.cited,
            "facts_retrieved": self.retrieved,
            "last_memory_seen_at": to_iso(self.watermark),
        }


def refresh_scope(model: MentalModel) -> MemoryFilter:
    """The filter a refresh reads with (non-strict mode as resolved from tags and trigger)."""
    return model_scope(model.tags, model.trigger)


def _based_on(hits: list[ScoredMemory]) -> dict[str, list[dict[str, Any]]]:
    based_on: dict[str, list[dict[str, Any]]] = {k: [] for k in BASED_ON_KEYS}
    for hit in hits:
        m = hit.memory
        based_on[m.fact_type].append({"id": m.id, "text": m.text, "type": m.fact_type, "context": m.context})
    return based_on


def _newer(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def run_refresh(store: Store, embedder: Embedder, model: MentalModel, settings: RefreshSettings) -> RefreshOutcome:
    """Refresh ``model`` in full mode and persist the result. Raises :class:`RefreshFailed` after recording a
    failure (old document, watermark and ``last_refreshed_at`` kept)."""
    scope = refresh_scope(model)
    cutoff = store.bank_last_memory_write_at(model.bank_id)
    snapshot = replace(scope, updated_before=cutoff)
    newest = None if cutoff is None else store.scope_watermark(model.bank_id, snapshot)
    if newest is None:
        return _preserve(store, model, settings, watermark=None, reason="no_sources_in_scope", retrieved=0)

    recall_budget = int(model.trigger.get("recall_max_tokens") or settings.recall_max_tokens)
    try:
        hits = recall(
            store,
            embedder,
            model.bank_id,
            RecallRequest(query=model.source_query, filter=snapshot, max_tokens=recall_budget),
            candidates=settings.recall_candidates,
        )
        markdown, cited_ids = compose_markdown(source_query=model.source_query, hits=hits, max_tokens=model.max_tokens)
    except Exception as exc:  # any failure must leave the model as it was
        record_failure(store, model, "refresh_failed_error", "unexpected_error", str(exc), settings)
        raise RefreshFailed("refresh_failed_error", "unexpected_error", str(exc)) from exc
    if not markdown.strip():
        # nothing relevant: keep the document and move the watermark so the same window stops re-triggering
        return _preserve(store, model, settings, watermark=newest, reason="no_relevant_facts", retrieved=len(hits))

    document = parse_markdown(markdown)
    content = document.render()
    cited = [h for h in hits if h.memory.id in set(cited_ids)]
    outcome = "content_written" if content != model.content else "content_unchanged"
    history = None
    if settings.history_enabled and outcome == "content_written":
        history = {
            "previous_content": model.content,
            "previous_reflect_response": {
                k: v for k, v in (model.reflect_response or {}).items() if k in ("based_on", "trace")
            }
            or None,
        }
    watermark = _newer(newest, model.last_memory_seen_at)
    now = utcnow()
    updated = replace(
        model,
        content=content,
        structured_document=document.to_dict(),
        reflect_response={
            "text": content,
            "based_on": _based_on(cited),
            "mental_models": [],
            "outcome": outcome,
            "engine": "extractive",
            "facts_retrieved": len(hits),
            "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        },
        last_refreshed_at=now,
        last_memory_seen_at=watermark,
        last_refreshed_source_query=model.source_query,
        last_refresh_failed_at=None,
        last_full_refreshed_at=now,
        cleared_at=None,
    )
    store.save_refresh(updated, history=history, history_cap=settings.history_cap)
    return RefreshOutcome(outcome, model.id, len(cited), len(hits), watermark)


def _preserve(
    store: Store,
    model: MentalModel,
    settings: RefreshSettings,
    *,
    watermark: datetime | None,
    reason: str,
    retrieved: int,
) -> RefreshOutcome:
    """Complete a refresh that leaves the document alone: wall clock advances, watermark only forward."""
    seen = _newer(watermark, model.last_memory_seen_at)
    updated = replace(
        model,
        last_refreshed_at=utcnow(),
        last_memory_seen_at=seen,
        last_refresh_failed_at=None,
        cleared_at=None,
        reflect_response={
            **(model.reflect_response or {}),
            "outcome": "content_preserved_no_new_facts",
            "reflect_skipped": reason,
        },
    )
    store.save_refresh(updated, history=None, history_cap=settings.history_cap)
    return RefreshOutcome("content_preserved_no_new_facts", model.id, 0, retrieved, seen)


def record_failure(
    store: Store, model: MentalModel, outcome: str, reason: str, message: str, settings: RefreshSettings
) -> None:
    """Record a failed refresh: stamp ``last_refresh_failed_at`` and add a failure history row, nothing else."""
    failed = replace(
        model,
        last_refresh_failed_at=utcnow(),
        reflect_response={**(model.reflect_response or {}), "refresh_skipped": reason, "outcome": outcome},
    )
    history = None
    if settings.history_enabled:
        history = {"kind": "refresh_failed", "outcome": outcome, "failure_reason": reason, "error_message": message}
    store.save_refresh(failed, history=history, history_cap=settings.history_cap)
