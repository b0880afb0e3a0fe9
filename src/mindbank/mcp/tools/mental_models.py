"""Mental-model tools: list, read, create, update, delete, refresh, clear, dry run, history."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindbank.domain import fields
from mindbank.domain.limits import DEFAULT_MAX_TOKENS, MaxTokens
from mindbank.domain.trigger import MentalModelTrigger
from mindbank.mcp.tools.common import (
    BankId,
    Detail,
    FilterTags,
    ModelId,
    Offset,
    ShorthandAfterConsolidation,
    ShorthandTagsMatch,
    TagList,
    ToolFamily,
    TriggerInput,
    with_shorthands,
)
from mindbank.wire.shapes import mental_model_response


class MentalModelTools(ToolFamily):
    """Mental-model tools: list, read, create, update, delete, refresh, clear, dry run, history."""

    TOOLS = (
        "list_mental_models",
        "get_mental_model",
        "create_mental_model",
        "update_mental_model",
        "delete_mental_model",
        "refresh_mental_model",
        "clear_mental_model",
        "dry_run_refresh_mental_model",
        "get_mental_model_history",
    )
    READS = frozenset(
        {"list_mental_models", "get_mental_model", "dry_run_refresh_mental_model", "get_mental_model_history"}
    )

    def list_mental_models(
        self,
        tags: FilterTags = None,
        tags_match: Annotated[Literal["any", "all", "exact"], Field(description="How `tags` filter models.")] = "any",
        detail: Annotated[Detail, Field(description="metadata (default), content, or full.")] = "metadata",
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Offset = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the bank's mental models (curated, self-refreshing answers to standing questions), newest first.

        Returns {items: [{id, name, tags, is_stale, last_refreshed_at, ...}], total, limit, offset}; with detail
        "content" each item also has source_query, content, max_tokens and trigger.
        """
        models, total = self.mb.list_mental_models(
            bank_id, tags=tags or (), tags_match=tags_match, limit=limit, offset=offset
        )
        return {
            "items": [mental_model_response(m, detail) for m in models],
            "total": total,
            "limit": limit,
            "offset": offset,
        }

    def get_mental_model(
        self,
        mental_model_id: ModelId,
        detail: Annotated[Detail, Field(description="metadata, content, or full (default).")] = "full",
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Read one mental model: its markdown content (each statement cites [mem:<id>]) and whether it is stale.

        Returns {id, name, source_query, content, tags, max_tokens, trigger, is_stale, last_refreshed_at, ...}.
        """
        return mental_model_response(self.mb.get_mental_model(bank_id, mental_model_id), detail)

    def create_mental_model(
        self,
        name: Annotated[fields.NameText, Field(description="Human-readable name.")],
        source_query: Annotated[fields.QueryText, Field(description="The standing question the model answers.")],
        mental_model_id: Annotated[
            str | None, Field(description="Custom id: lowercase letters, digits and hyphens.")
        ] = None,
        tags: TagList = None,
        trigger: TriggerInput = None,
        tags_match: ShorthandTagsMatch = None,
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
        trigger_refresh_after_consolidation: ShorthandAfterConsolidation = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Create a mental model; its first refresh runs in the background (poll get_operation).

        Tagged models read only memories carrying all their tags unless trigger.tags_match says otherwise.
        Returns {mental_model_id, operation_id, status: "created", message, warnings}.
        """
        raw = None if trigger is None else trigger.model_dump(exclude_unset=True)
        merged = with_shorthands(raw, tags_match, trigger_refresh_after_consolidation)
        # the same validation the HTTP create body gets (every rule lives in MentalModelTrigger)
        validated = MentalModelTrigger.model_validate(merged or {})
        model_id, operation_id = self.mb.create_mental_model(
            bank_id,
            name=name,
            source_query=source_query,
            id=mental_model_id,
            tags=tags or (),
            max_tokens=max_tokens,
            trigger=validated,
        )
        warnings = self.mb.scope_warnings(self.mb.get_mental_model(bank_id, model_id, with_staleness=False))
        return {
            "mental_model_id": model_id,
            "operation_id": operation_id,
            "status": "created",
            "message": f"Mental model '{model_id}' created; its first refresh is queued as operation {operation_id}",
            "warnings": warnings,
        }

    def update_mental_model(
        self,
        mental_model_id: ModelId,
        name: fields.NameText | None = None,
        source_query: fields.QueryText | None = None,
        max_tokens: MaxTokens | None = None,
        tags: TagList = None,
        trigger: TriggerInput = None,
        tags_match: ShorthandTagsMatch = None,
        trigger_refresh_after_consolidation: ShorthandAfterConsolidation = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Change a mental model's name, question, size, tags or trigger (trigger fields are merged over the stored
        ones). Does not refresh it: call refresh_mental_model for that.

        Returns the updated model (detail full) plus warnings about its scope.
        """
        raw = None if trigger is None else trigger.model_dump(exclude_unset=True)
        patch = with_shorthands(raw, tags_match, trigger_refresh_after_consolidation)
        model = self.mb.update_mental_model(
            bank_id,
            mental_model_id,
            name=name,
            source_query=source_query,
            max_tokens=max_tokens,
            tags=tags,
            trigger=patch,
        )
        return {**mental_model_response(model, "full"), "warnings": self.mb.scope_warnings(model)}

    def delete_mental_model(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Delete a mental model and its history. Returns {status: "deleted", mental_model_id}."""
        self.mb.delete_mental_model(bank_id, mental_model_id)
        return {"status": "deleted", "mental_model_id": mental_model_id}

    def refresh_mental_model(
        self,
        mental_model_id: ModelId,
        mode: Annotated[
            Literal["full"] | None, Field(description="'full' rebuilds the whole document for this run.")
        ] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Queue a refresh of a mental model from the bank's current memories (a manual refresh runs now, ignoring
        the minimum interval). Returns {operation_id, status: "queued", message}; poll get_operation."""
        operation_id = self.mb.refresh_mental_model(bank_id, mental_model_id, mode=mode)
        return {
            "operation_id": operation_id,
            "status": "queued",
            "message": f"Refresh of mental model '{mental_model_id}' queued as operation {operation_id}",
        }

    def clear_mental_model(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Empty a mental model's content (kept in history); the next refresh rebuilds it in full.
        Returns {mental_model_id, status: "cleared", message}."""
        self.mb.clear_mental_model(bank_id, mental_model_id)
        return {
            "mental_model_id": mental_model_id,
            "status": "cleared",
            "message": f"Mental model '{mental_model_id}' cleared; refresh it to rebuild the content",
        }

    def dry_run_refresh_mental_model(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Preview what a refresh would do now without writing anything.

        Returns {outcome, would_persist, effective_mode, preview_content, diff, delta_operations, facts, warnings, ...}.
        """
        return self.mb.dry_run_refresh(bank_id, mental_model_id)

    def get_mental_model_history(self, mental_model_id: ModelId, *, bank_id: BankId) -> dict[str, Any]:
        """Previous versions of a mental model and failed refreshes, most recent first.

        Returns {mental_model_id, items: [{id, changed_at, previous_content, ...} or {id, kind: "refresh_failed",
        outcome, failure_reason, error_message, changed_at}], total}.
        """
        items = self.mb.mental_model_history(bank_id, mental_model_id)
        return {"mental_model_id": mental_model_id, "items": items, "total": len(items)}
