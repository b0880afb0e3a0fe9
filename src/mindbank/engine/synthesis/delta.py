"""The extractive delta editor: fold the facts written since the last refresh into a briefing with typed operations.

A delta refresh never rewrites what it does not have to:

* a cited memory edited since is requoted in its block (``replace_block``), nothing else of the block changes;
* each new quotable fact (``salience.quote``; grouped into blocks like a full refresh's, ``compose.Pool``) is
  compared with the facts the blocks quote:
  - a newer value of a quoted fact (``updates.updates``) rewrites that block in place: the new fact as current,
    the old one as "earlier" (all citations kept);
  - the same statement again (``updates.repeats``) only updates that block's count, last date and citations;
  (a rewritten block is re-minted where it stands — ``insert_block`` after it, ``remove_block`` of it — so it gets
  the id its new text parses to, and the structured document stays its markdown's parse);
  - a variation of a quoted fact (``selection.VARIATION_COSINE``) adds nothing and is left out;
  - otherwise it is a new block, appended to the section whose centroid is nearest (cosine ≥
    :data:`SECTION_JOIN`), or, when none is near, grouped with the other leftovers into new titled sections
    (``topics.py``) placed at the end;
* over ``max_tokens`` or :data:`compose.MAX_BLOCKS` blocks, the least worthy blocks — old or new — go (worth =
  salience + relevance + mentions: ``blocks.Unit.worth``), never simply the oldest; a new fact less worthy than
  everything already there is not added at all, and a section left without blocks goes with its last block.

Sections and blocks no operation names stay byte-identical. Without the scope read (a caller with no vectors) the
editor still appends and evicts, placing new blocks by the words they share with each section, but cannot
recognise repeats or updates of cited facts (it does not know them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    Block,
    InsertBlock,
    Operation,
    RemoveBlock,
    RemoveSection,
    ReplaceBlock,
    StructuredDocument,
    count_tokens,
    render_markdown,
    slugify,
)
from mindbank.domain.records import ScoredMemory
from mindbank.domain.text import strip_speaker
from mindbank.engine.synthesis.answer import DELTA_FLOOR, asks_speech, is_broad, linked, scope_names
from mindbank.engine.synthesis.attribution import about_others
from mindbank.engine.synthesis.blocks import MENTION_WEIGHT, Unit, add_repeats, day, read_block, render_unit
from mindbank.engine.synthesis.compose import (
    BLOCK_SEPARATOR,
    MAX_BLOCKS,
    NOT_QUOTABLE,
    NOT_TAKEN,
    OTHER_HEADING,
    Pool,
    group_sections,
    select_units,
)
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.salience import Quote, salience
from mindbank.engine.synthesis.selection import (
    VARIATION_COSINE,
    Candidate,
    candidates,
    lexical_vectors,
    mmr_order,
)
from mindbank.engine.synthesis.topics import speaker_names
from mindbank.engine.synthesis.updates import RELATED_COSINE, repeats, updates

EVICTED = "over max_tokens: less worthy than every block kept"
SECTION_JOIN = 0.45  # a new block joins the existing section whose centroid is at least this close (cosine)


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


def _fallback_quote(text: str) -> Quote:
    """A requoted memory that is no longer quotable is still quoted whole: the document must not keep the old
    words."""
    return Quote(strip_speaker(" ".join(text.split())), 0.0, 0)


def requote_edited(
    document: StructuredDocument, cited: Sequence[ScoredMemory], read: ScopeRead | None = None
) -> tuple[list[Operation], list[str]]:
    """``replace_block`` for every block whose quoted fact (its first citation) is one of ``cited`` (memories the
    document cites that were written since the watermark) when the block no longer matches the memory's current
    text or time; ``(operations, memory ids requoted)``. The block's repeat note and other citations stay."""
    operations: list[Operation] = []
    used: list[str] = []
    read = read or ScopeRead()
    found = {c.id: c for c in candidates(cited, read.vectors, previous=read.previous)}
    for hit in cited:
        unplaced = np.zeros(1, dtype=np.float32)  # no stored vector: a zero vector is near nothing
        cand = found.get(hit.memory.id) or Candidate(hit, _fallback_quote(hit.memory.text), unplaced, 0.0)
        for section in document.sections:
            for block in section.blocks:
                if not block.memory_ids or block.memory_ids[0] != hit.memory.id:
                    continue
                info = read_block(block.text)
                fresh = render_unit(Unit(cand)).split("\n")[0]
                fresh_head = read_block(fresh).head
                if info.head == fresh_head:
                    continue
                text = block.text.replace(info.head, fresh_head, 1) if info.cited else fresh
                operations.append(ReplaceBlock(section_id=section.id, block_id=block.id, text=text))
                if hit.memory.id not in used:
                    used.append(hit.memory.id)
    return operations, used


