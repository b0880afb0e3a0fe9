"""Importers: turn conversation files (LoCoMo JSON, JSON Lines chat) into ``RetainItem`` lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from mindbank.domain.records import RetainItem
from mindbank.importers.jsonl import load_jsonl_chat
from mindbank.importers.locomo import (
    LocomoConversation,
    LocomoQuestion,
    LocomoSession,
    LocomoTurn,
    is_locomo_shaped,
    load_locomo,
    locomo_items,
    split_halves,
)

__all__ = [
    "ImportFormat",
    "LocomoConversation",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoTurn",
    "detect_format",
    "load_items",
    "load_jsonl_chat",
    "load_locomo",
    "locomo_items",
    "sample_conversation_path",
    "split_halves",
]

ImportFormat = Literal["locomo", "jsonl"]

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".jsonlines"})


def sample_conversation_path() -> Path:
    """Path of the bundled original sample conversation (LoCoMo shape, ``sample_id`` ``"sample"``)."""
    return Path(__file__).resolve().parent.parent / "data" / "sample_conversation.json"


def _first_line_is_object(text: str) -> bool:
    for line in text.splitlines():
        if line.strip():
            try:
                return isinstance(json.loads(line), dict)
            except json.JSONDecodeError:
                return False
    return False


def detect_format(path: str | Path) -> ImportFormat:
    """Decide whether ``path`` is a LoCoMo conversation or a JSON Lines chat.

    ``.jsonl``/``.ndjson`` files are JSON Lines; otherwise a file whose whole text parses to a
    LoCoMo-shaped object is ``"locomo"`` and one whose first non-blank line is a JSON object is ``"jsonl"``.
    Raises ``ValueError`` when neither fits, ``OSError`` if unreadable.
    """
    file = Path(path)
    if file.suffix.lower() in _JSONL_SUFFIXES:
        return "jsonl"
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if is_locomo_shaped(data):
        return "locomo"
    if _first_line_is_object(text):
        return "jsonl"
    raise ValueError(f"{file}: neither a LoCoMo conversation nor a JSON Lines chat")


def load_items(path: str | Path) -> list[RetainItem]:
    """Load any supported file as retain items (all LoCoMo sessions, or every JSON Lines line).

    Raises ``ValueError`` for unrecognised or malformed files (see ``detect_format``, ``load_locomo``,
    ``load_jsonl_chat``).
    """
    if detect_format(path) == "locomo":
        return locomo_items(load_locomo(path))
    return load_jsonl_chat(path)
