"""Row <-> record conversion for the SQLite store (JSON columns are text, times fixed-width ISO strings)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from mindbank.domain.records import Bank, LLMRequestRecord, MemoryUnit, MentalModel, NewMemory, Operation
from mindbank.domain.timeutil import to_iso
from mindbank.store.sqlite.sql import tags_json, to_json, ts
from mindbank.store.sqlite.vector_index import IndexRow


def index_rows(ids: Sequence[str], memories: Sequence[NewMemory], updated: float) -> list[IndexRow]:
    """Vector-index rows for memories just written with ``ids`` at stamp ``updated`` (POSIX seconds)."""
    return [
        IndexRow(mid, np.asarray(m.embedding, np.float32), m.fact_type, tuple(sorted(set(m.tags))), updated)
        for mid, m in zip(ids, memories, strict=True)
    ]


def bank_row(r: sqlite3.Row) -> Bank:
    """A ``banks`` row as a :class:`Bank`."""
    return Bank(
        bank_id=r["bank_id"],
        name=r["name"],
        mission=r["mission"],
        disposition=None if r["disposition"] is None else json.loads(r["disposition"]),
        config=json.loads(r["config"]),
        created_at=datetime.fromisoformat(r["created_at"]),
        updated_at=datetime.fromisoformat(r["updated_at"]),
        last_memory_write_at=ts(r["last_memory_write_at"]),
    )


def memory_row(r: sqlite3.Row) -> MemoryUnit:
    """A ``memory_units`` row (``MEMORY_COLUMNS``) as a :class:`MemoryUnit`."""
    return MemoryUnit(
        id=r["id"],
        bank_id=r["bank_id"],
        text=r["text"],
        fact_type=r["fact_type"],
        tags=tuple(json.loads(r["tags"])),
        context=r["context"],
        metadata=json.loads(r["metadata"]),
        document_id=r["document_id"],
        chunk_id=r["chunk_id"],
        occurred_start=ts(r["occurred_start"]),
        occurred_end=ts(r["occurred_end"]),
        mentioned_at=ts(r["mentioned_at"]),
        created_at=datetime.fromisoformat(r["created_at"]),
        updated_at=datetime.fromisoformat(r["updated_at"]),
        source_memory_ids=None if r["source_memory_ids"] is None else tuple(json.loads(r["source_memory_ids"])),
        proof_count=r["proof_count"],
    )


def model_params(m: MentalModel) -> tuple[Any, ...]:
    """The ``mental_models`` insert parameters of a model, in column order."""
    return (
        m.bank_id,
        m.id,
        m.name,
        m.source_query,
        m.content,
        None if m.structured_document is None else to_json(m.structured_document),
        None if m.reflect_response is None else to_json(m.reflect_response),
        tags_json(m.tags),
        m.max_tokens,
        to_json(m.trigger),
        to_iso(m.last_refreshed_at),
        to_iso(m.last_memory_seen_at),
        m.last_refreshed_source_query,
        to_iso(m.last_refresh_failed_at),
        to_iso(m.last_full_refreshed_at),
        to_iso(m.created_at),
        to_iso(m.cleared_at),
    )


def model_row(r: sqlite3.Row) -> MentalModel:
    """A ``mental_models`` row as a :class:`MentalModel`."""
    return MentalModel(
        id=r["id"],
        bank_id=r["bank_id"],
        name=r["name"],
        source_query=r["source_query"],
        content=r["content"],
        tags=tuple(json.loads(r["tags"])),
        max_tokens=r["max_tokens"],
        trigger=json.loads(r["trigger"]),
        structured_document=None if r["structured_document"] is None else json.loads(r["structured_document"]),
        reflect_response=None if r["reflect_response"] is None else json.loads(r["reflect_response"]),
        last_refreshed_at=datetime.fromisoformat(r["last_refreshed_at"]),
        last_memory_seen_at=ts(r["last_memory_seen_at"]),
        last_refreshed_source_query=r["last_refreshed_source_query"],
        last_refresh_failed_at=ts(r["last_refresh_failed_at"]),
        last_full_refreshed_at=ts(r["last_full_refreshed_at"]),
        created_at=datetime.fromisoformat(r["created_at"]),
        cleared_at=ts(r["cleared_at"]),
    )


def operation_row(r: sqlite3.Row) -> Operation:
    """An ``operations`` row as an :class:`Operation`."""
    return Operation(
        id=r["id"],
        bank_id=r["bank_id"],
        operation_type=r["operation_type"],
        status=r["status"],
        payload=json.loads(r["payload"]),
        result=None if r["result"] is None else json.loads(r["result"]),
        error=r["error"],
        retry_count=r["retry_count"],
        next_retry_at=ts(r["next_retry_at"]),
        mental_model_id=r["mental_model_id"],
        created_at=datetime.fromisoformat(r["created_at"]),
        updated_at=datetime.fromisoformat(r["updated_at"]),
        completed_at=ts(r["completed_at"]),
    )


def llm_request_row(r: sqlite3.Row) -> LLMRequestRecord:
    """An ``llm_requests`` row as an :class:`LLMRequestRecord`."""
    return LLMRequestRecord(
        id=r["id"],
        bank_id=r["bank_id"],
        operation_id=r["operation_id"],
        scope=r["scope"],
        provider=r["provider"],
        model=r["model"],
        attempt=r["attempt"],
        request=json.loads(r["request"]),
        response=None if r["response"] is None else json.loads(r["response"]),
        error=r["error"],
        input_tokens=r["input_tokens"],
        output_tokens=r["output_tokens"],
        duration_ms=r["duration_ms"],
        created_at=datetime.fromisoformat(r["created_at"]),
    )
