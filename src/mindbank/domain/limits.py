"""Size and shape limits of everything a caller sends, one definition for every surface (HTTP, MCP, in-process).

Two kinds live here:

* Fixed rules of the spec: a mental model's ``max_tokens`` is 256–8192 tokens, default 2048 (spec "Create a Mental
  Model"); its id matches :data:`MODEL_ID_PATTERN`; integers fit a signed 64-bit column (both stores store them so).
* Configurable limits (:class:`Limits`, read from ``MINDBANK_MAX_*`` settings, ``docs/configuration.md``): body
  size, JSON depth, items per request, characters of content / queries / other text, tags per item and per tag,
  document ids, bank ids (length and character set), metadata entries, token budgets and page offsets.

Each rule is a ``check_*`` function raising :class:`~mindbank.errors.InvalidInputError` naming the field. The
service calls them for in-process callers; :mod:`mindbank.domain.fields` wraps the same functions as pydantic
annotated types for the HTTP schemas and MCP tool signatures (so the OpenAPI document publishes the limits); the
HTTP body guard uses :func:`scan_json` on every JSON body. NUL characters are refused in every string (PostgreSQL
cannot store them, and SQLite would store what PostgreSQL refuses: the two stores must agree).

Which limits apply: the limits of the request being served (set per request by the API with :func:`using`), else
those of the last :class:`~mindbank.service.MindBank` opened in the process (:func:`configure`), else the defaults.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from mindbank.errors import InvalidInputError

if TYPE_CHECKING:
    from mindbank.config import Settings
    from mindbank.domain.records import RetainItem

MIN_MAX_TOKENS, MAX_MAX_TOKENS, DEFAULT_MAX_TOKENS = 256, 8192, 2048
# a daily refresh token budget: a trillion tokens is no budget at all, and keeps the value inside 64-bit columns
MAX_DAILY_TOKEN_BUDGET = 10**12
MODEL_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_MODEL_ID_CHARS = 128
MAX_NAME_CHARS = 256
MAX_ID_CHARS = 256  # an id in a URL path (memory, model, operation, key): ours are far shorter
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_INTERVAL_SECONDS = 10 * 365 * 24 * 3600  # a refresh floor of ten years is already "never"

# Control characters (Unicode category Cc) are refused in identifiers (tags, document ids, bank ids, metadata keys);
# other text refuses only NUL. The same classes, spelled for JSON Schema, go into the published schema.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NO_NUL_PATTERN = r"^[^\x00]*$"
NOT_BLANK_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_CONTROL_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
_NOT_BLANK = re.compile(r"[^\s\x00]")
_FORBIDDEN_IN_BANK_ID = re.compile(r"[*/\\\x00-\x1f\x7f-\x9f]")

MaxTokens = Annotated[
    int,
    Field(ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS, description="Document size target in tokens (256-8192)."),
]


@dataclass(frozen=True)  # no slots: the compiled bank id pattern is cached on the instance
class Limits:
    """The configurable limits; build with :meth:`from_settings` (defaults: ``Settings()``'s). Character counts
    are Python characters (code points); ``max_body_bytes`` counts bytes."""

    max_body_bytes: int
    max_json_depth: int
    max_items_per_request: int
    max_content_chars: int
    max_query_chars: int
    max_text_chars: int
    max_tags_per_item: int
    max_tag_chars: int
    max_document_id_chars: int
    max_bank_id_chars: int
    bank_id_pattern: str
    max_metadata_entries: int
    max_token_budget: int
    max_offset: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The limits of ``settings``. Raises ``ValueError`` naming a limit below 1 or an invalid bank id pattern
        (so a bad configuration fails at start-up)."""
        values = {f.name: getattr(settings, f.name) for f in fields(cls)}
        for name, value in values.items():
            if isinstance(value, int) and value < 1:
                raise ValueError(f"MINDBANK_{name.upper()} must be at least 1, got {value}")
        try:
            re.compile(values["bank_id_pattern"])
        except re.error as exc:
            raise ValueError(f"MINDBANK_BANK_ID_PATTERN is not a regular expression: {exc}") from exc
        return cls(**values)

    @cached_property
    def _bank_id_re(self) -> re.Pattern[str]:
        return re.compile(self.bank_id_pattern)

    def bank_id_matches(self, value: str) -> bool:
        """Whether ``value`` matches the configured bank id pattern (length and forbidden characters aside)."""
        return self._bank_id_re.search(value) is not None


def default_limits() -> Limits:
    """The limits of a default ``Settings()``."""
    from mindbank.config import Settings

    return Limits.from_settings(Settings())


_PROCESS: list[Limits] = []
_REQUEST: ContextVar[Limits | None] = ContextVar("mindbank_limits", default=None)


def configure(limits: Limits) -> None:
    """Make ``limits`` the process-wide limits (a :class:`~mindbank.service.MindBank` does this when built)."""
    _PROCESS[:] = [limits]


@contextmanager
def using(limits: Limits) -> Iterator[None]:
    """Apply ``limits`` to the code run inside (and the tasks and threads it starts with a copy of the context)."""
    token = _REQUEST.set(limits)
    try:
        yield
    finally:
        _REQUEST.reset(token)


def current_limits() -> Limits:
    """The limits that apply here: the request's, else the process's, else the defaults."""
    limits = _REQUEST.get()
    if limits is not None:
        return limits
    if not _PROCESS:
        _PROCESS.append(default_limits())
    return _PROCESS[0]


# ---------------------------------------------------------------- checks (InvalidInputError naming the field)


def check_text(value: str, field: str, max_chars: int, *, blank_ok: bool = True) -> str:
    """``value`` when it has no NUL, at most ``max_chars`` characters and (unless ``blank_ok``) something besides
    whitespace."""
    if len(value) > max_chars:
        raise InvalidInputError(field, f"must be at most {max_chars} characters (got {len(value)})")
    if "\x00" in value:
        raise InvalidInputError(field, "must not contain NUL characters")
    if not blank_ok and _NOT_BLANK.search(value) is None:
        raise InvalidInputError(field, "must not be blank")
    return value


def check_identifier(value: str, field: str, max_chars: int) -> str:
    """``value`` when it has at most ``max_chars`` characters and no control character (tags, document ids,
    metadata keys: they are indexed, so their size is bounded, and shown, so they hold no control codes)."""
    if len(value) > max_chars:
        raise InvalidInputError(field, f"must be at most {max_chars} characters (got {len(value)})")
    if _CONTROL.search(value):
        raise InvalidInputError(field, "must not contain control characters (NUL, newline, tab...)")
    return value


def check_bank_id(value: str, limits: Limits | None = None, field: str = "bank_id") -> str:
    """``value`` when it is a bank id the limits allow: 1..``max_bank_id_chars`` characters matching
    ``bank_id_pattern``, and never ``*``, ``/``, ``\\`` or a control character (``*`` is the wildcard of API key
    scopes, ``/`` separates URL segments)."""
    limits = limits or current_limits()
    if not value:
        raise InvalidInputError(field, "must not be empty")
    if len(value) > limits.max_bank_id_chars:
        raise InvalidInputError(field, f"must be at most {limits.max_bank_id_chars} characters (got {len(value)})")
    if _FORBIDDEN_IN_BANK_ID.search(value) or not limits.bank_id_matches(value):
        raise InvalidInputError(field, f"must match {limits.bank_id_pattern} (no '*', '/' or control characters)")
    return value


def check_tags(values: Sequence[str], limits: Limits | None = None, field: str = "tags") -> Sequence[str]:
    """``values`` when there are at most ``max_tags_per_item`` tags of at most ``max_tag_chars`` characters each,
    with no control characters."""
    limits = limits or current_limits()
    if len(values) > limits.max_tags_per_item:
        raise InvalidInputError(field, f"must have at most {limits.max_tags_per_item} tags (got {len(values)})")
    for i, tag in enumerate(values):
        check_identifier(tag, f"{field}[{i}]", limits.max_tag_chars)
    return values


def check_metadata(values: Mapping[str, str], limits: Limits | None = None, field: str = "metadata") -> None:
    """Metadata: at most ``max_metadata_entries`` keys (each an identifier of at most ``max_tag_chars``), values of
    at most ``max_text_chars`` characters without NUL."""
    limits = limits or current_limits()
    if len(values) > limits.max_metadata_entries:
        raise InvalidInputError(field, f"must have at most {limits.max_metadata_entries} keys (got {len(values)})")
    for key, value in values.items():
        check_identifier(key, f"{field}.{key[:40]}", limits.max_tag_chars)
        check_text(value, f"{field}.{key}", limits.max_text_chars)


def check_token_budget(value: int, field: str, limits: Limits | None = None) -> int:
    """``value`` when it is a token budget between 1 and ``max_token_budget``."""
    limits = limits or current_limits()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limits.max_token_budget:
        raise InvalidInputError(field, f"must be an integer between 1 and {limits.max_token_budget}")
    return value


def check_offset(value: int, field: str = "offset", limits: Limits | None = None) -> int:
    """``value`` when it is a page offset between 0 and ``max_offset``."""
    limits = limits or current_limits()
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limits.max_offset:
        raise InvalidInputError(field, f"must be an integer between 0 and {limits.max_offset}")
    return value


def check_max_tokens(value: int, field: str = "max_tokens") -> int:
    """``value`` when it is a document budget the spec allows; raises :class:`InvalidInputError` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_MAX_TOKENS <= value <= MAX_MAX_TOKENS:
        raise InvalidInputError(field, f"must be an integer between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}")
    return value


def check_retain_items(items: Sequence[RetainItem], limits: Limits | None = None, field: str = "items") -> None:
    """A retain request's items: their number, and each item's content, context, metadata, document id and tags.
    Raises :class:`InvalidInputError` naming e.g. ``items[3].document_id``."""
    limits = limits or current_limits()
    if not items:
        raise InvalidInputError(field, "must not be empty")
    if len(items) > limits.max_items_per_request:
        raise InvalidInputError(
            field, f"must have at most {limits.max_items_per_request} items (got {len(items)}); split the request"
        )
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        check_text(item.content, f"{where}.content", limits.max_content_chars, blank_ok=False)
        if item.context is not None:
            check_text(item.context, f"{where}.context", limits.max_text_chars)
        if item.document_id is not None:
            check_identifier(item.document_id, f"{where}.document_id", limits.max_document_id_chars)
        check_metadata(item.metadata, limits, f"{where}.metadata")
        check_tags(item.tags, limits, f"{where}.tags")


# ---------------------------------------------------------------- JSON bodies
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (JSON's ``\\ud83d`` without its pair decodes to one)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


Path = tuple[str | int, ...]


def scan_json(value: Any, limits: Limits | None = None) -> tuple[Path, str, str] | None:
    """The first problem of a decoded JSON document that no schema can be trusted to catch, as ``(path, error
    type, message)``, or None: nesting deeper than ``max_json_depth``, a NUL character in a string or key, an
    integer outside the signed 64-bit range (no store column holds one), NaN or Infinity (Python's JSON reader
    accepts them; JSON has no such numbers), a lone UTF-16 surrogate (``"\\ud800"`` decodes to a string no UTF-8
    encoder, tokenizer or store accepts)."""
    limits = limits or current_limits()
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > limits.max_json_depth:
            return path, "json_too_deep", f"JSON nests deeper than {limits.max_json_depth} levels"
        if isinstance(node, str):
            if "\x00" in node:
                return path, "string_nul", "must not contain NUL characters"
            if _lone_surrogate(node):
                return path, "string_surrogate", "must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)"
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if not INT64_MIN <= node <= INT64_MAX:
                return path, "int_out_of_range", "integer out of the signed 64-bit range"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return path, "number_not_finite", "not a finite number (NaN, Infinity, or too large for a 64-bit float)"
        elif isinstance(node, dict):
            for key, child in node.items():
                if "\x00" in key:
                    return (*path, key.replace("\x00", "\\u0000")), "string_nul", "keys must not contain NUL"
                if _lone_surrogate(key):
                    return (
                        (*path, key.encode("utf-8", "replace").decode()),
                        "string_surrogate",
                        ("keys must not contain a lone UTF-16 surrogate"),
                    )
                stack.append((child, (*path, key)))
        elif isinstance(node, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(node))
    return None
