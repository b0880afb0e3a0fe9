"""An archive's records under the importing server's request limits: an archive is input like any request body, so
what HTTP refuses is refused from an archive too (the producer's limits, or a hand-edited file, are not trusted).

:func:`check_record` applies, per record kind, the rules of the field it becomes: texts of facts and documents
(``max_content_chars``), context and metadata values (``max_text_chars``), queries (``max_query_chars``), tags
(count, length, no control characters), metadata (entries, keys), document ids, a mental model's ``max_tokens``,
directives and webhooks (``domain.resource_checks``); and every integer of a record must fit the 32-bit columns
both stores keep them in (ids aside: 64-bit). NUL characters, lone surrogates, non-finite numbers and nesting are
the JSON scan's (``limits.scan_json``), run on every line before its record is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from mindbank.domain import limits as L
from mindbank.domain.resource_checks import INT32_MAX, INT32_MIN, check_directive, check_http_config, split_webhook_url
from mindbank.domain.transfer import archive as fmt
from mindbank.errors import InvalidInputError

MAX_SECRET_CHARS = 512
BIG_INT_FIELDS = frozenset({"id"})  # 64-bit columns; every other archived integer is a 32-bit one


def _int32_overflow(name: str, value: object) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return name not in BIG_INT_FIELDS and not INT32_MIN <= value <= INT32_MAX


def _ints(record: BaseModel, prefix: str = "") -> None:
    for name, value in record:
        if isinstance(value, BaseModel):
            _ints(value, f"{prefix}{name}.")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    _ints(item, f"{prefix}{name}[{i}].")
        elif _int32_overflow(name, value):
            raise InvalidInputError(f"{prefix}{name}", f"must be an integer from {INT32_MIN} to {INT32_MAX}")


def _metadata(values: Mapping[str, Any], limits: L.Limits) -> None:
    if len(values) > limits.max_metadata_entries:
        raise InvalidInputError("metadata", f"must have at most {limits.max_metadata_entries} keys (got {len(values)})")
    for key, value in values.items():
        L.check_identifier(key, f"metadata.{key[:40]}", limits.max_tag_chars)
        if isinstance(value, str):
            L.check_text(value, f"metadata.{key[:40]}", limits.max_text_chars)


def _optional_text(value: str | None, field: str, max_chars: int) -> None:
    if value is not None:
        L.check_text(value, field, max_chars)


def _document(rec: fmt.DocumentRecord, limits: L.Limits) -> None:
    L.check_identifier(rec.id, "id", limits.max_document_id_chars)
    L.check_text(rec.original_text, "original_text", limits.max_content_chars)
    L.check_tags(rec.tags, limits)
    _metadata(rec.metadata, limits)
    _optional_text(rec.context, "context", limits.max_text_chars)
    for i, chunk in enumerate(rec.chunks):
        L.check_text(chunk.text, f"chunks[{i}].text", limits.max_content_chars)


def _memory(rec: fmt.MemoryRecord, limits: L.Limits) -> None:
    L.check_text(rec.text, "text", limits.max_content_chars)
    if rec.document_id is not None:
        L.check_identifier(rec.document_id, "document_id", limits.max_document_id_chars)
    L.check_tags(rec.tags, limits)
    _metadata(rec.metadata, limits)
    _optional_text(rec.context, "context", limits.max_text_chars)


def _model(rec: fmt.MentalModelRecord, limits: L.Limits) -> None:
    L.check_text(rec.name, "name", L.MAX_NAME_CHARS, blank_ok=False)
    L.check_text(rec.source_query, "source_query", limits.max_query_chars, blank_ok=False)
    L.check_text(rec.content, "content", limits.max_content_chars)
    L.check_tags(rec.tags, limits)
    L.check_max_tokens(rec.max_tokens)


def _directive(rec: fmt.DirectiveRecord, limits: L.Limits) -> None:
    check_directive(name=rec.name, content=rec.content, priority=rec.priority, tags=rec.tags, limits=limits)


def _webhook(rec: fmt.WebhookRecord, limits: L.Limits) -> None:
    split_webhook_url(rec.url.strip())
    check_http_config(rec.http_config)
    _optional_text(rec.secret, "secret", MAX_SECRET_CHARS)


def _bank(rec: fmt.BankRecord, limits: L.Limits) -> None:
    _optional_text(rec.name, "name", L.MAX_NAME_CHARS)
    _optional_text(rec.mission, "mission", limits.max_text_chars)


_CHECKS: dict[type[BaseModel], Any] = {
    fmt.DocumentRecord: _document,
    fmt.MemoryRecord: _memory,
    fmt.MentalModelRecord: _model,
    fmt.DirectiveRecord: _directive,
    fmt.WebhookRecord: _webhook,
    fmt.BankRecord: _bank,
}


def check_record(record: BaseModel, limits: L.Limits | None = None) -> None:
    """Refuse a record the importing server's limits refuse. Raises :class:`InvalidInputError` naming the field
    (the reader adds the member and line)."""
    limits = limits or L.current_limits()
    _ints(record)
    check = _CHECKS.get(type(record))
    if check is not None:
        check(record, limits)
