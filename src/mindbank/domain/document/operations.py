"""The eight delta operations on a document, their dict form (``parse_operation``) and ``apply_operations``.

Edits arrive as small operations (``append_block``, ``replace_block``, ...) that address sections and blocks by id.
``apply_operations`` applies them to a copy, skipping (with a reason) the ones whose references or texts are invalid,
so one bad operation from a model never discards the good ones. A new operation is a dataclass here, an entry in
``_OP_SCHEMAS`` and a branch of ``_apply_one``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeAlias

from mindbank.domain.document.markdown import normalize_block_text, normalize_heading
from mindbank.domain.document.model import (
    Block,
    DocumentError,
    Section,
    StructuredDocument,
    block_id_for,
    dedupe_id,
    is_heading_level,
    slugify,
)


class _OperationMixin:
    op: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form: ``{"op": ..., <every field>}`` (tuples as lists)."""
        out: dict[str, Any] = {"op": self.op}
        for f in fields(self):  # type: ignore[arg-type]  # the mixin itself is no dataclass; every operation is one
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
        if not is_heading_level(self.level):
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
    elif kind == "level" and not is_heading_level(value):
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
    block = Block(dedupe_id(block_id_for(text), used), text)
    used.add(block.id)
    return block


def _with_blocks(section: Section, blocks: list[Block]) -> Section:
    return replace(section, blocks=blocks)  # keeps the section's curation mark


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
        sid = dedupe_id(base, {s.id for s in sections})
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
        sections[si] = replace(section, heading=heading)
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
