"""Response shapes shared by every surface (HTTP API, MCP): domain records turned into the reference's JSON
shapes, so a model, an operation, a memory or a recall hit looks the same whichever way it is fetched.

Pure functions of domain records; no surface imports another, they all import this.
"""

from __future__ import annotations

from typing import Any, Literal

from mindbank.domain.entities import entity_id, extract_entities
from mindbank.domain.projection import MEMORY_RENAMES, OPERATION_RENAMES, project
from mindbank.domain.records import Bank, MemoryUnit, MentalModel, Operation, ScoredMemory
from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.refresh.plan import reference_failure_reason, reference_outcome
from mindbank.engine.refresh.triggers import next_fire

Detail = Literal["metadata", "content", "full"]


def recall_result(hit: ScoredMemory, *, entities: bool = False) -> dict[str, Any]:
    """One ``RecallResponse.results`` entry; ``entities``: its ``entities`` lists the names its text mentions
    (:func:`mindbank.domain.entities.extract_entities`), else it is null (``include.entities`` null).

    Written out field by field rather than through :func:`~mindbank.domain.projection.project`: a recall returns
    about a hundred of these, and the generic projection (an attribute lookup and a type test per field) cost as
    much as encoding the whole response. The rule is the projection's: times as :func:`to_iso`, tuples as lists,
    the rest as stored."""
    m = hit.memory
    mentioned_at = to_iso(m.mentioned_at)
    return {
        "id": m.id,
        "text": m.text,
        "type": m.fact_type,
        "entities": list(extract_entities(m.text)) if entities else None,
        "context": m.context,
        "occurred_start": to_iso(m.occurred_start),
        "occurred_end": to_iso(m.occurred_end),
        "mentioned_at": mentioned_at,
        "document_id": m.document_id,
        "metadata": m.metadata,
        "chunk_id": m.chunk_id,
        "tags": list(m.tags),
        "source_fact_ids": None if m.source_memory_ids is None else list(m.source_memory_ids),
        "scores": {"final": hit.final, "reranker": None, "semantic": hit.semantic, "keyword": hit.keyword},
        "attachments": None,
        # mention_fields, inline
        "mention_count": m.mention_count,
        "last_mentioned_at": mentioned_at if m.last_mentioned_at is None else to_iso(m.last_mentioned_at),
    }


def mention_fields(m: MemoryUnit) -> dict[str, Any]:
    """Beyond the reference (a repeat is counted, not stored twice): how often the fact was retained (1 + its
    repeats) and when last (its ``mentioned_at`` until a repeat)."""
    return {"mention_count": m.mention_count, "last_mentioned_at": to_iso(m.last_mentioned_at or m.mentioned_at)}


# a model's fields in wire order: its identity, then (content level) its question and settings with its tags
# between them, then its times; metadata level is identity, tags and times
_IDENTITY_KEYS = ("id", "bank_id", "name")
_TIME_KEYS = (
    "last_refreshed_at",
    "last_memory_seen_at",
    "last_refresh_failed_at",
    "last_full_refreshed_at",
    "created_at",
    "is_knowledge_page",
)
_METADATA_KEYS = (*_IDENTITY_KEYS, "tags", *_TIME_KEYS)
_CONTENT_KEYS = ("source_query", "content", "max_tokens", "trigger")
# every key of a full ``MentalModelResponse`` that is a model field of the same name, in wire order
_MODEL_KEYS = (
    *_IDENTITY_KEYS,
    *_CONTENT_KEYS[:2],
    "tags",
    *_CONTENT_KEYS[2:],
    *_TIME_KEYS,
    "reflect_response",
    "is_stale",
)


def mental_model_response(model: MentalModel, detail: Detail) -> dict[str, Any]:
    """``MentalModelResponse`` projected to a detail level; keys outside the level are present and null."""
    full = {
        **project(model, _MODEL_KEYS),
        # beyond the reference: why it is stale (None when fresh), the kind only in a list; and refresh_status
        **project(model, ("staleness_reason", "refresh_status")),
        # beyond the reference, with the trigger: when its cron schedules fire next (the control plane shows them)
        "next_refresh_at": to_iso(next_fire(model.trigger.get("refresh_cron"), utcnow())),
        "next_full_refresh_at": to_iso(next_fire(model.trigger.get("full_refresh_cron"), utcnow())),
    }
    keep = set(_METADATA_KEYS) | {"is_stale", "staleness_reason", "refresh_status"}
    if detail in ("content", "full"):
        keep |= {*_CONTENT_KEYS, "next_refresh_at", "next_full_refresh_at"}
    if detail == "full":
        keep.add("reflect_response")
    return {k: (v if k in keep else None) for k, v in full.items()}


def operation_response(op: Operation) -> dict[str, Any]:
    """``OperationStatusResponse`` (wire sample 03)."""
    keys = ("mental_model_id", "created_at", "updated_at", "completed_at", "error_message", "retry_count")
    return {
        **project(op, ("operation_id", "status", "operation_type", "id", "task_type"), OPERATION_RENAMES),
        **project(op, (*keys, "next_retry_at"), OPERATION_RENAMES),
        "progress": operation_progress(op),
        "result_metadata": op.result,
        "details": operation_details(op),
        "child_operations": [],
        "task_payload": None,
    }


