"""The structured document of a mental model: ordered sections of opaque, verbatim markdown blocks.

A mental model's markdown ``content`` is always ``render_markdown(document)``; the structure is the source
of truth and the markdown is derived from it. The format is deliberately small:

* A ``StructuredDocument`` is an ordered list of ``Section``s. A section has a stable ``id``, a ``heading``
  (``""`` only for the *preamble*, the text before the first heading, which may only be the first
  section), an ATX ``level`` 1..6 and a list of ``Block``s.
* A ``Block`` is one opaque markdown fragment (paragraph, list, table, fenced code block, ...) kept exactly
  as written, plus the memory ids it cites as ``[mem:<id>]``.
* Rendering joins heading lines and block texts with one blank line and ends with a single newline.
* Parsing splits on ATX headings and blank lines outside fenced code, so ``render -> parse -> render`` is
  byte-identical and ``parse -> render`` reaches a fixed point after one pass.

Edits arrive as small delta operations (``append_block``, ``replace_block``, ...) that address sections and
blocks by id. ``apply_operations`` applies them to a copy, skipping (with a reason) the ones whose
references or texts are invalid, so one bad operation from a model never discards the good ones.

Everything here is pure: no I/O, stdlib only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeAlias

__all__ = [
    "PREAMBLE_ID",
    "SCHEMA_VERSION",
    "AddSection",
    "AppendBlock",
    "ApplyResult",
    "Block",
    "DocumentError",
    "InsertBlock",
    "Operation",
    "RemoveBlock",
    "RemoveSection",
    "RenameSection",
    "ReplaceBlock",
    "ReplaceSectionBlocks",
    "Section",
    "StructuredDocument",
    "apply_operations",
    "block_id_for",
    "cited_memory_ids",
    "count_tokens",
    "format_citation",
    "new_block_id",
    "new_section_id",
    "normalize_block_text",
    "normalize_heading",
    "parse_markdown",
    "parse_operation",
    "render_markdown",
    "slugify",
]

SCHEMA_VERSION = 1
PREAMBLE_ID = "preamble"

_EMPTY_TEXT = "block text is empty"
_NOT_SINGLE_BLOCK = "block text must be a single markdown block"
_EMPTY_HEADING = "heading is empty"

# Only "\n" separates lines; "\r\n" and a lone "\r" are line endings too (as in CommonMark), so both are
# folded first. Splitting on "\n" alone (not str.splitlines) keeps exotic separators such as U+2028 as text.
_NEWLINE_RE = re.compile(r"\r\n?")
_HEADING_RE = re.compile(r"(#{1,6}) +(.*)")
# A closing "#" run only counts when it stands alone (after whitespace or as the whole content), so
# headings such as "C#" keep their last character.
_CLOSING_HASHES_RE = re.compile(r"(?:^|\s+)#+\s*$")
_FENCE_OPEN_RE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
# \s* (not [ \t]*) matches what str.rstrip removes, so stripping a block's last line never turns a
# non-closing line into a closing one between two parses.
_FENCE_CLOSE_RE = re.compile(r" {0,3}(`{3,}|~{3,})\s*")
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
    cheap and deterministic, not an exact count for any particular model.
    """
    return len(_TOKEN_RE.findall(text))


def slugify(heading: str) -> str:
    """Return the id slug of a heading: lower-case, non-alphanumeric runs to ``-``; ``"section"`` if empty."""
    return _SLUG_RE.sub("-", heading.lower()).strip("-") or "section"


def block_id_for(text: str) -> str:
    """Return the base (not de-duplicated) id of a block: ``"b"`` + the first 8 hex digits of its SHA-1."""
    return "b" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def _dedupe(base: str, used: set[str] | frozenset[str]) -> str:
    if base not in used:
        return base
    n = 2
    while f"{base}-{n}" in used:
        n += 1
    return f"{base}-{n}"


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

    def __post_init__(self) -> None:
        # Frozen dataclass: the derived field has to be set through object.__setattr__.
        object.__setattr__(self, "memory_ids", cited_memory_ids(self.text))