def _earlier_line(old: Placed) -> str:
    """The old block's first line turned into an "earlier" line, citations and note kept."""
    info = read_block(old.text)
    head = info.head.removeprefix("- ")
    if old.current is not None:
        when = f" ({day(old.current.when)})" if old.current.when else ""
        head = f"earlier{when}: {old.current.quote.text}"
    note = f" (mentioned {info.count} times, last {info.last})" if info.count > 1 and info.last else ""
    cites = " ".join(f"[mem:{i}]" for i in info.cited)
    nested = "\n".join("  " + ln if not ln.startswith("  ") else ln for ln in info.rest.split("\n") if ln)
    return f"  - {head}{note} {cites}".rstrip() + ("\n" + nested if nested else "")


def _placed(document: StructuredDocument, known: dict[str, Candidate]) -> list[Placed]:
    out = []
    for section in document.sections:
        for block in section.blocks:
            if not block.memory_ids:
                continue
            current = known.get(block.memory_ids[0])
            mentions = read_block(block.text).count
            worth = (current.worth if current else salience(block.text)) + MENTION_WEIGHT * np.log(mentions)
            out.append(Placed(section.id, block, block.text, current, float(worth), mentions=mentions))
    return out


def _match(unit: Unit, placed: Sequence[Placed]) -> tuple[str, Placed] | None:
    """Whether ``unit`` updates or repeats the fact an existing block quotes: ``("update" | "repeat", block)``."""
    best: tuple[float, str, Placed] | None = None
    for old in placed:
        if old.current is None or old.current.vector.shape != unit.current.vector.shape:
            continue
        cosine = float(unit.current.vector @ old.current.vector)
        if cosine < RELATED_COSINE:
            continue
        kind = "update" if updates(unit.current, old.current, cosine) else None
        if kind is None and repeats(unit.current, old.current, cosine):
            kind = "repeat"
        if kind and (best is None or cosine > best[0]):
            best = (cosine, kind, old)
    return (best[1], best[2]) if best else None


def _variation(unit: Unit, placed: Sequence[Placed]) -> Placed | None:
    """The block whose quoted fact ``unit`` is a variation of (``selection.VARIATION_COSINE``), if any."""
    vector = unit.current.vector
    return next(
        (
            p
            for p in placed
            if p.current is not None
            and p.current.vector.shape == vector.shape
            and float(p.current.vector @ vector) >= VARIATION_COSINE
        ),
        None,
    )


def _section_centroids(placed: Sequence[Placed]) -> dict[str, np.ndarray]:
    sums: dict[str, np.ndarray] = {}
    for p in placed:
        if p.current is not None:
            sums[p.section_id] = sums.get(p.section_id, 0) + p.current.vector
    return {k: v / max(float(np.linalg.norm(v)), 1e-12) for k, v in sums.items()}


