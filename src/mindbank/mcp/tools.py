"""The MCP tools: one method per tool over a :class:`~mindbank.service.MindBank`, and their registration.

Each tool is written once, with a required keyword-only ``bank_id``. :func:`build_server` registers it as is for a
multi-bank server (``/mcp``, ``mindbank mcp`` without ``--bank``) or, for a single-bank server (``/mcp/{bank_id}``,
``mindbank mcp --bank B``), under a signature without ``bank_id`` whose value comes from a resolver. Return shapes
follow the reference's MCP tools (reference facts §9) and reuse the response shapes of ``mindbank.wire``, so a model, an
operation or a recall hit looks the same over HTTP and MCP. Docstrings are the tool descriptions an agent reads.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from mindbank.domain.limits import DEFAULT_MAX_TOKENS, MaxTokens
from mindbank.domain.records import FactType
from mindbank.domain.tags import TagsMatch
from mindbank.domain.trigger import MentalModelTrigger, MentalModelTriggerPatch
from mindbank.errors import MindBankError
from mindbank.service import MindBank
from mindbank.wire.items import retain_item
from mindbank.wire.shapes import (
    bank_list_item,
    bank_stats_response,
    mental_model_response,
    operation_response,
    operation_summary,
    recall_result,
    tag_page,
)

Detail = Literal["metadata", "content", "full"]
BankId = Annotated[str, Field(description="Id of the memory bank to use.", min_length=1)]
ModelId = Annotated[str, Field(description="Id of the mental model.", min_length=1)]
TagList = Annotated[list[str] | None, Field(description="Tags (e.g. 'user:alice').")]
# The trigger input mirrors every field of the HTTP MentalModelTrigger, all optional, unknown keys rejected; tag_groups
# are plain objects (recursive schemas break some providers) and are validated like HTTP ones after the merge.
TriggerInput = Annotated[
    MentalModelTriggerPatch | None,  # type: ignore[valid-type]
    Field(description="Trigger settings (same fields as the HTTP API's trigger); only the given fields are set."),
]
ShorthandTagsMatch = Annotated[
    TagsMatch | None, Field(description="Shorthand for trigger.tags_match (how the model's tags filter its memories).")
]
ShorthandAfterConsolidation = Annotated[
    bool | None, Field(description="Shorthand for trigger.refresh_after_consolidation.")
]

# Every tool name, in the order tools are listed; MINDBANK_MCP_ENABLED_TOOLS picks from these.
TOOL_NAMES: tuple[str, ...] = (
    "retain",
    "recall",
    "reflect",
    "list_banks",
    "list_mental_models",
    "get_mental_model",
    "create_mental_model",
    "update_mental_model",
    "delete_mental_model",
    "refresh_mental_model",
    "clear_mental_model",
    "dry_run_refresh_mental_model",
    "get_mental_model_history",
    "list_tags",
    "get_bank_stats",
    "list_operations",
    "get_operation",
    "cancel_operation",
)
# Tools about the server rather than one bank: absent from single-bank servers.
MULTI_BANK_ONLY = frozenset({"list_banks"})


class ToolInputError(ValueError):
    """A tool argument breaks a rule that only the tool layer knows (e.g. a shorthand contradicting the trigger)."""


def parse_enabled_tools(raw: str | Collection[str] | None) -> frozenset[str] | None:
    """``MINDBANK_MCP_ENABLED_TOOLS`` (comma list or names) as a set; None (all tools) when empty.

    Raises ``ValueError`` naming unknown tools, so a typo fails at start-up instead of silently hiding a tool.
    """
    names = [n.strip() for n in (raw.split(",") if isinstance(raw, str) else raw or ()) if n.strip()]
    if not names:
        return None
    unknown = sorted(set(names) - set(TOOL_NAMES))
    if unknown:
        raise ValueError(
            f"MINDBANK_MCP_ENABLED_TOOLS: unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOL_NAMES)}"
        )
    return frozenset(names)


def _with_shorthands(
    trigger: dict[str, Any] | None, tags_match: str | None, refresh_after_consolidation: bool | None
) -> dict[str, Any] | None:
    """Fold the legacy shorthand arguments into the trigger dict; a shorthand contradicting the same trigger field
    is an error (the reference's rule), an agreeing one is harmless."""
    merged = dict(trigger or {})
    for key, value in (("tags_match", tags_match), ("refresh_after_consolidation", refresh_after_consolidation)):
        if value is None:
            continue
        if merged.get(key) is not None and merged[key] != value:
            raise ToolInputError(f"{key} is given both as an argument ({value!r}) and in trigger ({merged[key]!r})")
        merged[key] = value
    return merged if trigger is not None or merged else None


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}" if where else err["msg"])
    return "; ".join(parts)