@dataclass(frozen=True)
class Section:
    """A heading (``""`` for the preamble) with its ATX ``level`` (1..6) and ordered blocks.

    Raises ``DocumentError`` when ``level`` is not an int in 1..6.
    """

    id: str
    heading: str
    level: int = 2
    blocks: list[Block] = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, int) or not 1 <= self.level <= 6:
            raise DocumentError(f"section {self.id!r}: level must be an integer between 1 and 6")
        if not isinstance(self.blocks, list):
            object.__setattr__(self, "blocks", list(self.blocks))

    def block(self, block_id: str) -> Block | None:
        """Return the block of this section with ``block_id``, or ``None``."""
        return next((b for b in self.blocks if b.id == block_id), None)


@dataclass(frozen=True)
class StructuredDocument:
    """An ordered list of sections; its markdown form is ``render()``."""

    sections: list[Section] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.sections, list):
            object.__setattr__(self, "sections", list(self.sections))

    def render(self) -> str:
        """Return the canonical markdown of this document (see ``render_markdown``)."""
        return render_markdown(self)

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
                    "blocks": [{"id": b.id, "text": b.text, "memory_ids": list(b.memory_ids)} for b in s.blocks],
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
            if not isinstance(raw, Mapping):
                raise DocumentError(f"{where} must be an object")
            _check_keys(raw, required={"id", "heading", "level", "blocks"}, optional=set(), where=where)
            sid = _require_id(raw["id"], f"{where}.id")
            if sid in section_ids:
                raise DocumentError(f"{where}.id: duplicate section id {sid!r}")
            section_ids.add(sid)
            heading = raw["heading"]
            if not isinstance(heading, str):
                raise DocumentError(f"{where}.heading must be a string")
            if "\n" in heading or "\r" in heading:
                raise DocumentError(f"{where}.heading must be a single line")
            if not heading.strip() and i > 0:
                raise DocumentError(f"{where}.heading: only the first section may have an empty heading")
            level = raw["level"]
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 6:
                raise DocumentError(f"{where}.level must be an integer between 1 and 6")
            raw_blocks = raw["blocks"]
            if not isinstance(raw_blocks, list):
                raise DocumentError(f"{where}.blocks must be a list")
            blocks: list[Block] = []
            for j, raw_block in enumerate(raw_blocks):
                bwhere = f"{where}.blocks[{j}]"
                if not isinstance(raw_block, Mapping):
                    raise DocumentError(f"{bwhere} must be an object")
                _check_keys(raw_block, required={"id", "text"}, optional={"memory_ids"}, where=bwhere)
                bid = _require_id(raw_block["id"], f"{bwhere}.id")
                if bid in block_ids:
                    raise DocumentError(f"{bwhere}.id: duplicate block id {bid!r}")
                block_ids.add(bid)
                text = raw_block["text"]
                if not isinstance(text, str):
                    raise DocumentError(f"{bwhere}.text must be a string")
                mids = raw_block.get("memory_ids", [])
                if not isinstance(mids, list) or not all(isinstance(m, str) for m in mids):
                    raise DocumentError(f"{bwhere}.memory_ids must be a list of strings")
                blocks.append(Block(bid, text))
            sections.append(Section(sid, heading, level, blocks))
        return cls(sections)


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
    return _dedupe(slugify(heading), {s.id for s in doc.sections})


def new_block_id(doc: StructuredDocument, text: str) -> str:
    """Return ``block_id_for(text)``, suffixed ``-2``, ``-3``... until it is unused by ``doc``'s blocks."""
    return _dedupe(block_id_for(text), set(doc.block_ids()))


# --------------------------------------------------------------------------------------------------------
# Markdown


def render_markdown(doc: StructuredDocument) -> str:
    """Return the canonical markdown of ``doc``.

    Heading lines (``"#" * level + " " + heading``, none for an empty heading) and block texts are joined
    by one blank line; a non-empty result ends with exactly one newline, an empty document renders ``""``.
    """
    pieces: list[str] = []
    for section in doc.sections:
        if section.heading:
            pieces.append("#" * section.level + " " + section.heading)
        pieces.extend(block.text for block in section.blocks)
    return "\n\n".join(pieces) + "\n" if pieces else ""


