"""What each client method sends and how its answer is read, shared by the sync and async clients.

Each builder returns a :class:`Request`: method, path, query, JSON body and a parser for the response body. The two
clients only differ in how they send it, so the wire contract lives in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from mindbank.client.errors import MindBankHTTPError
from mindbank.client.models import (
    BankConfig,
    BankList,
    BankStats,
    CancelResponse,
    CreateMentalModelResponse,
    DryRunResult,
    HistoryEntry,
    MentalModel,
    MentalModelList,
    Operation,
    OperationList,
    RecallResponse,
    ReflectResponse,
    RefreshResponse,
    RetainResponse,
    StatusResponse,
    TagList,
)

T = TypeVar("T")
Detail = Literal["metadata", "content", "full"]
Budget = Literal["low", "mid", "high"]


@dataclass(frozen=True, slots=True)
class Request(Generic[T]):
    """One HTTP exchange: ``parse`` turns the decoded JSON body into the method's return value."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] | None = None
    json: Any = None


def _model(kind: type[BaseModel]) -> Callable[[Any], Any]:
    return kind.model_validate


_HISTORY = TypeAdapter(list[HistoryEntry])


def _bank(bank_id: str) -> str:
    return f"/v1/default/banks/{quote(bank_id, safe='')}"


def _mm(bank_id: str, model_id: str) -> str:
    return f"{_bank(bank_id)}/mental-models/{quote(model_id, safe='')}"


def _op(bank_id: str, operation_id: str) -> str:
    return f"{_bank(bank_id)}/operations/{quote(operation_id, safe='')}"


def _clean(data: Mapping[str, Any]) -> dict[str, Any]:
    """Drop unset (None) fields: the server applies its own defaults."""
    return {k: v for k, v in data.items() if v is not None}


