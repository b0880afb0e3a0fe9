"""Response shapes of a bank's resources beyond memories and mental models, in the reference's JSON (its OpenAPI
document's schemas named below): documents, chunks and document history, directives, webhooks and deliveries, and
traced LLM requests. Pure functions of domain records, shared by the HTTP API and MCP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mindbank.domain.projection import project
from mindbank.domain.records import LLMRequestRecord
from mindbank.domain.resources import (
    ChunkRecord,
    Directive,
    DocumentEvent,
    DocumentSummary,
    Webhook,
    WebhookDelivery,
)
from mindbank.domain.timeutil import to_iso

REDACTED = "********"
_NO_OBSERVATIONS = {"count": 0, "ids": []}


def _retain_params(doc: DocumentSummary) -> dict[str, Any] | None:
    return {"context": doc.context} if doc.context else None


def document_list_item(doc: DocumentSummary) -> dict[str, Any]:
    """``DocumentListItem``: a document's metadata without its text."""
    return {
        **project(doc, ("id", "bank_id", "content_hash", "created_at", "updated_at", "text_length")),
        "memory_unit_count": doc.memory_count,
        "retain_params": _retain_params(doc),
        "document_metadata": doc.metadata,
        **project(doc, ("tags", "matched_fields")),
    }


def document_response(doc: DocumentSummary) -> dict[str, Any]:
    """``DocumentResponse``: one document with its text and its memory counts by fact type."""
    return {
        **project(doc, ("id", "bank_id", "original_text", "content_hash", "created_at", "updated_at")),
        "memory_unit_count": doc.memory_count,
        "nodes_by_fact_type": doc.memories_by_type,
        "tags": list(doc.tags),
        "document_metadata": doc.metadata,
        "retain_params": _retain_params(doc),
        "observation_scopes": None,
        "attachments": None,
    }


def chunk_response(chunk: ChunkRecord) -> dict[str, Any]:
    """``ChunkResponse``."""
    keys = ("chunk_id", "document_id", "bank_id", "chunk_index", "chunk_text", "created_at")
    return {
        **project(chunk, keys, {"chunk_id": "id", "chunk_index": "index", "chunk_text": "text"}),
        "attachments": None,
    }


def document_event(event: DocumentEvent) -> dict[str, Any]:
    """``DocumentEvent``. mindbank does not attribute consolidation changes to documents: the observation samples
    are empty."""
    keys = ("document_id", "kind", "created_at", "operation_id", "fact_id", "facts_added", "facts_removed")
    return {
        **project(event, keys),
        "observations_created": dict(_NO_OBSERVATIONS),
        "observations_updated": dict(_NO_OBSERVATIONS),
        "observations_removed": dict(_NO_OBSERVATIONS),
    }


def directive_response(d: Directive) -> dict[str, Any]:
    """``DirectiveResponse``."""
    return project(d, ("id", "bank_id", "name", "content", "priority", "is_active", "tags", "created_at", "updated_at"))


def webhook_response(w: Webhook) -> dict[str, Any]:
    """``WebhookResponse``; the secret is redacted (``********`` when one is set)."""
    return {
        **project(w, ("id", "bank_id", "url")),
        "secret": REDACTED if w.secret else None,
        **project(w, ("event_types", "enabled", "http_config", "created_at", "updated_at")),
    }


def delivery_response(d: WebhookDelivery) -> dict[str, Any]:
    """``WebhookDeliveryResponse``."""
    return project(d, _DELIVERY_KEYS)


_DELIVERY_KEYS = (
    "id",
    "event_id",
    "webhook_id",
    "url",
    "event_type",
    "status",
    "attempts",
    "next_retry_at",
    "last_error",
    "last_response_status",
    "last_response_body",
    "last_attempt_at",
    "created_at",
    "updated_at",
)


def traced_operation(record: LLMRequestRecord) -> str:
    """The reference's ``operation`` of a traced call: ``reflect``, ``retain``, ``consolidation`` or (a
    mental-model refresh) ``refresh``; the store's ``page_llm_requests`` filter uses the same rule."""
    if (record.operation_id or "").startswith("reflect-"):
        return "reflect"
    return {"retain_extract": "retain", "consolidation": "consolidation"}.get(record.scope, "refresh")


def llm_request_entry(record: LLMRequestRecord) -> dict[str, Any]:
    """``LLMRequestEntry``: one traced attempt. ``trace_id`` is the operation (or reflect request) it served; spans
    and cached/thinking tokens are not recorded (null)."""
    ended = record.created_at
    return {
        **project(record, ("id", "bank_id")),
        "operation": traced_operation(record),
        "scope": record.scope,
        "trace_id": record.operation_id,
        "span_id": None,
        "parent_span_id": None,
        **project(record, ("provider", "model")),
        "status": "error" if record.error else "success",
        "started_at": to_iso(ended - timedelta(milliseconds=record.duration_ms)),
        "ended_at": to_iso(ended),
        "duration_ms": record.duration_ms,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "cached_tokens": None,
        "thoughts_tokens": None,
        "total_tokens": record.input_tokens + record.output_tokens,
        "input": record.request,
        "output": record.response,
        "error": record.error,
        "llm_info": {"attempt": record.attempt},
        "metadata": {},
    }
