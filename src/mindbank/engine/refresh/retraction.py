"""Retraction: what a refresh does about cited memories that are gone from the model's scope.

Beyond the reference (every block keeps the memories it rests on, so their loss is visible): a cited memory that
was deleted, or re-tagged or re-typed out of the scope the model reads, makes the model stale, and the next
refresh — delta or full — removes the blocks resting on it. The dry run reports the same set (``retraction`` in
its result).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mindbank.domain.document import Operation, RemoveBlock, RemoveSection, StructuredDocument
from mindbank.domain.records import MemoryUnit


def retracted_blocks(document: StructuredDocument, missing: set[str]) -> list[tuple[str, str, bool]]:
    """``(section id, block id, partly)`` for every block citing a gone memory; ``partly``: it cites others too."""
    return [
        (s.id, b.id, not set(b.memory_ids) <= missing)
        for s in document.sections
        for b in s.blocks
        if set(b.memory_ids) & missing
    ]


def retraction_operations(document: StructuredDocument, missing: set[str]) -> list[Operation]:
    """Remove every block citing a gone memory, and a section left with no block.

    A block that also rests on memories still in scope goes too: its prose may say what the gone memory said, and
    keeping it would keep an unsupported claim (a full refresh rebuilds it from what remains). Extractive blocks
    quote one memory each, so for them this is exactly "every block whose cited memories are all gone"."""
    doomed = {block_id for _, block_id, _ in retracted_blocks(document, missing)}
    operations: list[Operation] = []
    for section in document.sections:
        gone = [b.id for b in section.blocks if b.id in doomed]
        if gone and len(gone) == len(section.blocks):
            operations.append(RemoveSection(section_id=section.id))
        else:
            operations.extend(RemoveBlock(section_id=section.id, block_id=b) for b in gone)
    return operations


def retraction_report(
    document: StructuredDocument, missing: set[str], present: Sequence[MemoryUnit], quoted: Mapping[str, str]
) -> tuple[dict[str, Any], str | None]:
    """The refresh's ``retraction`` (reference shape plus ``block_ids``) and a warning, or None.

    ``fact_ids`` sorted, ``fact_texts`` in the same order: the text ``based_on`` quoted (``quoted``: id -> text),
    else the memory's own text when it still exists (moved out of scope), else "". The warning says when a block
    that goes also cited memories still in scope."""
    texts = {**{m.id: m.text for m in present if m.id in missing}, **quoted}
    blocks = retracted_blocks(document, missing)
    partly = sum(1 for _, _, p in blocks if p)
    warning = None
    if partly:
        warning = (
            f"{partly} block(s) citing a memory that is gone also cited others and were removed all the same "
            "(a full refresh rebuilds them from what remains)."
        )
    fact_ids = sorted(missing)
    report = {
        "fact_ids": fact_ids,
        "fact_texts": [texts.get(i, "") for i in fact_ids],
        "block_ids": [block_id for _, block_id, _ in blocks],
        "applied": False,
        "deferred_reason": None,
    }
    return report, warning
