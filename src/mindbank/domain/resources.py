"""Records of a bank's resources beyond memories and mental models: documents (as listed), their chunks and change
history, directives, webhooks and their deliveries, and worker heartbeats; with the pure rules about them (which
directives apply to a request).

Wire shapes live in ``mindbank.wire``; these are what the store returns. Times are aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

DocumentEventKind = Literal["retain", "append", "reprocess", "retag", "update", "fact_edited", "fact_deleted"]

DeliveryStatus = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """A retained document as listed or read: its metadata, its text (None in listings) and how many memories it
    yielded, by fact type. ``context`` is the retain item's context (the reference's ``retain_params.context``)."""

    id: str
    bank_id: str
    content_hash: str
    tags: tuple[str, ...]
    metadata: dict[str, str]
    context: str | None
    created_at: datetime
    updated_at: datetime
    text_length: int
    memory_count: int
    original_text: str | None = None
    memories_by_type: dict[str, int] = field(default_factory=dict)
    matched_fields: tuple[str, ...] = ()  # a listing's text search: which of ``id``, ``original_text`` matched


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One stored chunk of a document; ``created_at`` is when its facts were written (the document's creation
    time for a chunk that yielded none)."""

    id: str
    bank_id: str
    document_id: str
    index: int
    text: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DocumentEvent:
    """One change to a document: a retain (replace), an append, a reprocess, a retag, or an edit / delete of one of
    its facts; with how many facts it added and removed."""

    id: int
    bank_id: str
    document_id: str
    kind: str
    created_at: datetime
    operation_id: str | None = None
    fact_id: str | None = None
    facts_added: int = 0
    facts_removed: int = 0


@dataclass(frozen=True, slots=True)
class Directive:
    """A standing instruction for the LLM engine: ``content`` goes into reflect and refresh prompts when the
    directive is active and applies to the request's tags (:func:`directive_applies`); higher ``priority`` first."""

    id: str
    bank_id: str
    name: str
    content: str
    priority: int
    is_active: bool
    tags: tuple[str, ...]
    created_at: datetime
    updated_at: datetime


def directive_applies(directive_tags: Sequence[str], request_tags: Sequence[str]) -> bool:
    """Whether a directive tagged ``directive_tags`` applies to a request (reflect, or a model's refresh) scoped to
    ``request_tags``: an untagged directive is global and always applies; a tagged one applies only when the request
    shares at least one of its tags (isolation: an unscoped request sees global directives only)."""
    return not directive_tags or bool(set(directive_tags) & set(request_tags))


def order_directives(directives: Sequence[Directive]) -> list[Directive]:
    """Prompt order: highest priority first, then oldest first (a stable order for equal priorities)."""
    return sorted(directives, key=lambda d: (-d.priority, d.created_at, d.id))


@dataclass(frozen=True, slots=True)
class Webhook:
    """A bank's webhook: where events of ``event_types`` are delivered (signed with ``secret`` when set).
    ``http_config``: ``{method, timeout_seconds, headers, params}``."""

    id: str
    bank_id: str
    url: str
    secret: str | None
    event_types: tuple[str, ...]
    enabled: bool
    http_config: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """One event on its way to one webhook: the signed body it sends (``payload``), its status and attempts.
    ``operation_id`` is the worker operation that delivers it (so a delivery survives restarts)."""

    id: str
    bank_id: str
    webhook_id: str
    event_id: str
    event_type: str
    url: str
    payload: dict[str, Any]
    status: DeliveryStatus
    attempts: int
    created_at: datetime
    updated_at: datetime
    operation_id: str | None = None
    next_retry_at: datetime | None = None
    last_error: str | None = None
    last_response_status: int | None = None
    last_response_body: str | None = None
    last_attempt_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class WorkerHeartbeat:
    """A process running the operation worker, as it last reported itself."""

    worker_id: str
    host: str
    pid: int
    started_at: datetime
    last_seen_at: datetime


def applicable_directives(directives: Sequence[Directive], tags: Sequence[str]) -> list[Directive]:
    """The active ones among ``directives`` that apply to a request scoped to ``tags``, in prompt order."""
    return order_directives([d for d in directives if d.is_active and directive_applies(d.tags, tags)])


def guidance_prompt(directives: Sequence[Directive], mission: str | None = None) -> str:
    """What an LLM prompt adds for the bank's owner: its mission and its directives, highest priority first
    ("" when there is neither)."""
    parts: list[str] = []
    if mission and mission.strip():
        parts.append(f"The memory bank's mission: {mission.strip()}")
    if directives:
        parts.append("Directives from the bank's owner. Follow every one; when two conflict, the earlier one wins:")
        parts += [f"{i}. {d.name}: {d.content}" for i, d in enumerate(directives, 1)]
    return "\n".join(parts)
