"""Response shapes of a bank's resources beyond memories and mental models, in the reference's JSON (its OpenAPI
document's schemas named below): documents, chunks and document history, directives, webhooks and deliveries, and
traced LLM requests. Pure functions of domain records, shared by the HTTP API and MCP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

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
        "id": doc.id,
        "bank_id": doc.bank_id,
        "content_hash": doc.content_hash,
        "created_at": to_iso(doc.created_at),
        "updated_at": to_iso(doc.updated_at),
        "text_length": doc.text_length,
        "memory_unit_count": doc.memory_count,
        "retain_params": _retain_params(doc),
        "document_metadata": doc.metadata,
        "tags": list(doc.tags),
        "matched_fields": list(doc.matched_fields),
    }


def document_response(doc: DocumentSummary) -> dict[str, Any]:
    """``DocumentResponse``: one document with its text and its memory counts by fact type."""
    return {
        "id": doc.id,
        "bank_id": doc.bank_id,
        "original_text": doc.original_text,
        "content_hash": doc.content_hash,
        "created_at": to_iso(doc.created_at),
        "updated_at": to_iso(doc.updated_at),
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
    return {
        "chunk_id": chunk.id,
        "document_id": chunk.document_id,
        "bank_id": chunk.bank_id,
        "chunk_index": chunk.index,
        "chunk_text": chunk.text,
        "created_at": to_iso(chunk.created_at),
        "attachments": None,
    }


def document_event(event: DocumentEvent) -> dict[str, Any]:
    """``DocumentEvent``. mindbank does not attribute consolidation changes to documents: the observation samples
    are empty."""
    return {
        "document_id": event.document_id,
        "kind": event.kind,
        "created_at": to_iso(event.created_at),
        "operation_id": event.operation_id,
        "fact_id": event.fact_id,
        "facts_added": event.facts_added,
        "facts_removed": event.facts_removed,
        "observations_created": dict(_NO_OBSERVATIONS),
        "observations_updated": dict(_NO_OBSERVATIONS),
        "observations_removed": dict(_NO_OBSERVATIONS),
    }


def directive_response(d: Directive) -> dict[str, Any]:
    """``DirectiveResponse``."""
    return {
        "id": d.id,
        "bank_id": d.bank_id,
        "name": d.name,
        "content": d.content,
        "priority": d.priority,
        "is_active": d.is_active,
        "tags": list(d.tags),
        "created_at": to_iso(d.created_at),
        "updated_at": to_iso(d.updated_at),
    }


def webhook_response(w: Webhook) -> dict[str, Any]:
    """``WebhookResponse``; the secret is redacted (``********`` when one is set)."""
    return {
        "id": w.id,
        "bank_id": w.bank_id,
        "url": w.url,
        "secret": REDACTED if w.secret else None,
        "event_types": list(w.event_types),
        "enabled": w.enabled,
        "http_config": w.http_config,
        "created_at": to_iso(w.created_at),
        "updated_at": to_iso(w.updated_at),
    }


def delivery_response(d: WebhookDelivery) -> dict[str, Any]:
    """``WebhookDeliveryResponse``."""
    return {
        "id": d.id,
        "event_id": d.event_id,
        "webhook_id": d.webhook_id,
        "url": d.url,
        "event_type": d.event_type,
        "status": d.status,
        "attempts": d.attempts,
        "next_retry_at": to_iso(d.next_retry_at),
        "last_error": d.last_error,
        "last_response_status": d.last_response_status,
        "last_response_body": d.last_response_body,
        "last_attempt_at": to_iso(d.last_attempt_at),
        "created_at": to_iso(d.created_at),
        "updated_at": to_iso(d.updated_at),
    }


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
        "id": record.id,
        "bank_id": record.bank_id,
        "operation": traced_operation(record),
        "scope": record.scope,
        "trace_id": record.operation_id,
        "span_id": None,
        "parent_span_id": None,
        "provider": record.provider,
        "model": record.model,
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