def plan_delta_operations(
    document: StructuredDocument,
    facts: Sequence[ScoredMemory],
    *,
    max_tokens: int,
    read: ScopeRead | None = None,
    source_query: str = "",
    left_out: dict[str, str] | None = None,
) -> tuple[list[Operation], list[str]]:
    """Delta operations that fold new ``facts`` into ``document`` (module docstring); ``(operations, memory ids
    used)``. ``read``: the vectors of the new and cited facts, the cited memories and every fact's recall score
    (``ScopeRead``); with scores and a narrow ``source_query`` a new fact needs the delta relevance floor
    (``answer.DELTA_FLOOR``, after the shared-subject lift from the facts the document cites). ``left_out`` (filled
    when given): memory id -> why a new fact is not quoted."""
    read = read or ScopeRead()
    cited = set(document.memory_ids())
    operations, used = requote_edited(document, [h for h in facts if h.memory.id in cited], read)
    lexical = not read.vectors  # no stored vectors at all: every comparison runs on bags of words
    old_hits = [ScoredMemory(m, 0.0) for m in read.cited]
    new_hits = [h for h in facts if h.memory.id not in cited]
    every = candidates(
        [*old_hits, *new_hits], None if lexical else read.vectors, read.query_vector, read.relevance, read.previous,
        asks_speech(source_query),
    )  # fmt: skip
    known = {c.id: c for c in every if c.id in cited}
    fresh = [c for c in every if c.id not in cited]
    # a question about one speaker is not answered by what another says about their own life (attribution.py)
    fresh, reasons = about_others(fresh, source_query, list(known.values())) if source_query else (fresh, {})
    speakers = speaker_names([c.hit.memory.text for c in every])
    named = scope_names(every, speakers)
    narrow = bool(read.relevance) and bool(source_query) and not is_broad(source_query, named)
    if narrow:
        fresh = linked(fresh, list(known.values()), speakers)
        for c in fresh:
            if c.relevance < DELTA_FLOOR:
                reasons[c.id] = f"below the relevance floor {DELTA_FLOOR:.2f} (relevance {c.relevance:.2f})"
        fresh = [c for c in fresh if c.id not in reasons]
    placed = _placed(document, known)
    requoted = {op.block_id: op.text for op in operations if isinstance(op, ReplaceBlock)}
    for p in placed:
        if p.block.id in requoted:
            p.text, p.keep = requoted[p.block.id], True
    edit = Edit()
    if fresh:
        _fold(document, placed, fresh, edit, read, lexical)
    _evict(document, placed, edit, max_tokens, by_relevance=narrow)
    requoted_only = [i for i in used if i not in edit.used]
    if left_out is not None:
        quoted = {*used, *edit.used}
        quotable = {c.id for c in every}
        for hit in new_hits:
            i = hit.memory.id
            if i not in quoted:
                left_out[i] = reasons.get(i) or edit.reasons.get(i) or (NOT_TAKEN if i in quotable else NOT_QUOTABLE)
    return _operations(document, placed, edit, operations), [*requoted_only, *edit.used]


def _fold(
    document: StructuredDocument,
    placed: list[Placed],
    fresh: list[Candidate],
    edit: Edit,
    read: ScopeRead,
    lexical: bool,
) -> None:
    """Turn the new facts into replacements (updates, repeats) and new blocks."""
    pool = Pool(fresh)
    units = select_units(pool, mmr_order(pool.cands, exclude=pool.used), budget=10**9, limit=len(fresh))
    leftovers: list[Unit] = []
    centroids = _section_centroids(placed)
    if lexical:
        texts: dict[str, list[str]] = {}
        for p in placed:
            texts.setdefault(p.section_id, []).append(p.text)
        vectors = lexical_vectors([" ".join(t) for t in texts.values()])
        centroids = dict(zip(texts, vectors, strict=True))
    for unit in units:
        found = _match(unit, placed)
        if found is not None:
            kind, old = found
            if kind == "repeat":
                old.text = add_repeats(old.text, [unit.current, *unit.repeats], unit.last)
                old.mentions += unit.mentions
                old.worth += MENTION_WEIGHT * np.log(old.mentions / max(1, old.mentions - unit.mentions))
            else:
                first = render_unit(Unit(unit.current, repeats=unit.repeats)).split("\n")
                earlier = render_unit(Unit(unit.current, earlier=unit.earlier)).split("\n")[1:]
                old.text = "\n".join([first[0], *earlier, _earlier_line(old)])
                old.current, old.worth = unit.current, unit.worth
            edit.replaced[old.block.id] = old.text
            edit.replaced_by.setdefault(old.block.id, []).extend(m.id for m in unit.members)
            continue
        near_block = _variation(unit, placed)
        if near_block is not None:
            # nearly what a block already quotes, but not the same statement: adds nothing
            for m in unit.members:
                edit.reasons[m.id] = f"a variation of block {near_block.block.id}"
            continue
        near = [(float(v @ unit.current.vector), sid) for sid, v in centroids.items()
                if v.shape == unit.current.vector.shape]  # fmt: skip
        score, section_id = max(near, default=(-1.0, ""))
        if score >= SECTION_JOIN:
            edit.appended.append((section_id, unit))
        else:
            leftovers.append(unit)
    if not leftovers:
        return
    existing = {s.heading.lower(): s.id for s in document.sections if s.heading}
    banned = speaker_names([c.hit.memory.text for c in fresh] + [p.text for p in placed])
    for section in group_sections(leftovers, read, banned):
        target = existing.get(section.heading.lower())
        if section.heading == OTHER_HEADING and target is None and centroids:
            # nothing new to title: each block joins its nearest section
            for unit in section.units:
                near = [(float(v @ unit.current.vector), sid) for sid, v in centroids.items()
                        if v.shape == unit.current.vector.shape]  # fmt: skip
                if near:
                    edit.appended.append((max(near)[1], unit))
        elif target is not None:
            edit.appended.extend((target, unit) for unit in section.units)
        else:
            edit.added.append((section.heading, section.units))


