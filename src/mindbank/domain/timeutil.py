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


def to_iso(value: datetime | None) -> str | None:
    """Wire and storage format: ISO-8601, always with microseconds and ``+00:00``.

    The fixed width makes stored strings sort in time order, which the SQLite store relies on.
    """
    if value is None:
        return None
    if value.tzinfo is not UTC:  # stored and parsed times already are UTC: converting again was a recall hot spot
        value = value.astimezone(UTC)
    return value.isoformat(timespec="microseconds")
