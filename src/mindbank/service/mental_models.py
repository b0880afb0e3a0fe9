"""Mental models: create, read (with staleness), list, patch, delete, clear, revert, scope preview, history,
dry run, and queuing refreshes. Spec: the Mental Models page, section by section.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import ValidationError

from mindbank.domain.document import StructuredDocument, parse_markdown, render_markdown
from mindbank.domain.governance import RefreshState
from mindbank.domain.history import is_version, version_entry
from mindbank.domain.limits import (
    DEFAULT_MAX_TOKENS,
    MAX_MODEL_ID_CHARS,
    MAX_NAME_CHARS,
    MODEL_ID_PATTERN,
    Limits,
    check_max_tokens,
    check_offset,
    check_tags,
    check_text,
    scan_json,
)
from mindbank.domain.records import FACT_TYPES, MentalModel
from mindbank.domain.scope import MemoryFilter, admits_tags, model_scope
from mindbank.domain.tags import normalize_tags
from mindbank.domain.timeutil import parse_timestamp, to_iso, utcnow
from mindbank.domain.trigger import MentalModelTrigger, merge_trigger
from mindbank.engine.refresh.dry_run import dry_run_result
from mindbank.engine.refresh.plan import DRY_RUN_OUTCOMES, reference_outcome
from mindbank.engine.refresh.runner import RefreshRunner
from mindbank.engine.refresh.staleness import explain_staleness, mark_stale
from mindbank.errors import ConflictError, InvalidInputError, NotFoundError, RefreshPreviewError
from mindbank.service.core import ServiceCore, ServiceState, changed_in_bank, found_in_bank
from mindbank.service.governance import Governance
from mindbank.store.base import AlreadyExists

PENDING_COUNTED = 10_000  # pending facts a scope preview reads at most to count those in scope


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def _trigger(data: dict[str, Any]) -> MentalModelTrigger:
    """A trigger from a dict: NUL characters and 64-bit overflow anywhere in it (tag groups, a response schema) are
    refused before pydantic reads it, as the HTTP body guard refuses them. Raises :class:`InvalidInputError`."""
    problem = scan_json(data)
    if problem is not None:
        raise InvalidInputError(".".join(["trigger", *map(str, problem[0])]), problem[2])
    try:
        return MentalModelTrigger.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError("trigger", _first_error(exc)) from exc


def patched_model(
    model: MentalModel,
    *,
    name: str | None = None,
    source_query: str | None = None,
    max_tokens: int | None = None,
    tags: Sequence[str] | None = None,
    trigger: dict[str, Any] | None = None,
    limits: Limits,
) -> MentalModel:
    """``model`` with a PATCH applied (None = keep): given fields replace stored ones, ``trigger`` is MERGED over
    the stored trigger (``domain.trigger.merge_trigger``). Nothing is written. Raises :class:`InvalidInputError`
    (blank or over-long name/query, tags past ``limits``, max_tokens range, a merged trigger that breaks a rule)."""
    if name is not None:
        check_text(name, "name", MAX_NAME_CHARS, blank_ok=False)
    if source_query is not None:
        check_text(source_query, "source_query", limits.max_query_chars, blank_ok=False)
    if tags is not None:
        check_tags(tags, limits)
    if trigger is not None and (problem := scan_json(trigger, limits)) is not None:
        raise InvalidInputError(".".join(["trigger", *map(str, problem[0])]), problem[2])
    if max_tokens is not None:
        check_max_tokens(max_tokens)
    merged = model.trigger
    if trigger is not None:
        try:
            merged = merge_trigger(model.trigger, trigger)
        except ValidationError as exc:
            raise InvalidInputError("trigger", _first_error(exc)) from exc
    return replace(
        model,
        name=name.strip() if name is not None else model.name,
        source_query=source_query.strip() if source_query is not None else model.source_query,
        max_tokens=max_tokens if max_tokens is not None else model.max_tokens,
        tags=normalize_tags(tags) if tags is not None else model.tags,
        trigger=merged,
    )


class MentalModelsService(ServiceCore):
    """Mental models: create, read, list, patch, delete, clear, revert, queue refreshes, dry runs. ``governance``
    annotates each model read with its refresh status; ``refresher`` plans the dry runs."""

    def __init__(self, state: ServiceState, *, governance: Governance, refresher: RefreshRunner) -> None:
        super().__init__(state)
        self.governance = governance
        self.refresher = refresher

    def create_mental_model(
        self,
        bank_id: str,
        *,
        name: str,
        source_query: str,
        id: str | None = None,
        tags: Sequence[str] = (),
        max_tokens: int = DEFAULT_MAX_TOKENS,
        trigger: MentalModelTrigger | dict[str, Any] | None = None,
    ) -> tuple[str, str]:
        """Create a model (bank auto-created) and queue its first refresh; returns ``(model_id, operation_id)``.

        Raises :class:`InvalidInputError` (blank name/query, bad id, max_tokens outside 256–8192) and
        :class:`ConflictError` when ``id`` is taken.
        """
        model = self.new_model(
            bank_id, name=name, source_query=source_query, id=id, tags=tags, max_tokens=max_tokens, trigger=trigger
        )
        try:
            self.store.insert_mental_model(model)
        except AlreadyExists as exc:
            raise ConflictError(f"mental model '{model.id}' already exists in bank '{bank_id}'") from exc
        op_id = self._submit(bank_id, "refresh_mental_model", {"mental_model_id": model.id}, model.id)
        return model.id, op_id

    def new_model(
        self,
        bank_id: str,
        *,
        name: str,
        source_query: str,
        id: str | None,
        tags: Sequence[str],
        max_tokens: int,
        trigger: MentalModelTrigger | dict[str, Any] | None,
    ) -> MentalModel:
        """A new, never refreshed model row, validated (see :meth:`create_mental_model`); nothing is written."""
        self._check_bank_id(bank_id)
        check_text(name, "name", MAX_NAME_CHARS, blank_ok=False)
        check_text(source_query, "source_query", self.limits.max_query_chars, blank_ok=False)
        check_tags(tags, self.limits)
        if id is not None and (len(id) > MAX_MODEL_ID_CHARS or not MODEL_ID_PATTERN.match(id)):
            raise InvalidInputError("id", "must match ^[a-z0-9][a-z0-9-]*$ (lowercase letters, digits, hyphens)")
        check_max_tokens(max_tokens)
        trig = trigger if isinstance(trigger, MentalModelTrigger) else _trigger(trigger or {})
        now = utcnow()
        return MentalModel(
            id=id or f"mm-{uuid.uuid4().hex}",
            bank_id=bank_id,
            name=name.strip(),
            source_query=source_query.strip(),
            content="",
            tags=normalize_tags(tags),
            max_tokens=max_tokens,
            trigger=trig.model_dump(),
            structured_document=None,
            reflect_response=None,
            last_refreshed_at=now,
            last_memory_seen_at=None,
            last_refreshed_source_query=None,
            last_refresh_failed_at=None,
            last_full_refreshed_at=None,
            created_at=now,
        )

    def get_mental_model(self, bank_id: str, model_id: str, *, with_staleness: bool = True) -> MentalModel:
        """One model, with ``is_stale`` and ``staleness_reason`` (kind, since, count, memory_ids) computed when
        asked. Raises :class:`NotFoundError`."""
        model = found_in_bank(self.store.get_mental_model(bank_id, model_id), "Mental model", model_id, bank_id)
        if with_staleness:
            mark_stale(self.store, bank_id, [model])
            explain_staleness(self.store, bank_id, model)
            self.governance.annotate([model], self.clock())
        return model

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str] = (),
        tags_match: Literal["any", "all", "exact"] = "any",
        limit: int = 100,
        offset: int = 0,
        detail: Literal["metadata", "content", "full"] = "full",
        exclude_knowledge_pages: bool = False,
    ) -> tuple[list[MentalModel], int]:
        """A page of models (``last_refreshed_at DESC, id DESC``) with ``is_stale`` and ``is_knowledge_page`` set,
        and the total. Below ``full`` detail, fields outside the level are not loaded
        (``structured_document``/``reflect_response`` None; at ``metadata`` also ``content`` empty).
        ``exclude_knowledge_pages`` lists standalone models only."""
        models, total = self.store.list_mental_models(
            bank_id,
            tags=normalize_tags(check_tags(tags, self.limits)),
            tags_match=tags_match,
            limit=limit,
            offset=check_offset(offset, limits=self.limits),
            detail=detail,
            exclude_knowledge_pages=exclude_knowledge_pages,
        )
        mark_stale(self.store, bank_id, models)
        self.governance.annotate(models, self.clock())
        return models, total

    def refresh_mental_model(
        self, bank_id: str, model_id: str, *, mode: Literal["full"] | None = None, automatic: bool = False
    ) -> str:
        """Queue a refresh and return its operation id.

        Coalescing (spec "Refresh a Mental Model"): while a refresh of the model is still queued, the same operation
        is returned; ``mode="full"`` upgrades it to full for that run; a manual request also releases a parked
        automatic one. A refresh already running is never reused: a new one queues behind it.
        Raises :class:`NotFoundError`.
        """
        return self.queue_refresh(bank_id, model_id, full=mode == "full", automatic=automatic)

    def update_mental_model(
        self,
        bank_id: str,
        model_id: str,
        *,
        name: str | None = None,
        source_query: str | None = None,
        max_tokens: int | None = None,
        tags: Sequence[str] | None = None,
        trigger: dict[str, Any] | None = None,
    ) -> MentalModel:
        """PATCH a model: given fields replace stored ones; ``trigger`` is MERGED over the stored trigger
        (``domain.trigger.merge_trigger``). Queues no refresh and writes no history (content is unchanged).

        Raises :class:`NotFoundError`, :class:`InvalidInputError` (blank name/query, max_tokens range, a merged
        trigger that breaks a rule).
        """
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        updated = patched_model(
            model,
            name=name,
            source_query=source_query,
            max_tokens=max_tokens,
            tags=tags,
            trigger=trigger,
            limits=self.limits,
        )
        self.store.save_refresh(updated, history=None, history_cap=self.settings.mental_model_history_max_entries)
        return self.get_mental_model(bank_id, model_id)

    def delete_mental_model(self, bank_id: str, model_id: str) -> None:
        """Delete a model and its history. Raises :class:`NotFoundError`."""
        changed_in_bank(self.store.delete_mental_model(bank_id, model_id), "Mental model", model_id, bank_id)

    def clear_mental_model(self, bank_id: str, model_id: str) -> MentalModel:
        """Spec "Clear a Mental Model": content "" and structure reset synchronously (previous version kept in
        history); configuration kept; the next refresh is necessarily full, and the model counts as stale until it
        runs. The refresh-governance record is reset too (clearing is how a person accepts an empty
        document and closes the model's circuit breaker). Raises :class:`NotFoundError`."""
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        cleared = replace(
            model,
            content="",
            structured_document=None,
            reflect_response=None,
            last_refreshed_source_query=None,
            last_refresh_failed_at=None,
            cleared_at=utcnow(),
            refresh_state=RefreshState(),  # clearing accepts the empty document: failures, breaker and marks reset
        )
        self.store.save_refresh(
            cleared, history=self._version_history(model), history_cap=self.settings.mental_model_history_max_entries
        )
        return self.get_mental_model(bank_id, model_id)

    def revert_mental_model(self, bank_id: str, model_id: str, history_id: int) -> MentalModel:
        """Restore the content (and its structure) a history version recorded, with the watermark it was written
        at, so memories written since make the model stale again; the revert is itself recorded.

        Raises :class:`NotFoundError` (model or history id) and :class:`InvalidInputError` (a failure record).
        """
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        entry = next((e for e in self.store.list_history(bank_id, model_id) if e.id == history_id), None)
        if entry is None:
            raise NotFoundError(f"History entry {history_id} not found for mental model '{model_id}'")
        if not is_version(entry.content):
            raise InvalidInputError("history_id", "is a failure record, not a version; nothing to restore")
        content = entry.content.get("previous_content") or ""
        stored = entry.content.get("previous_structured_document")
        # a curated version's structure (person-written blocks, pins) comes back with it
        document = StructuredDocument.from_dict(stored) if stored else parse_markdown(content)
        restored = replace(
            model,
            content=render_markdown(document),
            structured_document=document.to_dict() if content else None,
            reflect_response={
                **(entry.content.get("previous_reflect_response") or {}),
                "outcome": "content_written",
                "reverted_from_history_id": history_id,
            },
            # a revert is not a refresh: "last refreshed" keeps saying when a refresh last ran
            # the restored content stands for the data it was written from: its watermark comes back with it (a
            # deliberate step back), so memories written since make the model stale and a delta refresh reads them
            last_memory_seen_at=parse_timestamp(entry.content.get("previous_last_memory_seen_at"))
            if "previous_last_memory_seen_at" in entry.content
            else model.last_memory_seen_at,
            cleared_at=None,
            # a revert holds (docs/curation.md): memories written before it trigger no automatic refresh, and the
            # first one after a new write is a delta on top of this version; a waiting draft is set aside
            refresh_state=replace(
                model.refresh_state,
                reanchor=None,
                draft=None,
                hold={"reason": "reverted", "through": to_iso(self.store.bank_last_memory_write_at(bank_id))},
            ),
        )
        self.store.save_refresh(
            restored, history=self._version_history(model), history_cap=self.settings.mental_model_history_max_entries
        )
        return self.get_mental_model(bank_id, model_id)

    def scope_preview(
        self, bank_id: str, *, tags: Sequence[str] = (), trigger: MentalModelTrigger | dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """How many memories a model with ``tags`` and ``trigger`` would read now, by fact type, and the resolved
        match mode (beyond the reference: the strict-tag default silently matching nothing is its top pitfall)."""
        self._check_bank_id(bank_id)
        check_tags(tags, self.limits)
        trig = trigger if isinstance(trigger, MentalModelTrigger) else _trigger(trigger or {})
        scope = model_scope(normalize_tags(tags), trig.model_dump())
        exists = self.store.bank_exists(bank_id)
        counts = self.store.count_in_scope(bank_id, scope) if exists else {}
        by_type = {t: counts.get(t, 0) for t in FACT_TYPES}
        reads_observations = scope.fact_types is None or "observation" in scope.fact_types
        return {
            "total": sum(by_type.values()),
            "by_fact_type": by_type,
            # facts of the scope's tags that consolidation has not turned into observations yet (0 when the scope
            # reads no observations)
            "pending_consolidation": self._pending_in_scope(bank_id, scope) if exists and reads_observations else 0,
            "tags": list(scope.tags),
            "tags_match": None if scope.tag_groups else scope.tags_match,
            "tag_groups": scope.groups or None,
            "fact_types": None if scope.fact_types is None else list(scope.fact_types),
        }

    def _pending_in_scope(self, bank_id: str, scope: MemoryFilter) -> int:
        """Facts (world, experience) with the scope's tags still waiting for consolidation (at most
        :data:`PENDING_COUNTED` are counted)."""
        facts = self.store.unconsolidated_facts(bank_id, PENDING_COUNTED)
        return sum(1 for f in facts if admits_tags(scope, f.tags))

    def scope_warnings(self, model: MentalModel) -> list[str]:
        """Plain-language warnings about a model's scope (empty list when all is well): a scope that matches
        nothing, one that reads only observations while its tags match only facts, and facts of the scope that
        consolidation has not turned into observations yet ("N facts in scope, consolidation pending")."""
        preview = self.scope_preview(model.bank_id, tags=model.tags, trigger=model.trigger)
        pending = int(preview["pending_consolidation"])
        waiting = f"{pending} facts in scope, consolidation pending: observations are formed from them when it runs."
        if preview["total"] == 0 and preview["fact_types"] is not None:
            # the tags may well match: say so when it is the fact types that leave the scope empty
            other = self.scope_preview(model.bank_id, tags=model.tags, trigger={**model.trigger, "fact_types": None})
            if other["total"]:
                kinds = ", ".join(f"{n} {t}" for t, n in other["by_fact_type"].items() if n)
                why = (
                    waiting
                    if pending
                    else "Consolidation found nothing in them worth an observation (greetings, thanks, questions)."
                )
                return [
                    f"The scope reads only {preview['fact_types']} memories and has none yet; its tags match "
                    f"{kinds}. {why} To read the facts themselves, add 'world' and 'experience' to "
                    "trigger.fact_types."
                ]
        if preview["total"] == 0:
            mode = preview["tags_match"] or "tag_groups"
            warning = f"The scope matches no memories right now (tags {list(model.tags)}, match {mode}); a refresh "
            warning += "will find nothing."
            if model.tags and mode == "all_strict":
                warning += (
                    " Tagged models default to all_strict: set trigger.tags_match to 'any' if your memories carry"
                    " only some of the tags."
                )
            return [warning]
        # a scope that reads the facts themselves answers from them meanwhile
        types = preview["fact_types"]
        reads_facts = types is None or {"world", "experience"} <= set(types)
        return [waiting] if pending and not reads_facts else []

    def _version_history(self, model: MentalModel) -> dict[str, Any] | None:
        if not self.settings.enable_mental_model_history:
            return None
        return version_entry(model)

    def mental_model_history(self, bank_id: str, model_id: str) -> list[dict[str, Any]]:
        """History entries, most recent first: ``{id, changed_at, previous_content, ..., version}`` or failure
        records (``version`` null). ``version`` (beyond the reference) numbers the content a row holds per model,
        oldest first: 0 is the empty state a model starts from (the row its first refresh wrote), 1 its first
        written content, and the current content is the newest row's ``version`` + 1. Numbers are stored with each
        row when it is written, so trimming the oldest rows (``mental_model_history_max_entries``) keeps them."""
        self.get_mental_model(bank_id, model_id, with_staleness=False)
        return [
            {"id": e.id, **e.content, "changed_at": to_iso(e.changed_at), "version": e.version}
            for e in self.store.list_history(bank_id, model_id)
        ]

    def memory_cited_by(self, bank_id: str, memory_id: str) -> dict[str, Any]:
        """``GET /memories/{id}/cited-by`` (and the client's name): ``{memory_id, mental_models: [{id, name,
        is_knowledge_page, is_stale, staleness_reason}]}`` for :meth:`models_citing`. Raises
        :class:`NotFoundError`."""
        keys = ("id", "name", "is_knowledge_page", "is_stale", "staleness_reason")
        models = self.models_citing(bank_id, memory_id)
        return {"memory_id": memory_id, "mental_models": [{k: getattr(m, k) for k in keys} for m in models]}

    def models_citing(self, bank_id: str, memory_id: str) -> list[MentalModel]:
        """The mental models (knowledge pages among them) whose current document cites ``memory_id``, each with
        ``is_stale`` and the kind of its ``staleness_reason``; a deleted memory's citations still answer (its citers
        are stale until refreshed). Raises :class:`NotFoundError` when the bank is unknown, or when the memory
        neither exists nor is cited."""
        self._require_bank(bank_id)
        ids = self.store.citing_models(bank_id, memory_id)
        if not ids and not self.store.get_memories(bank_id, [memory_id]):
            raise NotFoundError(f"Memory '{memory_id}' not found in bank '{bank_id}'")
        models = [m for i in ids if (m := self.store.get_mental_model(bank_id, i)) is not None]
        mark_stale(self.store, bank_id, models)
        return models

    def dry_run_refresh(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Spec "Dry run": the real pipeline with every write skipped (and, as in the reference, no structured-output
        extraction); returns what a refresh would do (``MentalModelDryRunRefreshResult``). Raises
        :class:`NotFoundError`, and :class:`RefreshPreviewError` when the engine failed in a way none of the five
        dry-run outcomes names (no answer, retrieval or unexpected error)."""
        model = self.get_mental_model(bank_id, model_id, with_staleness=False)
        plan = self.refresher.plan(model, self.refresh_settings(bank_id), dry_run=True)
        if reference_outcome(plan.outcome) not in DRY_RUN_OUTCOMES:
            reason = plan.failure_reason or "unexpected_error"
            raise RefreshPreviewError(plan.error_message or reason, reason=reason, upstream=reason == "no_answer")
        return dry_run_result(plan)

    def dry_run_refresh_mental_model(self, bank_id: str, model_id: str) -> dict[str, Any]:
        """Alias of :meth:`dry_run_refresh` (the client's name)."""
        return self.dry_run_refresh(bank_id, model_id)

    def get_mental_model_history(self, bank_id: str, model_id: str) -> list[dict[str, Any]]:
        """Alias of :meth:`mental_model_history` (the client's name)."""
        return self.mental_model_history(bank_id, model_id)
