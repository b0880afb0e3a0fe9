"""Reflect: answer a question through the hierarchy (mental models, observations, facts). Spec: "Reflect"."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Literal

from mindbank.domain.limits import check_tags, check_text, check_token_budget
from mindbank.domain.records import FACT_TYPES, FactType
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch, freeze_groups, normalize_tags, validate_tag_groups
from mindbank.domain.trigger import validate_response_schema
from mindbank.engine.reflect import ReflectOptions, ReflectScope
from mindbank.engine.reflect import reflect as run_reflect
from mindbank.errors import InvalidInputError
from mindbank.providers.llm.context import context_budget
from mindbank.service.core import ServiceCore, ServiceState
from mindbank.service.directives import DirectivesService
from mindbank.service.tracing import llm_call_context


def leaf_tags(groups: list[dict[str, Any]]) -> list[str]:
    """Every tag named anywhere in a tag-group expression (the tags a directive may be scoped to)."""
    found: list[str] = []
    for group in groups:
        found += [str(t) for t in group.get("tags") or ()]
        for key in ("and", "or"):
            found += leaf_tags(list(group.get(key) or []))
        if isinstance(group.get("not"), dict):
            found += leaf_tags([group["not"]])
    return found


class ReflectService(ServiceCore):
    """Reflect: answer a query from the bank (the ``directives`` that apply go into the LLM prompt)."""

    def __init__(self, state: ServiceState, *, directives: DirectivesService) -> None:
        super().__init__(state)
        self.directives = directives

    def reflect(
        self,
        bank_id: str,
        query: str,
        *,
        budget: Literal["low", "mid", "high"] = "low",
        max_tokens: int = 4096,
        include_facts: bool = False,
        include_tool_calls: bool = False,
        tool_outputs: bool = True,
        response_schema: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        tags_match: TagsMatch = "any",
        tag_groups: list[dict[str, Any]] | None = None,
        fact_types: Sequence[FactType] | None = None,
        exclude_mental_models: bool = False,
        exclude_mental_model_ids: Sequence[str] = (),
        observations_max_tokens: int | None = None,
        apply_all_directives: bool = False,
    ) -> dict[str, Any]:
        """Spec "Reflect": answer ``query`` through the hierarchy (mental models → observations → facts), with the
        reflect LLM's agent loop, or extractively (cited quotations) when none is configured. Returns the reference's
        ``ReflectResponse`` dict (``engine/reflect/run.py``). The LLM follows the bank's mission and the active
        directives that apply to ``tags`` (or to the tags of ``tag_groups``; every active one with
        ``apply_all_directives``); the extractive engine cannot.

        Raises :class:`InvalidInputError` (blank query, tags with tag_groups, bad tag groups / response_schema / fact
        types), :class:`NotFoundError` for the bank, ``LLMError`` / ``LLMTransientError`` from the provider."""
        check_text(query, "query", self.limits.max_query_chars, blank_ok=False)
        check_tags(tags or (), self.limits)
        check_token_budget(max_tokens, "max_tokens", self.limits)
        if observations_max_tokens is not None:
            check_token_budget(observations_max_tokens, "reflect_search_observations_max_tokens", self.limits)
        if tags and tag_groups:
            raise InvalidInputError("tag_groups", "tags and tag_groups are mutually exclusive")
        if fact_types is not None and not fact_types:
            raise InvalidInputError("fact_types", "must not be an empty list (use null for all types)")
        try:
            groups = None if tag_groups is None else freeze_groups(validate_tag_groups(tag_groups))
        except ValueError as exc:
            raise InvalidInputError("tag_groups", str(exc)) from exc
        try:
            if response_schema is not None:
                validate_response_schema(response_schema)
        except ValueError as exc:
            raise InvalidInputError("response_schema", str(exc)) from exc
        self._require_bank(bank_id)
        embedder = self.bank_embedder(bank_id)  # the bank's model, its earlier one while a re-embedding runs
        fit = context_budget(self.settings.llm_context_window)  # the evidence held to the LLM's context window
        scope = ReflectScope(
            bank_id=bank_id,
            filter=MemoryFilter(tags=normalize_tags(tags), tags_match=tags_match, tag_groups=groups),
            fact_types=tuple(fact_types) if fact_types else FACT_TYPES,
            exclude_mental_models=exclude_mental_models,
            exclude_mental_model_ids=frozenset(exclude_mental_model_ids),
            recall_max_tokens=min(self.resolved_setting(bank_id, "recall_max_tokens"), fit.facts if fit else 1 << 30),
            observations_max_tokens=min(observations_max_tokens or 5000, fit.observations if fit else 1 << 30),
            recall_candidates=self.settings.recall_candidates,
        )
        bank = self.store.get_bank(bank_id)
        scope_tags = list(tags or ()) or leaf_tags(tag_groups or [])
        options = ReflectOptions(
            query=query.strip(), budget=budget, max_tokens=max_tokens, include_facts=include_facts,
            tool_calls=include_tool_calls, tool_outputs=tool_outputs, response_schema=response_schema,
            request_id=f"reflect-{uuid.uuid4()}",
            directives=tuple(
                self.directives.applicable_directives(bank_id, scope_tags, apply_all=apply_all_directives)
            ),
            mission=None if bank is None else bank.mission,
        )  # fmt: skip
        with llm_call_context(bank_id, options.request_id):
            return run_reflect(self.store, embedder, self.llms.get("reflect"), scope, options)