def _time(value: str | datetime | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _trigger(trigger: Mapping[str, Any] | BaseModel | None) -> dict[str, Any] | None:
    if isinstance(trigger, BaseModel):
        return trigger.model_dump(exclude_unset=True)
    return None if trigger is None else dict(trigger)


def error_message(detail: Any) -> str:
    """A readable message from an error body's ``detail``: a string as is; FastAPI's 422 list as
    ``field: message`` parts joined by ``; ``."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for err in detail:
            if not isinstance(err, dict):
                parts.append(str(err))
                continue
            loc = [str(p) for p in err.get("loc", []) if p not in ("body", "query", "path")]
            msg = str(err.get("msg", "")).removeprefix("Value error, ")  # pydantic's wrapper adds nothing here
            parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
        return "; ".join(parts)
    return str(detail)


def read_response(response: httpx.Response, request: Request[T]) -> T:
    """The parsed body of a 2xx response. Raises :class:`MindBankHTTPError` (status, the server's message) for any
    other status."""
    if response.is_success:
        return request.parse(response.json())
    try:
        body = response.json()
        detail = body.get("detail", body) if isinstance(body, dict) else body
    except ValueError:
        detail = response.text or response.reason_phrase
    raise MindBankHTTPError(response.status_code, error_message(detail), detail=detail, method=request.method,
                            path=request.path)  # fmt: skip


# ---------------------------------------------------------------- memories
def retain(
    bank_id: str,
    content: str | None = None,
    *,
    items: Sequence[Mapping[str, Any]] | None = None,
    tags: Sequence[str] | None = None,
    context: str | None = None,
    timestamp: str | datetime | None = None,
    metadata: Mapping[str, str] | None = None,
    document_id: str | None = None,
    async_: bool = False,
) -> Request[RetainResponse]:
    if (content is None) == (items is None):
        raise ValueError("pass either content or items")
    if items is None:
        items = [
            _clean(
                {
                    "content": content,
                    "tags": list(tags) if tags is not None else None,
                    "context": context,
                    "timestamp": _time(timestamp),
                    "metadata": dict(metadata) if metadata is not None else None,
                    "document_id": document_id,
                }
            )
        ]
    body = {"items": [{k: _time(v) if k == "timestamp" else v for k, v in i.items()} for i in items], "async": async_}
    return Request("POST", f"{_bank(bank_id)}/memories", _model(RetainResponse), json=body)


def recall(
    bank_id: str,
    query: str,
    *,
    types: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    tags_match: str | None = None,
    max_tokens: int | None = None,
    budget: Budget | None = None,
) -> Request[RecallResponse]:
    body = _clean(
        {
            "query": query,
            "types": list(types) if types else None,
            "tags": list(tags) if tags else None,
            "tags_match": tags_match,
            "max_tokens": max_tokens,
            "budget": budget,
        }
    )
    return Request("POST", f"{_bank(bank_id)}/memories/recall", _model(RecallResponse), json=body)


def reflect(
    bank_id: str,
    query: str,
    *,
    budget: Budget | None = None,
    max_tokens: int | None = None,
    tags: Sequence[str] | None = None,
    tags_match: str | None = None,
    include_facts: bool = False,
    response_schema: Mapping[str, Any] | None = None,
    fact_types: Sequence[str] | None = None,
    exclude_mental_models: bool | None = None,
) -> Request[ReflectResponse]:
    body = _clean(
        {
            "query": query,
            "budget": budget,
            "max_tokens": max_tokens,
            "tags": list(tags) if tags else None,
            "tags_match": tags_match,
            "include": {"facts": {}} if include_facts else None,
            "response_schema": dict(response_schema) if response_schema is not None else None,
            "fact_types": list(fact_types) if fact_types else None,
            "exclude_mental_models": exclude_mental_models,
        }
    )
    return Request("POST", f"{_bank(bank_id)}/reflect", _model(ReflectResponse), json=body)


def list_tags(
    bank_id: str,
    *,
    q: str | None = None,
    source: Literal["memories", "mental_models"] = "memories",
    limit: int = 100,
    offset: int = 0,
) -> Request[TagList]:
    params = _clean({"q": q, "source": source, "limit": limit, "offset": offset})
    return Request("GET", f"{_bank(bank_id)}/tags", _model(TagList), params=params)


def stats(bank_id: str) -> Request[BankStats]:
    return Request("GET", f"{_bank(bank_id)}/stats", _model(BankStats))


def list_banks() -> Request[BankList]:
    return Request("GET", "/v1/default/banks", _model(BankList))


def get_bank_config(bank_id: str) -> Request[BankConfig]:
    return Request("GET", f"{_bank(bank_id)}/config", _model(BankConfig))


def update_bank_config(bank_id: str, updates: Mapping[str, Any]) -> Request[BankConfig]:
    return Request("PATCH", f"{_bank(bank_id)}/config", _model(BankConfig), json={"updates": dict(updates)})


# ---------------------------------------------------------------- mental models
def create_mental_model(
    bank_id: str,
    name: str,
    source_query: str,
    *,
    id: str | None = None,
    tags: Sequence[str] | None = None,
    max_tokens: int | None = None,
    trigger: Mapping[str, Any] | BaseModel | None = None,
) -> Request[CreateMentalModelResponse]:
    body = _clean(
        {
            "id": id,
            "name": name,
            "source_query": source_query,
            "tags": list(tags) if tags is not None else None,
            "max_tokens": max_tokens,
            "trigger": _trigger(trigger),
        }
    )
    return Request("POST", f"{_bank(bank_id)}/mental-models", _model(CreateMentalModelResponse), json=body)


def list_mental_models(
    bank_id: str,
    *,
    tags: Sequence[str] | None = None,
    tags_match: Literal["any", "all", "exact"] | None = None,
    detail: Detail = "metadata",
    limit: int = 100,
    offset: int = 0,
) -> Request[MentalModelList]:
    params = _clean(
        {"tags": list(tags) if tags else None, "tags_match": tags_match, "detail": detail, "limit": limit,
         "offset": offset}
    )  # fmt: skip
    return Request("GET", f"{_bank(bank_id)}/mental-models", _model(MentalModelList), params=params)


def get_mental_model(bank_id: str, mental_model_id: str, *, detail: Detail = "full") -> Request[MentalModel]:
    return Request("GET", _mm(bank_id, mental_model_id), _model(MentalModel), params={"detail": detail})


def update_mental_model(
    bank_id: str,
    mental_model_id: str,
    *,
    name: str | None = None,
    source_query: str | None = None,
    max_tokens: int | None = None,
    tags: Sequence[str] | None = None,
    trigger: Mapping[str, Any] | BaseModel | None = None,
) -> Request[MentalModel]:
    body = _clean(
        {
            "name": name,
            "source_query": source_query,
            "max_tokens": max_tokens,
            "tags": list(tags) if tags is not None else None,
            "trigger": _trigger(trigger),
        }
    )
    return Request("PATCH", _mm(bank_id, mental_model_id), _model(MentalModel), json=body)


def delete_mental_model(bank_id: str, mental_model_id: str) -> Request[StatusResponse]:
    return Request("DELETE", _mm(bank_id, mental_model_id), _model(StatusResponse))


def refresh_mental_model(
    bank_id: str, mental_model_id: str, *, mode: Literal["full"] | None = None
) -> Request[RefreshResponse]:
    body = {"mode": mode} if mode else None
    return Request("POST", f"{_mm(bank_id, mental_model_id)}/refresh", _model(RefreshResponse), json=body)


def dry_run_refresh_mental_model(bank_id: str, mental_model_id: str) -> Request[DryRunResult]:
    return Request("POST", f"{_mm(bank_id, mental_model_id)}/dry-run-refresh", _model(DryRunResult))


def clear_mental_model(bank_id: str, mental_model_id: str) -> Request[MentalModel]:
    return Request("POST", f"{_mm(bank_id, mental_model_id)}/clear", _model(MentalModel))


def revert_mental_model(bank_id: str, mental_model_id: str, history_id: int) -> Request[MentalModel]:
    return Request(
        "POST", f"{_mm(bank_id, mental_model_id)}/revert", _model(MentalModel), json={"history_id": history_id}
    )


def get_mental_model_history(bank_id: str, mental_model_id: str) -> Request[list[HistoryEntry]]:
    return Request("GET", f"{_mm(bank_id, mental_model_id)}/history", _HISTORY.validate_python)


# ---------------------------------------------------------------- operations
def list_operations(
    bank_id: str,
    *,
    status: str | None = None,
    operation_type: str | None = None,
    limit: int = 20,
    offset: int = 0,
) -> Request[OperationList]:
    params = _clean({"status": status, "type": operation_type, "limit": limit, "offset": offset})
    return Request("GET", f"{_bank(bank_id)}/operations", _model(OperationList), params=params)


def get_operation(bank_id: str, operation_id: str) -> Request[Operation]:
    return Request("GET", _op(bank_id, operation_id), _model(Operation))


def cancel_operation(bank_id: str, operation_id: str) -> Request[CancelResponse]:
    return Request("DELETE", _op(bank_id, operation_id), _model(CancelResponse))
