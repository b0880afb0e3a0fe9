"""When a retain says again what the bank already holds: repeats and unchanged documents (saying a fact again is
evidence it matters, not a second fact). Pure rules; the stores apply them inside their write transactions.

**Repeats.** A fact of a retained item *without* a ``document_id`` carries a repeat key: the SHA-256 of its
statement, normalised (Unicode NFKC, case-folded, every run of whitespace one space, trimmed; punctuation kept, so
"Yes." and "Yes!" differ), with its fact type, its speaker (metadata ``speaker``, else ``role``, normalised alike)
and its tags. A new fact whose key a stored fact of the bank already has is not written: the stored fact gets one
more mention (``mention_count``) and ``last_mentioned_at`` moves to the newer mention time. Context and other
metadata are not part of the key (the first mention's stay). Facts of named documents carry no key: a document
owns its facts, and re-retaining it is the unchanged-document rule below.

**Unchanged documents.** Re-retaining (``update_mode`` replace) a stored ``document_id`` with the same content
(byte for byte: ``documents.content_hash``) is a *restatement*: with the same tags, metadata, context and time (an
item without a timestamp keeps the stored time) it changes nothing; otherwise those fields are updated in place on
the document and its facts (same ids).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from mindbank.domain.records import RetainItem
from mindbank.domain.tags import normalize_tags

_VERSION = "r1"  # part of every key: a change of the rule must not match keys written under the old one


def normalise(text: str) -> str:
    """``text`` as repeats compare it: NFKC, case-folded, whitespace runs collapsed to one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def speaker_of(metadata: Mapping[str, Any]) -> str:
    """Who said a fact, as retain's fact-type rule reads it: metadata ``speaker``, else ``role`` ('' if neither)."""
    return str(metadata.get("speaker") or metadata.get("role") or "")


def repeat_key(text: str, fact_type: str, tags: Sequence[str], metadata: Mapping[str, Any]) -> str:
    """The repeat key of a fact (64 hex characters): equal for two facts exactly when they are the same statement
    by the same speaker, of the same type, with the same tags (see the module docstring)."""
    parts = [_VERSION, fact_type, normalise(speaker_of(metadata)), "\x1e".join(normalize_tags(tags)), normalise(text)]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def content_hash(text: str) -> str:
    """A document's ``content_hash``: SHA-256 of its stored text (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredDocumentState:
    """What a restatement is compared with: the stored document's fields and its facts' ``occurred_start`` times."""

    tags: tuple[str, ...]
    metadata: dict[str, Any]
    context: str | None
    times: tuple[datetime | None, ...]


Restatement = Literal["unchanged", "update"]


def restatement(stored: StoredDocumentState, item: RetainItem) -> Restatement:
    """Whether re-retaining ``item`` over a stored document with the same content changes nothing (``unchanged``)
    or updates tags, metadata, context or time in place (``update``)."""
    same_time = item.timestamp is None or all(t == item.timestamp for t in stored.times)
    same = (
        normalize_tags(item.tags) == normalize_tags(stored.tags)
        and dict(item.metadata) == dict(stored.metadata)
        and item.context == stored.context
        and same_time
    )
    return "unchanged" if same else "update"


def restate_eligible(items: Sequence[RetainItem]) -> list[int]:
    """Indexes of the items a retain may treat as restatements when their stored content is unchanged: replace
    mode, with a ``document_id`` that no other item of the same retain names (items that write one document twice
    are written in order, as always)."""
    counts: dict[str, int] = {}
    for item in items:
        if item.document_id is not None:
            counts[item.document_id] = counts.get(item.document_id, 0) + 1
    return [
        i
        for i, item in enumerate(items)
        if item.document_id is not None and item.update_mode == "replace" and counts[item.document_id] == 1
    ]
