"""Curation: the content people fix in a document, and the rules a refresh keeps about it (beyond the reference).

*Fixed content* is every block a person wrote (``origin == "person"``), every pinned block and every block of a
pinned section. The rules (docs/curation.md):

* a refresh never changes, moves or removes fixed content: :func:`guard_operations` refuses the delta operations
  that would (a replacement of a pinned block is reported as the block possibly being out of date), and
  :func:`restore_fixed` puts fixed content back, byte-identical, into any candidate (full or delta);
* the deletion rule still wins: :func:`retract_quotes` removes, from fixed blocks, the sentences quoting a memory
  that is gone (a block left with nothing goes);
* person-written and pinned blocks need not cite memories (the citation rule is for what a refresh writes).

The hand edits themselves (:func:`edit_block`, :func:`add_block`, :func:`remove_block`, :func:`set_pin`) return a new
document and raise :class:`DocumentError` naming the problem. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mindbank.domain.document.markdown import normalize_block_text, normalize_heading
from mindbank.domain.document.model import (
    Block,
    DocumentError,
    Section,
    StructuredDocument,
    cited_memory_ids,
    new_block_id,
    new_section_id,
)
from mindbank.domain.document.operations import (
    AppendBlock,
    InsertBlock,
    Operation,
    RemoveBlock,
    RemoveSection,
    RenameSection,
    ReplaceBlock,
    ReplaceSectionBlocks,
)

PERSON = "person"
_SECTION_EDITS = (AppendBlock, InsertBlock, RenameSection, ReplaceSectionBlocks)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def is_fixed(section: Section, block: Block) -> bool:
    """Whether a refresh must keep ``block`` as it is: written by a person, pinned, or in a pinned section."""
    return section.pinned or block.pinned or block.origin == PERSON


def fixed_block_ids(document: StructuredDocument) -> list[str]:
    """The ids of every fixed block, in document order."""
    return [b.id for s in document.sections for b in s.blocks if is_fixed(s, b)]


def has_fixed(document: StructuredDocument | None) -> bool:
    """Whether ``document`` holds any fixed content (a pinned section counts even when empty)."""
    return document is not None and any(s.pinned or any(is_fixed(s, b) for b in s.blocks) for s in document.sections)


# ------------------------------------------------------------------------------------------------ refresh rules


@dataclass(slots=True)
class Guarded:
    """What :func:`guard_operations` let through and what it refused (each refused operation's dict with a
    ``reason`` and ``fixed: true``), and the warnings it raised (a pinned block that may be out of date)."""

    allowed: list[Operation] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def guard_operations(document: StructuredDocument, operations: Sequence[Operation]) -> Guarded:
    """Split a refresh's delta ``operations`` into those allowed on ``document`` and those refused because they
    would change, move or remove fixed content: a replacement or removal of a fixed block, any operation on a pinned
    section but adding a section after it, and removing a section that holds fixed blocks. A refused replacement of
    a fixed block is the refresh saying the block may be out of date: it becomes a warning."""
    out = Guarded()
    pinned = {s.id for s in document.sections if s.pinned}
    holding = {s.id for s in document.sections if any(is_fixed(s, b) for b in s.blocks)}
    fixed = {b.id: s for s in document.sections for b in s.blocks if is_fixed(s, b)}
    for op in operations:
        reason = None
        if isinstance(op, ReplaceBlock | RemoveBlock) and op.block_id in fixed:
            kind = "pinned" if fixed[op.block_id].pinned or _block(document, op.block_id).pinned else "person-written"
            reason = f"{kind} block {op.block_id} is fixed content; a refresh may not change or remove it"
            if isinstance(op, ReplaceBlock):
                out.warnings.append(f"{kind} block {op.block_id} may be out of date: {op.text.strip()[:300]}")
        elif isinstance(op, _SECTION_EDITS) and op.section_id in pinned:
            reason = f"section {op.section_id} is pinned; a refresh may not change it"
        elif isinstance(op, RemoveSection) and op.section_id in holding | pinned:
            reason = f"section {op.section_id} holds fixed content; a refresh may not remove it"
        if reason is None:
            out.allowed.append(op)
        else:
            out.refused.append({**op.to_dict(), "reason": reason, "fixed": True})
    return out


def _block(document: StructuredDocument, block_id: str) -> Block:
    found = document.find_block(block_id)
    assert found is not None
    return found[1]


def restore_fixed(baseline: StructuredDocument, candidate: StructuredDocument) -> StructuredDocument:
    """``candidate`` with every piece of ``baseline``'s fixed content back as it was: pinned sections whole, fixed
    blocks of other sections in their section at their place (a section the candidate dropped comes back holding only
    its fixed blocks). Candidate blocks that repeat a fixed block's id or text go (the fixed one stands)."""
    fixed = [(s, b) for s in baseline.sections for b in s.blocks if is_fixed(s, b)]
    pinned = [s for s in baseline.sections if s.pinned]
    if not fixed and not pinned:
        return candidate
    ids = {b.id for _, b in fixed}
    texts = {b.text for _, b in fixed}
    pinned_ids = {s.id for s in pinned}
    sections: list[Section] = []
    for section in candidate.sections:
        if section.id in pinned_ids:
            continue
        blocks = [b for b in section.blocks if b.id not in ids and b.text not in texts]
        if blocks or not section.blocks:
            sections.append(replace(section, blocks=blocks))
    for index, base in enumerate(baseline.sections):
        if base.pinned:
            _place_section(sections, baseline, index, base)
            continue
        keep = [(i, b) for i, b in enumerate(base.blocks) if is_fixed(base, b)]
        if not keep:
            continue
        target = next((i for i, s in enumerate(sections) if s.id == base.id), None)
        if target is None:
            _place_section(sections, baseline, index, replace(base, blocks=[]))
            target = next(i for i, s in enumerate(sections) if s.id == base.id)
        blocks = list(sections[target].blocks)
        for position, block in keep:
            before = base.blocks[position - 1].id if position else None
            at = next((i + 1 for i, b in enumerate(blocks) if b.id == before), None)
            blocks.insert(min(position, len(blocks)) if at is None else at, block)
        sections[target] = replace(sections[target], blocks=blocks)
    return StructuredDocument(sections)


