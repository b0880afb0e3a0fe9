"""The field rules of directives and webhooks, one definition for every path that writes them: the HTTP API and MCP
(through the service) and every record read from a transfer archive (re-validated on import: the importing server's
limits apply, never the archive's).

Each ``check_*`` raises :class:`~mindbank.errors.InvalidInputError` naming the field (``tags[3]``,
``http_config.headers.X-Trace``); an archive reader prefixes the member and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import SplitResult, urlsplit

from mindbank.domain.limits import Limits, check_tags, check_text
from mindbank.domain.tags import normalize_tags
from mindbank.errors import InvalidInputError

# a directive's priority is a 32-bit column on both stores
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_DIRECTIVE_NAME_CHARS = 256
MAX_DIRECTIVE_CHARS = 20_000
MAX_DIRECTIVES = 1000  # per bank: every prompt of the bank reads them all

MAX_URL_CHARS = 2048
URL_SCHEMES = ("http", "https")
DEFAULT_TIMEOUT_SECONDS = 30
MAX_TIMEOUT_SECONDS = 60
MAX_HTTP_HEADERS = 32
MAX_HTTP_PARAMS = 32
MAX_HEADER_VALUE_CHARS = 4096
MAX_PARAM_CHARS = 2048
# headers mindbank sets itself; http_config.headers may not replace them
RESERVED_HEADERS = frozenset({"host", "content-length", "content-type", "transfer-encoding", "user-agent"})
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")  # an RFC 9110 token
_HEADER_VALUE = re.compile(r"^[^\x00-\x08\x0a-\x1f\x7f]*$")  # no CR, LF, NUL or other controls (tab allowed)


def check_directive(
    *, name: str, content: str, priority: int, tags: Sequence[str], limits: Limits | None = None
) -> tuple[str, str, tuple[str, ...]]:
    """``(name, content, tags)`` of a directive as stored (texts stripped, tags normalised): name and content not
    blank and at most 256 / 20,000 characters without NUL, ``priority`` a 32-bit integer, tags within the request
    limits (count, length, no control characters)."""
    if not isinstance(name, str) or not isinstance(content, str):
        raise InvalidInputError("name" if not isinstance(name, str) else "content", "must be a string")
    check_text(name, "name", MAX_DIRECTIVE_NAME_CHARS, blank_ok=False)
    check_text(content, "content", MAX_DIRECTIVE_CHARS, blank_ok=False)
    if isinstance(priority, bool) or not isinstance(priority, int) or not INT32_MIN <= priority <= INT32_MAX:
        raise InvalidInputError("priority", f"must be an integer from {INT32_MIN} to {INT32_MAX}")
    check_tags(list(tags), limits, "tags")
    return name.strip(), content.strip(), normalize_tags(tags)


def split_webhook_url(url: str, field: str = "url") -> tuple[SplitResult, str, int]:
    """``(parts, host, port)`` of a webhook target URL: at most 2,048 characters, http or https, a host, no
    userinfo (``user:pass@`` would travel to the receiver in clear text and confuse which host is meant), a valid
    port. Raises :class:`InvalidInputError` naming ``field``; resolving the host is the transport's job."""
    if len(url) > MAX_URL_CHARS:
        raise InvalidInputError(field, f"must be at most {MAX_URL_CHARS} characters")
    if re.search(r"[\x00-\x20\x7f]", url):
        raise InvalidInputError(field, "must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "[::1" and other unparseable hosts, a port out of range
        raise InvalidInputError(field, f"is not a valid URL (host or port): {exc}") from exc
    if parts.scheme not in URL_SCHEMES:
        raise InvalidInputError(field, f"must be an http or https URL, got scheme {parts.scheme or '(none)'!r}")
    if "@" in parts.netloc:
        raise InvalidInputError(field, "must not carry credentials (user:password@); use http_config.headers")
    host = parts.hostname
    if not host:
        raise InvalidInputError(field, "has no host")
    return parts, host, port or (443 if parts.scheme == "https" else 80)


def _string_map(raw: Any, field: str, max_entries: int, max_chars: int) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise InvalidInputError(field, "must be an object of strings")
    if len(raw) > max_entries:
        raise InvalidInputError(field, f"must have at most {max_entries} entries (got {len(raw)})")
    checked = {}
    for key, value in raw.items():
        where = f"{field}.{str(key)[:40]}"
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidInputError(where, "must be a string")
        check_text(key, where, max_chars)
        check_text(value, where, max_chars)
        checked[key] = value
    return checked


def check_http_config(raw: Mapping[str, Any] | None, field: str = "http_config") -> dict[str, Any]:
    """A webhook's ``http_config`` with its defaults: method POST, ``timeout_seconds`` 1..60, at most 32 headers
    (RFC 9110 token names, none that mindbank sets itself, values of at most 4,096 characters without CR, LF or
    other control characters: a header cannot smuggle another) and 32 query parameters of at most 2,048
    characters. Raises :class:`InvalidInputError` naming the entry."""
    if raw is not None and not isinstance(raw, Mapping):
        raise InvalidInputError(field, "must be an object")
    cfg = dict(raw or {})
    unknown = sorted(set(cfg) - {"method", "timeout_seconds", "headers", "params"})
    if unknown:
        raise InvalidInputError(f"{field}.{unknown[0]}", "is not a known field")
    method = cfg.get("method") or "POST"
    if not isinstance(method, str) or method.upper() != "POST":
        raise InvalidInputError(f"{field}.method", "mindbank delivers events as signed POST bodies; use POST")
    timeout = cfg.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT_SECONDS:
        raise InvalidInputError(f"{field}.timeout_seconds", f"must be an integer from 1 to {MAX_TIMEOUT_SECONDS}")
    headers = _string_map(cfg.get("headers") or {}, f"{field}.headers", MAX_HTTP_HEADERS, MAX_HEADER_VALUE_CHARS)
    for name, value in headers.items():
        where = f"{field}.headers.{name[:40]}"
        if not _HEADER_NAME.match(name):
            raise InvalidInputError(where, "must be a header name (letters, digits and !#$%&'*+.^_`|~-)")
        if name.lower() in RESERVED_HEADERS or name.lower().startswith("x-hindsight-"):
            raise InvalidInputError(where, "is set by mindbank and cannot be replaced")
        if not _HEADER_VALUE.match(value):
            raise InvalidInputError(where, "must not contain CR, LF or other control characters")
    params = _string_map(cfg.get("params") or {}, f"{field}.params", MAX_HTTP_PARAMS, MAX_PARAM_CHARS)
    return {"method": "POST", "timeout_seconds": timeout, "headers": headers, "params": params}