def _evict(
    document: StructuredDocument, placed: list[Placed], edit: Edit, max_tokens: int, *, by_relevance: bool = False
) -> None:
    """Drop the least worthy blocks, old or new, until the document fits ``max_tokens`` and ``MAX_BLOCKS``.
    ``by_relevance`` (a narrow question): the least relevant go first, worth breaking ties — a document answering
    one question keeps what answers it, however much more a fact about something else says."""

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
    items.sort(key=lambda item: item[0])
    for _, kind, item in items:
        if total <= max_tokens and blocks <= MAX_BLOCKS:
            break
        if kind == "old":
            assert isinstance(item, Placed)
            p = item
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
    # what the document now cites that it did not: requotes, replaced blocks' new facts, new blocks
    used = [i for p in placed if p.keep and p.block.memory_ids for i in p.block.memory_ids[:1]]
    used += [i for block_id, ids in edit.replaced_by.items() if block_id not in edit.removed for i in ids]
    used += [m.id for _, unit in edit.appended for m in unit.members]
    used += [m.id for _, units in edit.added for unit in units for m in unit.members]
    edit.used = list(dict.fromkeys(used))


def _operations(
    document: StructuredDocument, placed: Sequence[Placed], edit: Edit, requotes: list[Operation]
) -> list[Operation]:
    """The edit as operations: requotes and replacements, removals (a section emptied goes whole), appends, new
    sections at the end."""
    operations: list[Operation] = []
    by_block = {p.block.id: p for p in placed}
    removed_sections = {s.id for s in document.sections if s.blocks and all(b.id in edit.removed for b in s.blocks)} - {
        sid for sid, _ in edit.appended
    }
    for op in requotes:
        if isinstance(op, ReplaceBlock) and op.block_id in edit.replaced:
            continue  # replaced again below, with the requote in it
        if not (isinstance(op, ReplaceBlock) and op.block_id in edit.removed):
            operations.append(op)
    for block_id, text in edit.replaced.items():
        if block_id not in edit.removed:
            # re-minted in place (inserted right after, then the old one removed), not replaced: the block gets the
            # id its new text has, so the structured document stays exactly what its markdown parses to
            section_id = by_block[block_id].section_id
            operations.append(InsertBlock(section_id=section_id, after_block_id=block_id, text=text))
            operations.append(RemoveBlock(section_id=section_id, block_id=block_id))
    for section in document.sections:
        if section.id in removed_sections:
            operations.append(RemoveSection(section_id=section.id))
            continue
        operations.extend(
            RemoveBlock(section_id=section.id, block_id=b.id) for b in section.blocks if b.id in edit.removed
        )
    for section_id, unit in edit.appended:
        operations.append(AppendBlock(section_id=section_id, text=render_unit(unit)))
    taken = {s.id for s in document.sections}
    for heading, units in edit.added:
        base, n = slugify(heading), 2
        section_id = base
        while section_id in taken:
            section_id, n = f"{base}-{n}", n + 1
        taken.add(section_id)
        ordered = sorted(units, key=lambda u: (u.current.when is None, u.current.when, u.current.id))
        operations.append(
            AddSection(heading=heading, level=2, blocks=tuple(render_unit(u) for u in ordered), new_id=section_id)
        )
    return operations