def _place_section(sections: list[Section], baseline: StructuredDocument, index: int, section: Section) -> None:
    """Insert ``section`` after the nearest section that preceded it in ``baseline`` and is still in ``sections``
    (else first); the preamble (empty heading) always stays first."""
    placed = {s.id: i for i, s in enumerate(sections)}
    at = 0
    for earlier in reversed(baseline.sections[:index]):
        if earlier.id in placed:
            at = placed[earlier.id] + 1
            break
    if at == 0 and sections and not sections[0].heading and section.heading:
        at = 1
    sections.insert(at, section)


def retract_quotes(
    document: StructuredDocument, missing: Collection[str]
) -> tuple[StructuredDocument, list[dict[str, Any]]]:
    """The deletion rule over fixed content: every sentence of a fixed block that cites a memory in ``missing`` is
    removed (a block left without words goes). Returns the document and one report per block touched:
    ``{block_id, section_id, memory_ids, removed}``."""
    gone = set(missing)
    report: list[dict[str, Any]] = []
    sections: list[Section] = []
    for section in document.sections:
        blocks: list[Block] = []
        for block in section.blocks:
            cited = sorted(set(block.memory_ids) & gone)
            if not cited or not is_fixed(section, block):
                blocks.append(block)
                continue
            text = _without_quotes(block.text, gone)
            report.append({"block_id": block.id, "section_id": section.id, "memory_ids": cited, "removed": not text})
            if text:
                blocks.append(replace(block, text=text))
        if blocks or not section.blocks or section.pinned:
            sections.append(replace(section, blocks=blocks))
    return StructuredDocument(sections), report


def _without_quotes(text: str, gone: set[str]) -> str:
    """``text`` without the sentences (per line) that cite a memory in ``gone``; "" when no word is left."""
    lines = []
    for line in text.split("\n"):
        kept = [s for s in _SENTENCE_END.split(line) if not set(cited_memory_ids(s)) & gone]
        if kept and " ".join(kept).strip():
            lines.append(" ".join(kept))
    out = "\n".join(lines).strip()
    return out if re.search(r"\w", re.sub(r"\[mem:[^\]]*\]", "", out)) else ""


# ------------------------------------------------------------------------------------------------ hand edits


