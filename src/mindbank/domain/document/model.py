"""The document model: ``StructuredDocument``, ``Section``, ``Block``, ids, citations, token counts and the JSON form.

A ``StructuredDocument`` is an ordered list of ``Section``s. A section has a stable ``id``, a ``heading`` (``""`` only
for the *preamble*, the text before the first heading, which may only be the first section), an ATX ``level`` 1..6
and a list of ``Block``s. A ``Block`` is one opaque markdown fragment (paragraph, list, table, fenced code block, ...)
kept exactly as written, plus the memory ids it cites as ``[mem:<id>]``. The markdown codec lives in
:mod:`.markdown`, the delta operations in :mod:`.operations`. Pure: no I/O, stdlib only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

SCHEMA_VERSION = 1
PREAMBLE_ID = "preamble"

_CITATION_RE = re.compile(r"\[mem:([A-Za-z0-9_-]+)\]")
_SLUG_RE = re.compile(r"[^a-z0-9]+")
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


class DocumentError(ValueError):
    """Raised for malformed documents, serialised forms, operations and block texts."""


# --------------------------------------------------------------------------------------------------------
# Small public helpers


def cited_memory_ids(text: str) -> tuple[str, ...]:
    """Return the memory ids cited as ``[mem:<id>]`` in ``text``, first-appearance order, deduplicated."""
    return tuple(dict.fromkeys(_CITATION_RE.findall(text)))


def format_citation(memory_id: str) -> str:
    """Return the inline citation for ``memory_id``: ``"[mem:<memory_id>]"``."""
    return f"[mem:{memory_id}]"


def count_tokens(text: str) -> int:
    """Estimate the token count of ``text`` for ``max_tokens`` budgets.

    Counts word runs and individual punctuation characters; it is an approximation of LLM tokenisers,
    cheap and deterministic, not an exact count for any particular model. Cached by text up to
    ``COUNT_CACHE_MAX_CHARS`` characters: recall counts the text of every result against its budget, the same
    memories query after query.
    """
    return _counted(text) if len(text) <= COUNT_CACHE_MAX_CHARS else len(_TOKEN_RE.findall(text))


COUNT_CACHE_TEXTS = 16_384  # texts whose count is kept
COUNT_CACHE_MAX_CHARS = 1_000  # longer texts are counted each time (the cache holds at most about 16 MB of keys)


@lru_cache(maxsize=COUNT_CACHE_TEXTS)
def _counted(text: str) -> int:
    return len(_TOKEN_RE.findall(text))


def clip_tokens(text: str, budget: int) -> tuple[str, bool]:
    """``text`` cut after its first ``budget`` tokens (as :func:`count_tokens` counts them), and whether it was
    cut."""
    for n, match in enumerate(_TOKEN_RE.finditer(text), start=1):
        if n == budget:
            rest = text[match.end() :]
            return (text, False) if _TOKEN_RE.search(rest) is None else (text[: match.end()], True)
    return (text, False) if budget > 0 or not _TOKEN_RE.search(text) else ("", True)


def slugify(heading: str) -> str:
    """Return the id slug of a heading: lower-case, non-alphanumeric runs to ``-``; ``"section"`` if empty."""
    return _SLUG_RE.sub("-", heading.lower()).strip("-") or "section"


def block_id_for(text: str) -> str:
    """Return the base (not de-duplicated) id of a block: ``"b"`` + the first 8 hex digits of its SHA-1."""
    return "b" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def dedupe_id(base: str, used: set[str] | frozenset[str]) -> str:
    """Return ``base``, or ``base-2``, ``base-3``... the first that is not in ``used`` (ids unique in a document)."""
    if base not in used:
        return base
    n = 2
    while f"{base}-{n}" in used:
        n += 1
    return f"{base}-{n}"


def is_heading_level(level: Any) -> bool:
    """Whether ``level`` is an ATX heading level: an ``int`` (not a ``bool``) in 1..6."""
    return not isinstance(level, bool) and isinstance(level, int) and 1 <= level <= 6


# --------------------------------------------------------------------------------------------------------
# Data model


@dataclass(frozen=True)
class Block:
    """One opaque markdown fragment stored verbatim.

    ``memory_ids`` is always recomputed from ``text`` (see ``cited_memory_ids``); a value passed to the
    constructor is ignored, which keeps ``dataclasses.replace(block, text=...)`` consistent.
    """

    id: str
    text: str
    memory_ids: tuple[str, ...] = ()
    # curation (beyond the reference): who wrote the block ("person" for a hand edit; None: a refresh), the editor's
    # name and ISO time, and whether it is pinned. A person-written or pinned block is fixed content: refreshes keep
    # it byte-identical (``domain/document/curation.py``).
    origin: str | None = None
    author: str | None = None
    edited_at: str | None = None
    pinned: bool = False

    def __post_init__(self) -> None:
        # Frozen dataclass: the derived field has to be set through object.__setattr__.
        object.__setattr__(self, "memory_ids", cited_memory_ids(self.text))

    def marks(self) -> dict[str, Any]:
        """The curation marks that are set, as stored and sent: ``{origin?, author?, edited_at?, pinned?}``."""
        out: dict[str, Any] = {}
        if self.origin is not None:
            out.update(origin=self.origin, author=self.author, edited_at=self.edited_at)
        if self.pinned:
            out["pinned"] = True
        return out


@dataclass(frozen=True)
class Section:
    """A heading (``""`` for the preamble) with its ATX ``level`` (1..6) and ordered blocks.

    Raises ``DocumentError`` when ``level`` is not an int in 1..6.
    """

    id: str
    heading: str
    level: int = 2
    blocks: list[Block] = field(default_factory=list)
    pinned: bool = False  # curation: a pinned section is kept whole by refreshes (heading, blocks, place)

    def __post_init__(self) -> None:
        if not is_heading_level(self.level):
            raise DocumentError(f"section {self.id!r}: level must be an integer between 1 and 6")
        if not isinstance(self.blocks, list):
            object.__setattr__(self, "blocks", list(self.blocks))

    def block(self, block_id: str) -> Block | None:
        """Return the block of this section with ``block_id``, or ``None``."""
        return next((b for b in self.blocks if b.id == block_id), None)


@dataclass(frozen=True)
class StructuredDocument:
    """An ordered list of sections; its markdown form is ``markdown.render_markdown(document)``."""

    sections: list[Section] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.sections, list):
            object.__setattr__(self, "sections", list(self.sections))

    def section(self, section_id: str) -> Section | None:
        """Return the section with ``section_id``, or ``None``."""
        return next((s for s in self.sections if s.id == section_id), None)

    def find_block(self, block_id: str) -> tuple[Section, Block] | None:
        """Return ``(section, block)`` for ``block_id``, or ``None`` if no section holds it."""
        for section in self.sections:
            for block in section.blocks:
                if block.id == block_id:
                    return section, block
        return None

    def section_ids(self) -> list[str]:
        """Return the section ids in document order."""
        return [s.id for s in self.sections]

    def block_ids(self) -> list[str]:
        """Return every block id in document order."""
        return [b.id for s in self.sections for b in s.blocks]

    def memory_ids(self) -> tuple[str, ...]:
        """Return every cited memory id in document order, deduplicated."""
        return tuple(dict.fromkeys(m for s in self.sections for b in s.blocks for m in b.memory_ids))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form ``{"version": 1, "sections": [{id, heading, level, blocks: [...]}]}``."""
        return {
            "version": SCHEMA_VERSION,
            "sections": [
                {
                    "id": s.id,
                    "heading": s.heading,
                    "level": s.level,
                    "blocks": [
                        {"id": b.id, "text": b.text, "memory_ids": list(b.memory_ids), **b.marks()} for b in s.blocks
                    ],
                    **({"pinned": True} if s.pinned else {}),
                }
                for s in self.sections
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StructuredDocument:
        """Build a document from ``to_dict()`` output.

        ``memory_ids`` entries are optional and, when present, must be lists of strings; the stored value
        is re-derived from the text. Raises ``DocumentError`` naming the offending path for a wrong version,
        missing/unexpected keys, wrong types, a level outside 1..6, duplicate section or block ids, or an
        empty heading anywhere but the first section.
        """
        if not isinstance(data, Mapping):
            raise DocumentError("document must be an object")
        _check_keys(data, required={"version", "sections"}, optional=set(), where="document")
        if data["version"] != SCHEMA_VERSION:
            raise DocumentError(f"document: unsupported version {data['version']!r} (expected {SCHEMA_VERSION})")
        raw_sections = data["sections"]
        if not isinstance(raw_sections, list):
            raise DocumentError("document.sections must be a list")
        sections: list[Section] = []
        section_ids: set[str] = set()
        block_ids: set[str] = set()
        for i, raw in enumerate(raw_sections):
            where = f"sections[{i}]"
            sid = _entry_id(raw, where, "section", required={"id", "heading", "level", "blocks"}, optional={"pinned"},
                            seen=section_ids)  # fmt: skip
            heading = raw["heading"]
            if not isinstance(heading, str):
                raise DocumentError(f"{where}.heading must be a string")
            if "\n" in heading or "\r" in heading:
                raise DocumentError(f"{where}.heading must be a single line")
            if not heading.strip() and i > 0:
                raise DocumentError(f"{where}.heading: only the first section may have an empty heading")
            level = raw["level"]
            if not is_heading_level(level):
                raise DocumentError(f"{where}.level must be an integer between 1 and 6")
            raw_blocks = raw["blocks"]
            if not isinstance(raw_blocks, list):
                raise DocumentError(f"{where}.blocks must be a list")
            blocks: list[Block] = []
            for j, raw_block in enumerate(raw_blocks):
                bwhere = f"{where}.blocks[{j}]"
                bid = _entry_id(raw_block, bwhere, "block", required={"id", "text"}, optional=_BLOCK_OPTIONAL,
                                seen=block_ids)  # fmt: skip
                text = raw_block["text"]
                if not isinstance(text, str):
                    raise DocumentError(f"{bwhere}.text must be a string")
                mids = raw_block.get("memory_ids", [])
                if not isinstance(mids, list) or not all(isinstance(m, str) for m in mids):
                    raise DocumentError(f"{bwhere}.memory_ids must be a list of strings")
                blocks.append(Block(bid, text, **_block_marks(raw_block, bwhere)))
            sections.append(Section(sid, heading, level, blocks, pinned=_flag(raw, "pinned", where)))
        return cls(sections)


def _entry_id(
    raw: Any, where: str, kind: str, *, required: set[str], optional: frozenset[str] | set[str] = frozenset(),
    seen: set[str],
) -> str:  # fmt: skip
    """The id of one serialised section or block (``kind``), checked to be an object with exactly the expected keys
    and an id not in ``seen`` (then added to it). Raises ``DocumentError`` naming ``where``."""
    if not isinstance(raw, Mapping):
        raise DocumentError(f"{where} must be an object")
    _check_keys(raw, required=required, optional=set(optional), where=where)
    entry_id = _require_id(raw["id"], f"{where}.id")
    if entry_id in seen:
        raise DocumentError(f"{where}.id: duplicate {kind} id {entry_id!r}")
    seen.add(entry_id)
    return entry_id


_BLOCK_OPTIONAL = frozenset({"memory_ids", "origin", "author", "edited_at", "pinned"})


def _flag(raw: Mapping[str, Any], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise DocumentError(f"{where}.{key} must be a boolean")
    return value


def _block_marks(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The curation marks of one serialised block (absent: none). Raises ``DocumentError`` naming the field."""
    marks: dict[str, Any] = {"pinned": _flag(raw, "pinned", where)}
    for key in ("origin", "author", "edited_at"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise DocumentError(f"{where}.{key} must be a string or null")
        marks[key] = value
    return marks


def _check_keys(obj: Mapping[str, Any], *, required: set[str], optional: set[str], where: str) -> None:
    for key in sorted(required):
        if key not in obj:
            raise DocumentError(f"{where}: missing field '{key}'")
    extra = sorted(str(k) for k in obj if k not in required and k not in optional)
    if extra:
        raise DocumentError(f"{where}: unexpected field '{extra[0]}'")


def _require_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise DocumentError(f"{where} must be a non-empty string")
    return value


def new_section_id(doc: StructuredDocument, heading: str) -> str:
    """Return ``slugify(heading)``, suffixed ``-2``, ``-3``... until it is unused by ``doc``'s sections."""
    return dedupe_id(slugify(heading), {s.id for s in doc.sections})


def new_block_id(doc: StructuredDocument, text: str) -> str:
    """Return ``block_id_for(text)``, suffixed ``-2``, ``-3``... until it is unused by ``doc``'s blocks."""
    return dedupe_id(block_id_for(text), set(doc.block_ids()))
