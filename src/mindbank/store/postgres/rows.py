"""Row <-> record conversion for the PostgreSQL store (rows are dicts; JSON is jsonb, tags ``text[]``, vectors
pgvector ``vector``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg.types.json import Jsonb

from mindbank.domain.records import Bank, MemoryUnit, MentalModel, Operation
from mindbank.store.postgres.queries import tag_list


def jsonb(value: Any) -> Jsonb | None:
    """A jsonb parameter, or None for SQL NULL."""
    return None if value is None else Jsonb(value)


def as_vector(value: Any) -> npt.NDArray[np.float32]:
    """A stored embedding as a float32 numpy vector (pgvector's adapter yields ``Vector`` objects or arrays, plain
    psycopg yields the text form ``[1,2,3]``)."""
    if isinstance(value, str):
        return np.array(json.loads(value), dtype=np.float32)
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, dtype=np.float32)


def bank_row(r: dict[str, Any]) -> Bank:
    """A ``banks`` row as a :class:`Bank`."""
    return Bank(
        bank_id=r["bank_id"],
        name=r["name"],
        mission=r["mission"],
        disposition=r["disposition"],
        config=r["config"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        last_memory_write_at=r["last_memory_write_at"],
    )


def memory_row(r: dict[str, Any]) -> MemoryUnit:
    """A ``memory_units`` row as a :class:`MemoryUnit`."""
    return MemoryUnit(
        id=r["id"],
        bank_id=r["bank_id"],
        text=r["text"],
        fact_type=r["fact_type"],
        tags=tuple(r["tags"]),
        context=r["context"],
        metadata=r["metadata"],
        document_id=r["document_id"],
        chunk_id=r["chunk_id"],
        occurred_start=r["occurred_start"],
        occurred_end=r["occurred_end"],
        mentioned_at=r["mentioned_at"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        source_memory_ids=None if r["source_memory_ids"] is None else tuple(r["source_memory_ids"]),
        proof_count=r["proof_count"],
    )


def model_params(m: MentalModel) -> tuple[Any, ...]:
    """Insert parameters in ``insert_mental_model`` order; ``[2:15]`` are the ``update_mental_model`` SET values."""
    return (
        m.bank_id,
        m.id,
        m.name,
        m.source_query,
        m.content,
        jsonb(m.structured_document),
        jsonb(m.reflect_response),
        tag_list(m.tags),
        m.max_tokens,
        Jsonb(m.trigger),
        m.last_refreshed_at,
        m.last_memory_seen_at,
        m.last_refreshed_source_query,
        m.last_refresh_failed_at,
        m.last_full_refreshed_at,
        m.created_at,
        m.cleared_at,
    )


def model_row(r: dict[str, Any]) -> MentalModel:
    """A ``mental_models`` row as a :class:`MentalModel`."""
    return MentalModel(
        id=r["id"],
        bank_id=r["bank_id"],
        name=r["name"],
        source_query=r["source_query"],
        content=r["content"],
        tags=tuple(r["tags"]),
        max_tokens=r["max_tokens"],
        trigger=r["trigger"],
        structured_document=r["structured_document"],
        reflect_response=r["reflect_response"],
        last_refreshed_at=r["last_refreshed_at"],
        last_memory_seen_at=r["last_memory_seen_at"],
        last_refreshed_source_query=r["last_refreshed_source_query"],
        last_refresh_failed_at=r["last_refresh_failed_at"],
        last_full_refreshed_at=r["last_full_refreshed_at"],
        created_at=r["created_at"],
        cleared_at=r["cleared_at"],
    )


def operation_params(op: Operation) -> tuple[Any, ...]:
    """The ``insert_operation`` parameters of an operation, in column order."""
    return (
        op.id,
        op.bank_id,
        op.operation_type,
        op.status,
        Jsonb(op.payload),
        jsonb(op.result),
        op.error,
        op.retry_count,
        op.next_retry_at,
        op.mental_model_id,
        op.created_at,
        op.updated_at,
        op.completed_at,
    )


def operation_row(r: dict[str, Any]) -> Operation:
    """An ``operations`` row as an :class:`Operation`."""
    return Operation(
        id=r["id"],
        bank_id=r["bank_id"],
        operation_type=r["operation_type"],
        status=r["status"],
        payload=r["payload"],
        result=r["result"],
        error=r["error"],
        retry_count=r["retry_count"],
        next_retry_at=r["next_retry_at"],
        mental_model_id=r["mental_model_id"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        completed_at=r["completed_at"],
    )
