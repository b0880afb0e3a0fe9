"""UTC time helpers shared by every layer: parse ISO-8601 input, format wire timestamps."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Current wall-clock time, timezone-aware UTC."""
    return datetime.now(UTC)


def parse_timestamp(value: str | datetime | None) -> datetime | None:
    """Parse an ISO-8601 string (``Z`` allowed) into aware UTC; naive inputs are taken as UTC.

    Raises ``ValueError`` for unparseable strings.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    else:
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


# to_iso's memo: a recall writes the times of a hundred memories per query, mostly the same memories query after
# query, and CPython formats a datetime through C printf (about 1.4 µs a time, a tenth of a recall's server time);
# a hit is one dict lookup. Bounded: emptied when full (a few MB at most).
ISO_MEMO_SIZE = 1 << 15
_ISO_MEMO: dict[datetime, str] = {}


def to_iso(value: datetime | None) -> str | None:
    """Wire and storage format: ISO-8601, always with microseconds and ``+00:00``.

    The fixed width makes stored strings sort in time order, which the SQLite store relies on. Aware times are
    memoised (equal instants in any zone share their UTC text); a naive one is converted each time, as local time.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    text = _ISO_MEMO.get(value)
    if text is None:
        utc = value if value.tzinfo is UTC else value.astimezone(UTC)
        text = utc.isoformat(timespec="microseconds")
        if len(_ISO_MEMO) >= ISO_MEMO_SIZE:
            _ISO_MEMO.clear()
        _ISO_MEMO[value] = text
    return text
