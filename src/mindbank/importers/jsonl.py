"""Load JSON Lines chat transcripts into retain items.

Each non-blank line is an object with ``speaker`` (or ``role``), ``content`` and an optional ISO-8601
``timestamp``. Any other string-valued keys are kept as metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mindbank.domain.records import RetainItem
from mindbank.domain.timeutil import parse_timestamp
from mindbank.importers.locomo import speaker_tag

__all__ = ["load_jsonl_chat", "parse_jsonl_line"]

_KNOWN_KEYS = frozenset({"speaker", "role", "content", "timestamp"})


def parse_jsonl_line(line: str, lineno: int, *, source: str) -> RetainItem:
    """Turn one non-blank JSON Lines chat line (1-based ``lineno``) into a ``RetainItem``.

    content ``"{speaker}: {content}"``, tags ``("speaker:<lowercased>",)``, metadata ``speaker``/``line``
    plus extra string-valued keys, document_id ``"{source}:{lineno}"``, timestamp parsed (``None`` if absent).
    Raises ``ValueError`` naming the line for bad JSON, a non-object line, a missing/empty speaker or
    content, or an unparseable timestamp.
    """
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {lineno}: invalid JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise ValueError(f"line {lineno}: expected a JSON object, got {type(record).__name__}")

    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"line {lineno}: missing or empty 'content'")
    speaker = record.get("speaker")
    if speaker is None:
        speaker = record.get("role")
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError(f"line {lineno}: missing 'speaker' or 'role'")
    speaker = speaker.strip()

    raw_ts = record.get("timestamp")
    if raw_ts is not None and not isinstance(raw_ts, str):
        raise ValueError(f"line {lineno}: 'timestamp' must be an ISO-8601 string")
    try:
        timestamp = parse_timestamp(raw_ts)
    except ValueError as exc:
        raise ValueError(f"line {lineno}: invalid timestamp {raw_ts!r}") from exc

    metadata = {key: value for key, value in record.items() if key not in _KNOWN_KEYS and isinstance(value, str)}
    metadata["speaker"] = speaker
    metadata["line"] = str(lineno)
    return RetainItem(
        content=f"{speaker}: {content}",
        timestamp=timestamp,
        metadata=metadata,
        document_id=f"{source}:{lineno}",
        tags=(speaker_tag(speaker),),
    )


def load_jsonl_chat(path: str | Path, *, source: str | None = None) -> list[RetainItem]:
    """Read a JSON Lines chat file into one ``RetainItem`` per non-blank line, in file order.

    ``source`` prefixes document ids (default: the file stem); line numbers are 1-based physical lines,
    blank lines included in the count. Raises ``ValueError`` (message starts with the file and names the
    line) for any bad line, ``OSError`` if the file cannot be read.
    """
    file = Path(path)
    prefix = source or file.stem
    items: list[RetainItem] = []
    with file.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                items.append(parse_jsonl_line(line, lineno, source=prefix))
            except ValueError as exc:
                raise ValueError(f"{file}: {exc}") from exc
    return items