def _person(block: Block, author: str, at: str) -> Block:
    return replace(block, origin=PERSON, author=author, edited_at=at)


def _locate(document: StructuredDocument, block_id: str) -> tuple[int, int]:
    for si, section in enumerate(document.sections):
        for bi, block in enumerate(section.blocks):
            if block.id == block_id:
                return si, bi
    raise DocumentError(f"block_id: unknown block {block_id!r}")


def _with_block(document: StructuredDocument, si: int, blocks: list[Block]) -> StructuredDocument:
    sections = list(document.sections)
    sections[si] = replace(sections[si], blocks=blocks)
    return StructuredDocument(sections)


def edit_block(document: StructuredDocument, block_id: str, text: str, *, author: str, at: str) -> StructuredDocument:
    """Replace block ``block_id``'s text; it keeps its id, place and pin and becomes person-written (``author``,
    ``at``). Raises ``DocumentError`` (unknown block, empty or multi-block text)."""
    si, bi = _locate(document, block_id)
    blocks = list(document.sections[si].blocks)
    blocks[bi] = _person(replace(blocks[bi], text=_block_text(text)), author, at)
    return _with_block(document, si, blocks)


def add_block(
    document: StructuredDocument,
    text: str,
    *,
    author: str,
    at: str,
    section_id: str | None = None,
    after_block_id: str | None = None,
    heading: str | None = None,
) -> tuple[StructuredDocument, str]:
    """Add a person-written block: into section ``section_id`` (after ``after_block_id``, else at its end), or, with
    ``heading`` instead, into a new section at the document's end. Returns the document and the new block's id.
    Raises ``DocumentError`` naming ``section_id``, ``after_block_id``, ``heading`` or ``text``."""
    body = _block_text(text)
    block_id = new_block_id(document, body)
    block = _person(Block(block_id, body), author, at)
    if section_id is None:
        if heading is None or not heading.strip():
            raise DocumentError("section_id: give an existing section_id, or a heading for a new section")
        title = _heading(heading)
        section = Section(new_section_id(document, title), title, 2, [block])
        return StructuredDocument([*document.sections, section]), block_id
    si = next((i for i, s in enumerate(document.sections) if s.id == section_id), None)
    if si is None:
        raise DocumentError(f"section_id: unknown section {section_id!r}")
    blocks = list(document.sections[si].blocks)
    if after_block_id is None:
        blocks.append(block)
    else:
        at_index = next((i for i, b in enumerate(blocks) if b.id == after_block_id), None)
        if at_index is None:
            raise DocumentError(f"after_block_id: no block {after_block_id!r} in section {section_id!r}")
        blocks.insert(at_index + 1, block)
    return _with_block(document, si, blocks), block_id


def remove_block(document: StructuredDocument, block_id: str) -> StructuredDocument:
    """Remove block ``block_id`` (a section left empty goes too, unless pinned). Raises ``DocumentError``."""
    si, bi = _locate(document, block_id)
    section = document.sections[si]
    blocks = [b for i, b in enumerate(section.blocks) if i != bi]
    if blocks or section.pinned:
        return _with_block(document, si, blocks)
    return StructuredDocument([s for i, s in enumerate(document.sections) if i != si])


def set_pin(
    document: StructuredDocument, *, pinned: bool, block_id: str | None = None, section_id: str | None = None
) -> StructuredDocument:
    """Pin or unpin one block (``block_id``) or one whole section (``section_id``). Raises ``DocumentError`` naming
    the unknown id."""
    if block_id is not None:
        si, bi = _locate(document, block_id)
        blocks = list(document.sections[si].blocks)
        blocks[bi] = replace(blocks[bi], pinned=pinned)
        return _with_block(document, si, blocks)
    sections = list(document.sections)
    found = next((i for i, s in enumerate(sections) if s.id == section_id), None)
    if found is None:
        raise DocumentError(f"section_id: unknown section {section_id!r}")
    sections[found] = replace(sections[found], pinned=pinned)
    return StructuredDocument(sections)


def _block_text(text: str) -> str:
    try:
        return normalize_block_text(text)
    except DocumentError as exc:
        raise DocumentError(f"text: {exc}") from exc


def _heading(heading: str) -> str:
    try:
        return normalize_heading(heading)
    except DocumentError as exc:
        raise DocumentError(f"heading: {exc}") from exc