def _clean_heading(raw: str) -> str:
    # Loop to a fixed point: "a # #" would otherwise become "a #", which the next parse shortens again.
    heading = raw.strip()
    while True:
        cleaned = _CLOSING_HASHES_RE.sub("", heading).strip()
        if cleaned == heading:
            return heading
        heading = cleaned


def _heading_of(line: str) -> tuple[int, str] | None:
    match = _HEADING_RE.fullmatch(line)
    if match is None:
        return None
    heading = _clean_heading(match.group(2))
    # "# #" has no text: keeping it as block text avoids an empty-heading section after the first one.
    return (len(match.group(1)), heading) if heading else None


def _fence_opened_by(line: str) -> tuple[str, int] | None:
    match = _FENCE_OPEN_RE.fullmatch(line)
    if match is None:
        return None
    marker, info = match.groups()
    if marker[0] == "`" and "`" in info:
        return None  # an inline code span such as ```x```, not a fence
    return marker[0], len(marker)


def _fence_closed_by(line: str, fence: tuple[str, int]) -> bool:
    match = _FENCE_CLOSE_RE.fullmatch(line)
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1]


def _is_blank(line: str) -> bool:
    return not line.strip()


def _scan(text: str) -> list[tuple[str, int, list[str]]]:
    """Split markdown into ``(heading, level, block_texts)``; entry 0 is the (maybe empty) preamble."""
    sections: list[tuple[str, int, list[str]]] = [("", 1, [])]
    current: list[str] = []
    fence: tuple[str, int] | None = None

    def flush() -> None:
        if current:
            block = "\n".join(current).rstrip()
            if fence is not None:
                # An unclosed fence would swallow everything after it on the next parse; closing it
                # explicitly renders the same code block and keeps every block self-contained.
                block += "\n" + fence[0] * fence[1]
            sections[-1][2].append(block)
            current.clear()

    for line in _NEWLINE_RE.sub("\n", text).split("\n"):
        if fence is not None:
            current.append(line)
            if _fence_closed_by(line, fence):
                fence = None
            continue
        if _is_blank(line):
            flush()
            continue
        heading = _heading_of(line)
        if heading is not None:
            flush()
            sections.append((heading[1], heading[0], []))
            continue
        current.append(line)
        fence = _fence_opened_by(line)
    flush()
    return sections


def parse_markdown(text: str) -> StructuredDocument:
    """Parse markdown into a ``StructuredDocument`` with freshly assigned ids.

    Sections start at ATX headings (``#`` to ``######`` + space + text) outside fenced code; text before
    the first heading becomes a section with heading ``""`` and id ``"preamble"`` (omitted when there is
    none). Blocks are separated by blank lines outside fenced code; a fence that is never closed is closed
    at the end of the text. Line endings are normalised to ``"\\n"`` and each block loses trailing
    whitespace. Never raises.
    """
    scanned = _scan(text)
    if not scanned[0][2]:
        scanned = scanned[1:]
    section_ids: set[str] = set()
    block_ids: set[str] = set()
    sections: list[Section] = []
    for i, (heading, level, texts) in enumerate(scanned):
        sid = PREAMBLE_ID if i == 0 and not heading else _dedupe(slugify(heading), section_ids)
        section_ids.add(sid)
        blocks: list[Block] = []
        for block_text in texts:
            bid = _dedupe(block_id_for(block_text), block_ids)
            block_ids.add(bid)
            blocks.append(Block(bid, block_text))
        sections.append(Section(sid, heading, level, blocks))
    return StructuredDocument(sections)


def normalize_block_text(text: str) -> str:
    """Return ``text`` as the one block a parse would store for it.

    Normalises line endings, drops leading/trailing blank lines and trailing whitespace, and closes an
    unclosed code fence. Raises ``DocumentError("block text is empty")`` for blank text and
    ``DocumentError("block text must be a single markdown block")`` when the text holds a heading line or
    several blank-line-separated blocks outside code fences (either would break render/parse round trips).
    """
    if not text.strip():
        raise DocumentError(_EMPTY_TEXT)
    scanned = _scan(text)
    if len(scanned) != 1 or len(scanned[0][2]) != 1:
        raise DocumentError(_NOT_SINGLE_BLOCK)
    return scanned[0][2][0]


