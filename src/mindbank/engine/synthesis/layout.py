"""Stable layout: a full refresh keeps the current document's sections where the same facts are still quoted.

A full refresh recomposes the whole briefing, and clustering a scope that gained one fact can move every section
(``topics.py`` orders sections by weight and titles them by their facts). A reader comparing two versions should
see what changed, not a reshuffle, so the composer is handed the current document's layout
(:func:`layout_of`: each section's heading and the memories its blocks cite) and :func:`follow_layout` puts the
new briefing's blocks back where they were:

* a block quoting a fact that a section of the current document quoted (any fact it cites) goes back under that
  section's heading; those sections keep their order;
* the answer section (the first headed one of an answering briefing) keeps the facts it quoted, in their order,
  wherever the composer put them this time; a fact new to the document that the composer puts in the answer
  enters it before the first kept fact less relevant than it; a fact a topic section quoted stays there;
* a block new to the document stays in the section the composer gave it: under the old heading when the composer
  titled it the same, else in a section of its own at the end (new sections after the old ones);
* blocks within a section stay in date order; a section left with no block goes.

Facts still quoted keep their block text, so their block ids (a hash of the text) stay; a refresh that adds one
relevant fact changes one block, plus the heading it lands under when that is new.
"""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.domain.document import StructuredDocument
from mindbank.engine.synthesis.blocks import Unit

Layout = tuple[tuple[str, tuple[str, ...]], ...]  # (heading, memory ids its blocks cite) per headed section


def layout_of(document: StructuredDocument | None) -> Layout:
    """The headed sections of ``document`` in order, each with the memory ids its blocks cite (empty for None)."""
    if document is None:
        return ()
    return tuple(
        (section.heading, tuple(i for block in section.blocks for i in block.memory_ids))
        for section in document.sections
        if section.heading
    )


def _by_date(units: Sequence[Unit]) -> list[Unit]:
    return sorted(units, key=lambda u: (u.current.when is None, u.current.when, u.current.id))


def _placed_in(unit: Unit, home: dict[str, str]) -> str | None:
    return next((home[m.id] for m in unit.members if m.id in home), None)


def follow_layout(
    sections: Sequence[tuple[str, list[Unit]]], layout: Layout, *, answering: bool
) -> list[tuple[str, list[Unit]]]:
    """``sections`` (heading, blocks) of a new briefing rearranged along ``layout`` (module docstring).
    ``answering``: the first of ``sections`` and of ``layout`` are answer sections."""
    if not layout or not sections:
        return list(sections)
    answer_ids = set(layout[0][1]) if answering else set()
    topics = layout[1:] if answering else layout
    home: dict[str, str] = {}
    for heading, ids in topics:
        for memory_id in ids:
            home.setdefault(memory_id, heading)
    pinned: dict[str, list[Unit]] = {heading: [] for heading, _ in topics}
    new: dict[str, list[Unit]] = {}
    kept_answer: list[Unit] = []
    new_answer: list[Unit] = []
    for position, (heading, units) in enumerate(sections):
        in_answer = answering and position == 0
        for unit in units:
            old = _placed_in(unit, home)
            if answering and any(m.id in answer_ids for m in unit.members):
                kept_answer.append(unit)
            elif old is not None:
                pinned[old].append(unit)
            elif in_answer:
                new_answer.append(unit)
            elif heading in pinned:
                pinned[heading].append(unit)
            else:
                new.setdefault(heading, []).append(unit)
    out: list[tuple[str, list[Unit]]] = []
    if answering:
        order = {m_id: i for i, m_id in enumerate(layout[0][1])}
        answer = sorted(kept_answer, key=lambda u: min(order.get(m.id, len(order)) for m in u.members))
        for unit in new_answer:  # a new fact enters before the first kept one it is more relevant than
            at = next((i for i, u in enumerate(answer) if u.current.relevance < unit.current.relevance), len(answer))
            answer.insert(at, unit)
        if answer:
            out.append((sections[0][0], answer))
    out += [(heading, _by_date(units)) for heading, units in pinned.items() if units]
    return [*out, *((heading, _by_date(units)) for heading, units in new.items())]