class MindBankTools:
    """The tool implementations. Every method returns a JSON-able dict and raises domain errors, which
    :func:`build_server` turns into MCP tool errors carrying the message."""

    def __init__(self, mb: MindBank) -> None:
        self.mb = mb

    # ------------------------------------------------------------------ memories
    def retain(
        self,
        content: Annotated[str, Field(description="Text to remember (a message, a note, a document).", min_length=1)],
        context: Annotated[str | None, Field(description="Where the content comes from, e.g. 'chat'.")] = None,
        timestamp: Annotated[str | None, Field(description="When it was said, ISO-8601 (default: now).")] = None,
        tags: TagList = None,
        metadata: Annotated[dict[str, str] | None, Field(description="String key/value metadata.")] = None,
        document_id: Annotated[str | None, Field(description="Re-using an id replaces that document.")] = None,
        async_processing: Annotated[bool, Field(description="Queue the work and return an operation id.")] = False,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Store a memory in the bank (created if missing).

        Returns {success, status: "stored", bank_id, items_count, memory_ids} or, with async_processing,
        {success, status: "accepted", bank_id, items_count, operation_id}.
        """
        item = retain_item(
            content, timestamp=timestamp, context=context, metadata=metadata, document_id=document_id, tags=tags
        )
        result = self.mb.retain(bank_id, [item], async_=async_processing)
        base = {"success": True, "bank_id": bank_id, "items_count": result.items_count}
        if async_processing:
            return {**base, "status": "accepted", "operation_id": result.operation_id}
        return {**base, "status": "stored", "memory_ids": result.memory_ids}

    def recall(
        self,
        query: Annotated[str, Field(description="What to look for, in natural language.", min_length=1)],
        max_tokens: Annotated[int, Field(ge=1, description="Budget of returned fact text in tokens.")] = 4096,
        types: Annotated[list[FactType] | None, Field(description="Fact types to search (default all).")] = None,
        tags: TagList = None,
        tags_match: Annotated[TagsMatch, Field(description="How tags filter memories.")] = "any",
        limit: Annotated[int | None, Field(ge=1, description="At most this many results.")] = None,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Search the bank's memories (semantic + keyword), best first.

        Returns {results: [{id, text, type, context, tags, occurred_start, mentioned_at, document_id, scores, ...}]}.
        """
        if not query.strip():
            raise ToolInputError("query must not be blank")
        hits = self.mb.recall(
            bank_id, query, types=types, tags=tags or (), tags_match=tags_match, max_tokens=max_tokens, limit=limit
        )
        return {"results": [recall_result(h) for h in hits]}

    def reflect(
        self,
        query: Annotated[str, Field(description="The question to answer from the bank's memory.", min_length=1)],
        budget: Annotated[Literal["low", "mid", "high"], Field(description="How hard to search.")] = "low",
        max_tokens: Annotated[int, Field(ge=1, description="Target answer length in tokens.")] = 4096,
        tags: TagList = None,
        tags_match: Annotated[TagsMatch, Field(description="How tags filter memories.")] = "any",
        include_facts: Annotated[bool, Field(description="Also return the memories the answer rests on.")] = False,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """Answer a question from the bank's mental models and memories (mental models first, then observations,
        then raw facts).

        Returns {text, based_on (with include_facts), structured_output, usage, ...} as the HTTP reflect endpoint does.
        """
        reflect = getattr(self.mb, "reflect", None)
        if reflect is None:  # registered only when the engine has reflect; kept defensive for direct callers
            raise ToolInputError("reflect is not available on this server")
        result = reflect(
            bank_id, query, budget=budget, max_tokens=max_tokens, tags=tags or (), tags_match=tags_match,
            include_facts=include_facts,
        )  # fmt: skip
        return _jsonable(result)

    # ------------------------------------------------------------------ banks
    def list_banks(self) -> dict[str, Any]:
        """List every memory bank with its memory count.

        Returns {banks: [{bank_id, name, mission, fact_count, created_at, last_write_at, ...}], total}.
        """
        banks = self.mb.list_banks()
        return {"banks": [bank_list_item(b, n) for b, n in banks], "total": len(banks)}

    def get_bank_stats(self, *, bank_id: BankId) -> dict[str, Any]:
        """Statistics of the bank: memory counts by fact type, documents, operations by status, last write.

        Returns the HTTP /stats shape {bank_id, total_nodes, nodes_by_fact_type, operations_by_status, ...}.
        """
        return bank_stats_response(bank_id, self.mb.bank_stats(bank_id))

    def list_tags(
        self,
        q: Annotated[str | None, Field(description="Filter, case-insensitive, '*' wildcards.")] = None,
        source: Annotated[
            Literal["memories", "mental_models"], Field(description="Count tags of memories or of mental models.")
        ] = "memories",
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Annotated[int, Field(ge=0)] = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the tags in use in the bank with their counts, most used first.

        Returns {items: [{tag, count}], total, limit, offset}.
        """
        items, total = self.mb.list_tags(bank_id, source=source, pattern=q, limit=limit, offset=offset)
        return tag_page(items, total, limit, offset)

    # ------------------------------------------------------------------ mental models
    def list_mental_models(
        self,
        tags: TagList = None,
        tags_match: Annotated[Literal["any", "all", "exact"], Field(description="How `tags` filter models.")] = "any",
        detail: Annotated[Detail, Field(description="metadata (default), content, or full.")] = "metadata",
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        offset: Annotated[int, Field(ge=0)] = 0,
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
        name: Annotated[str, Field(description="Human-readable name.", min_length=1, max_length=256)],
        source_query: Annotated[str, Field(description="The standing question the model answers.", min_length=1)],
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
        merged = _with_shorthands(raw, tags_match, trigger_refresh_after_consolidation)
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
        name: Annotated[str | None, Field(max_length=256)] = None,
        source_query: str | None = None,
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
        patch = _with_shorthands(raw, tags_match, trigger_refresh_after_consolidation)
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

    # ------------------------------------------------------------------ operations
    def list_operations(
        self,
        status: Literal["pending", "processing", "completed", "failed", "cancelled"] | None = None,
        operation_type: Annotated[str | None, Field(description="e.g. refresh_mental_model, batch_retain.")] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
        *,
        bank_id: BankId,
    ) -> dict[str, Any]:
        """List the bank's background operations (refreshes, async retains), newest first.

        Returns {bank_id, total, limit, offset, operations: [{id, operation_type, status, mental_model_id, ...}]}.
        """
        ops, total = self.mb.list_operations(
            bank_id, status=status, operation_type=operation_type, limit=limit, offset=offset
        )
        return {
            "bank_id": bank_id,
            "total": total,
            "limit": limit,
            "offset": offset,
            "operations": [operation_summary(o) for o in ops],
        }

    def get_operation(self, operation_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Status of one background operation: pending, processing, completed, failed or cancelled.

        Returns {operation_id, status, operation_type, result_metadata, error_message, details, ...}.
        """
        return operation_response(self.mb.get_operation(bank_id, operation_id))

    def cancel_operation(self, operation_id: str, *, bank_id: BankId) -> dict[str, Any]:
        """Cancel a pending operation (running or finished ones cannot be cancelled).

        Returns {success, message, operation_id}.
        """
        self.mb.cancel_operation(bank_id, operation_id)
        return {"success": True, "message": f"Operation '{operation_id}' cancelled", "operation_id": operation_id}


def _jsonable(value: Any) -> dict[str, Any]:
    """A tool result as a dict: pydantic models and dataclasses are dumped, dicts pass through."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")  # type: ignore[no-any-return]
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"result": value}


def _llm_errors() -> tuple[type[BaseException], ...]:
    """The LLM port's error class, when the LLM providers are installed (imported late: optional layer)."""
    try:
        from mindbank.providers.llm.base import LLMError
    except ImportError:  # pragma: no cover - providers absent
        return ()
    return (LLMError,)


def reflect_available(mb: MindBank) -> bool:
    """Whether the engine offers reflect (it arrives with the LLM/agent work; until then the tool is not listed)."""
    return callable(getattr(mb, "reflect", None))


def as_tool(fn: Callable[..., dict[str, Any]], bank: Callable[[], str] | None) -> Callable[..., dict[str, Any]]:
    """A tool function for ``fn``: domain and validation errors become MCP tool errors (message kept); with
    ``bank`` the ``bank_id`` parameter disappears from the signature and is filled from ``bank()`` on each call.

    The SDK builds the input schema from ``__signature__``, so the wrapper carries an evaluated copy of ``fn``'s.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    sig = inspect.signature(fn, eval_str=True)
    takes_bank = "bank_id" in sig.parameters
    params = [p for p in sig.parameters.values() if not (bank is not None and p.name == "bank_id")]

    def tool(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if bank is not None and takes_bank:
            kwargs["bank_id"] = bank()
        try:
            return fn(*args, **kwargs)
        except ValidationError as exc:  # a trigger breaking a rule: report every offending field
            raise ToolError(_validation_message(exc)) from exc
        except (MindBankError, ValueError) as exc:  # not found, conflict, invalid input, unparseable timestamp
            raise ToolError(str(exc)) from exc
        except _llm_errors() as exc:  # a configured LLM failing (reflect): the agent should know why
            raise ToolError(f"the LLM failed: {exc}") from exc

    tool.__name__ = fn.__name__
    tool.__qualname__ = fn.__name__
    tool.__doc__ = inspect.cleandoc(fn.__doc__ or "")
    tool.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": sig.return_annotation}
    return tool