def operation_progress(op: Operation) -> dict[str, Any] | None:
    """``OperationProgress`` of a queued retain written in parts (items finished of all, facts written so far) or
    of a re-embedding (memories embedded with the target model of all) while it runs; None for other operations and
    once it is finished."""
    if not op.progress or op.status in ("completed", "failed", "cancelled"):
        return None
    if op.operation_type == "reembed":
        return {
            "stage": "embedding",
            "at": to_iso(op.updated_at),
            "processed": int(op.progress.get("staged", 0)),
            "total": int(op.progress.get("total", 0)),
            "detail": {"model": op.payload.get("model"), "from_model": op.progress.get("from_model")},
        }
    if op.operation_type != "batch_retain":
        return None
    return {
        "stage": "processing_batch",
        "at": to_iso(op.updated_at),
        "processed": int(op.progress.get("item", 0)),
        "total": len(op.payload.get("items", [])),
        "detail": {"memories_written": int(op.progress.get("memories", 0))},
    }


def operation_details(op: Operation) -> dict[str, Any] | None:
    """``RefreshMentalModelOperationDetails`` of a refresh operation (None for other types and for a refresh that
    never ran, e.g. refused by budget). The reference's client validates both fields against its enums: outcomes
    and reasons beyond them are reported as the nearest reference value (``result_metadata`` has the exact ones)."""
    if op.operation_type != "refresh_mental_model" or not op.result or op.result.get("refused"):
        return None
    outcome = op.result.get("outcome")
    return {
        "operation_type": op.operation_type,
        "outcome": None if outcome is None else reference_outcome(outcome),
        "failure_reason": reference_failure_reason(op.result.get("failure_reason")),
    }


DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}


def bank_profile(bank: Bank) -> dict[str, Any]:
    """``BankProfileResponse``."""
    return {
        "bank_id": bank.bank_id,
        "name": bank.name or bank.bank_id,
        "disposition": bank.disposition or DEFAULT_DISPOSITION,
        "mission": bank.mission or "",
        "background": None,
    }


def bank_list_item(bank: Bank, fact_count: int) -> dict[str, Any]:
    """``BankListItem``."""
    return {
        **bank_profile(bank),
        "created_at": to_iso(bank.created_at),
        "updated_at": to_iso(bank.updated_at),
        "fact_count": fact_count,
        "last_document_at": None,
        "last_write_at": to_iso(bank.last_memory_write_at),
        "display_alias": None,
        "matched_aliases": [],
    }


_MEMORY_ITEM_KEYS = (
    "id",
    "bank_id",
    "text",
    "type",
    "fact_type",
    "context",
    "tags",
    "metadata",
    "document_id",
    "chunk_id",
    "occurred_start",
    "occurred_end",
    "mentioned_at",
)


def memory_item(m: MemoryUnit) -> dict[str, Any]:
    """One memory as ``GET /memories/list`` and ``GET /memories/{id}`` return it."""
    return {
        **project(m, _MEMORY_ITEM_KEYS, MEMORY_RENAMES),
        "date": to_iso(m.occurred_start or m.mentioned_at),
        **project(m, ("created_at", "updated_at", "source_memory_ids", "proof_count")),
        "entities": None,
        **mention_fields(m),
    }


def recall_entities(bank_id: str, results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``RecallResponse.entities``: every name the ``results`` entries list, in order of first appearance, as the
    reference's ``EntityStateResponse`` ``{entity_id, canonical_name, observations}``. mindbank keeps no per-entity
    observations, so ``observations`` is always empty (and ``include.entities.max_tokens`` has nothing to cut)."""
    names = dict.fromkeys(name for r in results for name in r["entities"] or ())
    return {n: {"entity_id": entity_id(bank_id, n), "canonical_name": n, "observations": []} for n in names}


def operation_summary(op: Operation) -> dict[str, Any]:
    """One ``OperationsListResponse.operations`` entry (wire sample 22)."""
    return {
        **project(op, ("id", "task_type", "operation_id", "operation_type"), OPERATION_RENAMES),
        "items_count": len(op.payload.get("items", [])),
        "document_id": None,
        "filename": None,
        "mental_model_id": op.mental_model_id,
        "details": operation_details(op),
        **project(op, ("created_at", "updated_at", "status", "error_message", "retry_count"), OPERATION_RENAMES),
        "next_retry_at": to_iso(op.next_retry_at),
        "progress": operation_progress(op),
    }


def bank_stats_response(bank_id: str, stats: dict[str, Any]) -> dict[str, Any]:
    """``BankStatsResponse`` from :meth:`~mindbank.service.MindBank.bank_stats` (wire sample 21): the reference's
    graph counters mindbank does not keep (links) are present and zero."""
    by_status = stats["operations_by_status"]
    return {
        "bank_id": bank_id,
        "total_nodes": stats["total_nodes"],
        "total_links": 0,
        "total_documents": stats["total_documents"],
        "nodes_by_fact_type": stats["nodes_by_fact_type"],
        "links_by_link_type": {},
        "links_by_fact_type": {},
        "links_breakdown": {},
        "pending_operations": by_status.get("pending", 0) + by_status.get("processing", 0),
        "failed_operations": by_status.get("failed", 0),
        "operations_by_status": by_status,
        "last_consolidated_at": to_iso(stats["last_consolidated_at"]),
        "last_memory_write_at": to_iso(stats["last_memory_write_at"]),
        "pending_consolidation": stats["pending_consolidation"],
        "failed_consolidation": 0,
        "total_observations": stats["nodes_by_fact_type"].get("observation", 0),
        # beyond the reference (refresh governance): what refreshes spent, the budgets, the failing models
        **{
            k: stats[k]
            for k in ("refresh_spend", "refresh_budget", "failing_models", "bank_breaker_open")
            if k in stats
        },
    }


def tag_page(items: list[tuple[str, int]], total: int, limit: int, offset: int) -> dict[str, Any]:
    """``ListTagsResponse``: ``{items: [{tag, count}], total, limit, offset}``."""
    return {"items": [{"tag": t, "count": n} for t, n in items], "total": total, "limit": limit, "offset": offset}