def normalize_heading(heading: str) -> str:
    """Return ``heading`` as one line that parses back to itself (whitespace collapsed, closing ``#``s cut).

    Raises ``DocumentError("heading is empty")`` when nothing remains.
    """
    cleaned = _clean_heading(" ".join(heading.split()))
    if not cleaned:
        raise DocumentError(_EMPTY_HEADING)
    return cleaned


# --------------------------------------------------------------------------------------------------------
# Delta operations


class _OperationMixin:
    op: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form: ``{"op": ..., <every field>}`` (tuples as lists)."""
        out: dict[str, Any] = {"op": self.op}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class AppendBlock(_OperationMixin):
    """Add a block with ``text`` at the end of section ``section_id``."""

    op: ClassVar[str] = "append_block"
    section_id: str
    text: str


@dataclass(frozen=True)
class InsertBlock(_OperationMixin):
    """Insert a block after ``after_block_id`` in ``section_id`` (``None``: as the first block)."""

    op: ClassVar[str] = "insert_block"
    section_id: str
    after_block_id: str | None
    text: str


@dataclass(frozen=True)
class ReplaceBlock(_OperationMixin):
    """Replace the text of block ``block_id`` in ``section_id``; the block keeps its id and position."""

    op: ClassVar[str] = "replace_block"
    section_id: str
    block_id: str
    text: str


@dataclass(frozen=True)
class RemoveBlock(_OperationMixin):
    """Remove block ``block_id`` from ``section_id``."""

    op: ClassVar[str] = "remove_block"
    section_id: str
    block_id: str


@dataclass(frozen=True)
class AddSection(_OperationMixin):
    """Add a section after ``after_section_id`` (``None``: at the end).

    Its id is ``new_id`` or the heading's slug, de-duplicated. ``blocks`` may be given as a list and is
    stored as a tuple. Raises ``DocumentError`` when ``level`` is not an int in 1..6.
    """

    op: ClassVar[str] = "add_section"
    heading: str
    level: int = 2
    blocks: tuple[str, ...] = ()
    after_section_id: str | None = None
    new_id: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, int) or not 1 <= self.level <= 6:
            raise DocumentError("add_section: field 'level' must be an integer between 1 and 6")
        object.__setattr__(self, "blocks", tuple(self.blocks))


@dataclass(frozen=True)
class RemoveSection(_OperationMixin):
    """Remove section ``section_id`` and all of its blocks."""

    op: ClassVar[str] = "remove_section"
    section_id: str


@dataclass(frozen=True)
class ReplaceSectionBlocks(_OperationMixin):
    """Replace all blocks of ``section_id``; a text equal to an existing block's keeps that block's id."""

    op: ClassVar[str] = "replace_section_blocks"
    section_id: str
    blocks: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))


@dataclass(frozen=True)
class RenameSection(_OperationMixin):
    """Change the heading of ``section_id``; the id stays the same."""

    op: ClassVar[str] = "rename_section"
    section_id: str
    new_heading: str


Operation: TypeAlias = (
    AppendBlock
    | InsertBlock
    | ReplaceBlock
    | RemoveBlock
    | AddSection
    | RemoveSection
    | ReplaceSectionBlocks
    | RenameSection
)

_OPERATION_TYPES: tuple[type, ...] = (
    AppendBlock,
    InsertBlock,
    ReplaceBlock,
    RemoveBlock,
    AddSection,
    RemoveSection,
    ReplaceSectionBlocks,
    RenameSection,
)

# op name -> (class, required field kinds, optional field kinds); kinds are checked by _check_field.
_OP_SCHEMAS: dict[str, tuple[type, dict[str, str], dict[str, str]]] = {
    "append_block": (AppendBlock, {"section_id": "str", "text": "str"}, {}),
    "insert_block": (InsertBlock, {"section_id": "str", "after_block_id": "str?", "text": "str"}, {}),
    "replace_block": (ReplaceBlock, {"section_id": "str", "block_id": "str", "text": "str"}, {}),
    "remove_block": (RemoveBlock, {"section_id": "str", "block_id": "str"}, {}),
    "add_section": (
        AddSection,
        {"heading": "str"},
        {"level": "level", "blocks": "str_list", "after_section_id": "str?", "new_id": "str?"},
    ),
    "remove_section": (RemoveSection, {"section_id": "str"}, {}),
    "replace_section_blocks": (ReplaceSectionBlocks, {"section_id": "str", "blocks": "str_list"}, {}),
    "rename_section": (RenameSection, {"section_id": "str", "new_heading": "str"}, {}),
}


def _check_field(op: str, name: str, kind: str, value: Any) -> Any:
    if kind == "str":
        if not isinstance(value, str):
            raise DocumentError(f"{op}: field '{name}' must be a string")
    elif kind == "str?":
        if value is not None and not isinstance(value, str):
            raise DocumentError(f"{op}: field '{name}' must be a string or null")
    elif kind == "str_list":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise DocumentError(f"{op}: field '{name}' must be a list of strings")
        return tuple(value)
    elif kind == "level" and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6):
        raise DocumentError(f"{op}: field '{name}' must be an integer between 1 and 6")
    return value


def parse_operation(data: Mapping[str, Any]) -> Operation:
    """Build an operation from its dict form (``{"op": "append_block", "section_id": ..., ...}``).

    Raises ``DocumentError`` naming the problem for a non-object, a missing or unknown ``op``, a missing or
    unexpected field, a value of the wrong type, or a ``level`` outside 1..6.
    """
    if not isinstance(data, Mapping):
        raise DocumentError("operation must be an object")
    if "op" not in data:
        raise DocumentError("operation: missing field 'op'")
    op = data["op"]
    if not isinstance(op, str) or op not in _OP_SCHEMAS:
        raise DocumentError(f"unknown op: {op!r}")
    cls, required, optional = _OP_SCHEMAS[op]
    for name in data:
        if name != "op" and name not in required and name not in optional:
            raise DocumentError(f"{op}: unexpected field '{name}'")
    kwargs: dict[str, Any] = {}
    for name, kind in required.items():
        if name not in data:
            raise DocumentError(f"{op}: missing field '{name}'")
        kwargs[name] = _check_field(op, name, kind, data[name])
    for name, kind in optional.items():
        if name in data:
            kwargs[name] = _check_field(op, name, kind, data[name])
    result: Operation = cls(**kwargs)
    return result


@dataclass(frozen=True)
class ApplyResult:
    """Outcome of ``apply_operations``.

    ``applied`` holds the dict of each applied operation; ``skipped`` the dict of each skipped one plus a
    ``"reason"`` key. Both keep the input order.
    """

    document: StructuredDocument
    applied: list[dict[str, Any]]
    skipped: list[dict[str, Any]]

    @property
    def changed(self) -> bool:
        """Whether at least one operation was applied."""
        return bool(self.applied)


def _section_index(sections: list[Section], section_id: str, field_name: str = "section_id") -> int:
    for i, section in enumerate(sections):
        if section.id == section_id:
            return i
    raise DocumentError(f"unknown {field_name}: {section_id}")


def _block_index(sections: list[Section], section_index: int, block_id: str) -> int:
    target = sections[section_index]
    for i, block in enumerate(target.blocks):
        if block.id == block_id:
            return i
    for section in sections:
        if section.block(block_id) is not None:
            raise DocumentError(f"block_id {block_id} belongs to section {section.id}, not {target.id}")
    raise DocumentError(f"unknown block_id: {block_id}")


def _used_block_ids(sections: list[Section]) -> set[str]:
    return {b.id for s in sections for b in s.blocks}


def _mint_block(text: str, used: set[str]) -> Block:
    block = Block(_dedupe(block_id_for(text), used), text)
    used.add(block.id)
    return block


def _with_blocks(section: Section, blocks: list[Block]) -> Section:
    return Section(section.id, section.heading, section.level, blocks)


def _apply_one(sections: list[Section], op: Operation) -> None:
    """Apply ``op`` to the working list in place (never to a Section object); raise DocumentError to skip.

    Every check runs before the list is touched, so a skipped operation leaves no partial change.
    """
    if isinstance(op, AppendBlock | InsertBlock | ReplaceBlock | RemoveBlock):
        si = _section_index(sections, op.section_id)
        section = sections[si]
        blocks = list(section.blocks)
        if isinstance(op, AppendBlock):
            text = normalize_block_text(op.text)
            blocks.append(_mint_block(text, _used_block_ids(sections)))
        elif isinstance(op, InsertBlock):
            position = 0 if op.after_block_id is None else _block_index(sections, si, op.after_block_id) + 1
            text = normalize_block_text(op.text)
            blocks.insert(position, _mint_block(text, _used_block_ids(sections)))
        elif isinstance(op, ReplaceBlock):
            bi = _block_index(sections, si, op.block_id)
            text = normalize_block_text(op.text)
            blocks[bi] = Block(blocks[bi].id, text)
        else:
            del blocks[_block_index(sections, si, op.block_id)]
        sections[si] = _with_blocks(section, blocks)
    elif isinstance(op, AddSection):
        heading = normalize_heading(op.heading)
        position = len(sections)
        if op.after_section_id is not None:
            position = _section_index(sections, op.after_section_id, "after_section_id") + 1
        texts = [normalize_block_text(t) for t in op.blocks]
        used = _used_block_ids(sections)
        base = op.new_id.strip() if op.new_id and op.new_id.strip() else slugify(heading)
        sid = _dedupe(base, {s.id for s in sections})
        sections.insert(position, Section(sid, heading, op.level, [_mint_block(t, used) for t in texts]))
    elif isinstance(op, RemoveSection):
        del sections[_section_index(sections, op.section_id)]
    elif isinstance(op, ReplaceSectionBlocks):
        si = _section_index(sections, op.section_id)
        section = sections[si]
        texts = [normalize_block_text(t) for t in op.blocks]
        # Blocks whose text is unchanged keep their id (and object), so citations of them stay stable.
        reusable = list(section.blocks)
        used = _used_block_ids(sections[:si] + sections[si + 1 :])
        new_blocks: list[Block] = []
        for text in texts:
            match = next((b for b in reusable if b.text == text and b.id not in used), None)
            if match is not None:
                reusable.remove(match)
                used.add(match.id)
                new_blocks.append(match)
            else:
                new_blocks.append(_mint_block(text, used | {b.id for b in reusable}))
                used.add(new_blocks[-1].id)
        sections[si] = _with_blocks(section, new_blocks)
    elif isinstance(op, RenameSection):
        si = _section_index(sections, op.section_id)
        heading = normalize_heading(op.new_heading)
        section = sections[si]
        sections[si] = Section(section.id, heading, section.level, section.blocks)
    else:  # pragma: no cover - guarded by the isinstance check in apply_operations
        raise TypeError(f"not an operation: {op!r}")


def apply_operations(doc: StructuredDocument, ops: Iterable[Operation]) -> ApplyResult:
    """Apply ``ops`` in order to a copy of ``doc``; ``doc`` itself is never modified.

    Sections and blocks an operation does not touch are carried over as the same objects. An operation
    whose references or texts are invalid is skipped with a reason (``unknown section_id: X``,
    ``unknown block_id: X``, ``block_id X belongs to section Y, not Z``, ``unknown after_section_id: X``,
    ``block text is empty``, ``block text must be a single markdown block``, ``heading is empty``) and the
    rest still apply. Raises ``TypeError`` for an element that is not an operation object (use
    ``parse_operation`` for dicts).
    """
    sections = list(doc.sections)
    applied: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for op in ops:
        if not isinstance(op, _OPERATION_TYPES):
            raise TypeError(f"not an operation: {op!r}")
        try:
            _apply_one(sections, op)
        except DocumentError as exc:
            skipped.append({**op.to_dict(), "reason": str(exc)})
        else:
            applied.append(op.to_dict())
    return ApplyResult(StructuredDocument(sections), applied, skipped)
