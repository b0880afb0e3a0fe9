"""The delta editor's decisions and its eviction: the blocks a delta refresh keeps, edits and adds (:class:`Edit`), and
dropping the least worthy of them, old or new, until the document fits ``max_tokens`` and
:data:`compose.MAX_BLOCKS` (:func:`evict`).

Worth is salience + relevance + mentions (``blocks.Unit.worth``), never simply age; on a narrow question the least
relevant go first. A new section left with one block gives it to "Other notes" (its heading rested on two facts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mindbank.domain.document import Block, StructuredDocument, count_tokens, render_markdown
from mindbank.engine.synthesis.blocks import Unit, render_unit
from mindbank.engine.synthesis.compose import BLOCK_SEPARATOR, MAX_BLOCKS, OTHER_HEADING
from mindbank.engine.synthesis.selection import Candidate

EVICTED = "over max_tokens: less worthy than every block kept"


def evicted_reason(limit: str, by_relevance: bool) -> str:
    """Why an old block's facts left the document: ``limit`` is what it was over ("max_tokens" or "N blocks");
    on a narrow question (``by_relevance``) the least relevant went first, else the least worthy."""
    measure = "relevant to the question" if by_relevance else "worthy"
    return f"evicted: over {limit}, less {measure} than every block kept"


@dataclass(slots=True)
class Placed:
    """An existing block as the editor sees it: where it is, its text now (after replacements), the candidate
    of the fact it quotes (None when that fact is not quotable or not at hand), its worth and whether it must
    stay (requoted: the document has to say what the memory says now)."""

    section_id: str
    block: Block
    text: str
    current: Candidate | None
    worth: float
    keep: bool = False
    mentions: int = 1


@dataclass(slots=True)
class Edit:
    """Everything the editor decided, before it becomes operations."""

    replaced: dict[str, str] = field(default_factory=dict)  # block id -> new text
    replaced_by: dict[str, list[str]] = field(default_factory=dict)  # block id -> the new memory ids it now cites
    appended: list[tuple[str, Unit]] = field(default_factory=list)  # (section id, block)
    added: list[tuple[str, list[Unit]]] = field(default_factory=list)  # (heading, blocks)
    removed: set[str] = field(default_factory=set)  # block ids
    used: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # memory id -> why a new fact is not quoted
    # memory id -> why a fact an evicted old block cited is no longer quoted (only those no kept block cites)
    evicted: dict[str, str] = field(default_factory=dict)


def evict(
    document: StructuredDocument, placed: list[Placed], edit: Edit, max_tokens: int, *, by_relevance: bool = False
) -> None:
    """Drop the least worthy blocks, old or new, until the document fits ``max_tokens`` and ``MAX_BLOCKS``.
    ``by_relevance`` (a narrow question): the least relevant go first, worth breaking ties — a document answering
    one question keeps what answers it, however much more a fact about something else says. Each memory an
    evicted old block cited that no block left in the document cites goes to ``edit.evicted`` with the reason
    (:func:`evicted_reason`)."""

    def key(worth: float, current: Candidate | None) -> tuple[float, float]:
        return ((current.relevance if current is not None else 0.0) if by_relevance else 0.0, worth)

    sizes = {s.id: len(s.blocks) for s in document.sections}
    total = count_tokens(render_markdown(document))
    for p in placed:
        total += count_tokens(p.text) - count_tokens(p.block.text)
    items: list[tuple[tuple[float, float], str, Placed | tuple[str, Unit]]] = []
    for p in placed:
        if not p.keep:
            items.append((key(p.worth, p.current), "old", p))
    for section_id, unit in edit.appended:
        total += count_tokens(render_unit(unit)) + BLOCK_SEPARATOR
        sizes[section_id] = sizes.get(section_id, 0) + 1
        items.append((key(unit.worth, unit.current), "appended", (section_id, unit)))
    for heading, units in edit.added:
        total += count_tokens(f"## {heading}") + BLOCK_SEPARATOR
        for unit in units:
            total += count_tokens(render_unit(unit)) + BLOCK_SEPARATOR
            items.append((key(unit.worth, unit.current), "added", (heading, unit)))
    blocks = len(placed) + len(edit.appended) + sum(len(u) for _, u in edit.added)
    added_sizes = [(h, list(us)) for h, us in edit.added]
    items.sort(key=lambda item: item[0])
    for _, kind, item in items:
        if total <= max_tokens and blocks <= MAX_BLOCKS:
            break
        if kind == "old":
            assert isinstance(item, Placed)
            p = item
            limit = "max_tokens" if total > max_tokens else f"{MAX_BLOCKS} blocks"
            for memory_id in p.block.memory_ids:
                edit.evicted.setdefault(memory_id, evicted_reason(limit, by_relevance))
            total -= count_tokens(p.text) + BLOCK_SEPARATOR
            sizes[p.section_id] -= 1
            if sizes[p.section_id] == 0:
                section = document.section(p.section_id)
                total -= count_tokens(f"## {section.heading}") + BLOCK_SEPARATOR if section else 0
            edit.removed.add(p.block.id)
            edit.replaced.pop(p.block.id, None)
        elif kind == "appended":
            assert not isinstance(item, Placed)
            section_id, unit = item
            edit.reasons.update((m.id, EVICTED) for m in unit.members)
            total -= count_tokens(render_unit(unit)) + BLOCK_SEPARATOR
            edit.appended = [a for a in edit.appended if a[1] is not unit]
        else:
            assert not isinstance(item, Placed)
            heading, unit = item
            edit.reasons.update((m.id, EVICTED) for m in unit.members)
            total -= count_tokens(render_unit(unit)) + BLOCK_SEPARATOR
            edit.added = [(h, [u for u in us if u is not unit]) for h, us in edit.added]
            if not any(us for h, us in edit.added if h == heading):
                total -= count_tokens(f"## {heading}") + BLOCK_SEPARATOR
        blocks -= 1
    edit.added = [(h, us) for h, us in edit.added if us]
    _unhead(document, edit, {h: len(us) for h, us in added_sizes}, max_tokens - total)
    # what the document now cites that it did not: requotes, replaced blocks' new facts, new blocks
    used = [i for p in placed if p.keep and p.block.memory_ids for i in p.block.memory_ids[:1]]
    used += [i for block_id, ids in edit.replaced_by.items() if block_id not in edit.removed for i in ids]
    used += [m.id for _, unit in edit.appended for m in unit.members]
    used += [m.id for _, units in edit.added for unit in units for m in unit.members]
    edit.used = list(dict.fromkeys(used))
    # a fact an evicted block cited is not lost while another block (kept, replaced or new) still cites it
    still = {i for p in placed if p.block.id not in edit.removed for i in p.block.memory_ids}
    still.update(i for block_id, ids in edit.replaced_by.items() if block_id not in edit.removed for i in ids)
    still.update(used)
    edit.evicted = {i: r for i, r in edit.evicted.items() if i not in still}


def _unhead(document: StructuredDocument, edit: Edit, sizes: dict[str, int], room: int) -> None:
    """A new section the eviction left with one of its blocks loses its heading (it rested on two facts): the
    block goes to "Other notes" — the document's, when it has one and keeps it, else a new one when that heading
    fits in ``room`` (tokens left under max_tokens) beside those it replaces."""
    lone = [(h, us) for h, us in edit.added if h != OTHER_HEADING and len(us) == 1 and sizes.get(h, 0) > 1]
    if not lone:
        return
    other = next((s for s in document.sections if s.heading == OTHER_HEADING), None)
    kept = other is not None and (
        not all(b.id in edit.removed for b in other.blocks) or any(sid == other.id for sid, _ in edit.appended)
    )
    if other is not None and kept:
        edit.appended.extend((other.id, us[0]) for _, us in lone)
    else:
        freed = sum(count_tokens(f"## {h}") + BLOCK_SEPARATOR for h, _ in lone)
        if count_tokens(f"## {OTHER_HEADING}") + BLOCK_SEPARATOR > freed + room:
            return
        units = [us[0] for _, us in lone]
        existing = next((us for h, us in edit.added if h == OTHER_HEADING), None)
        if existing is not None:
            existing.extend(units)
        else:
            edit.added.append((OTHER_HEADING, units))
    names = {h for h, _ in lone}
    edit.added = [(h, us) for h, us in edit.added if h not in names]
