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
  - otherwise it is a new block, appended to the nearest section (centroid cosine ≥ :data:`SECTION_JOIN`) whose
    heading it fits (``topics.fits``: it holds a word of the heading; an answering document's answer section takes
    a block as relevant as a full refresh's floor asks, ``answer.FLOOR``, whatever its words), or to the nearest
    section it is close to in other words (cosine ≥ ``compose.JOIN_COSINE``), or, when none will do, grouped with
    the other leftovers into new titled sections (``topics.py``; a lone new fact is not titled by a phrase of its
    own) placed before "Other notes", what no title fits joining the nearest section it fits, else "Other notes";
* over ``max_tokens`` or :data:`compose.MAX_BLOCKS` blocks, the least worthy blocks — old or new — go (worth =
  salience + relevance + mentions: ``blocks.Unit.worth``), never simply the oldest; a new fact less worthy than
  everything already there is not added at all, and a section left without blocks goes with its last block (a new
  section left with one block gives it to "Other notes": its heading rested on two facts). A fact an evicted old
  block cited that no block left cites is reported left out, with the reason, like a new fact not added.

Sections and blocks no operation names stay byte-identical. Without the scope read (a caller with no vectors) the
editor still appends and evicts, placing new blocks by the words they share with each section, but cannot
recognise repeats or updates of cited facts (it does not know them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    InsertBlock,
    Operation,
    RemoveBlock,
    RemoveSection,
    ReplaceBlock,
    StructuredDocument,
    slugify,
)
from mindbank.domain.records import ScoredMemory
from mindbank.domain.text import strip_speaker
from mindbank.engine.synthesis.answer import DELTA_FLOOR, FLOOR, asks_speech, is_broad, linked, scope_names
from mindbank.engine.synthesis.attribution import about_others
from mindbank.engine.synthesis.blocks import MENTION_WEIGHT, Unit, add_repeats, day, read_block, render_unit
from mindbank.engine.synthesis.compose import (
    JOIN_COSINE,
    NOT_QUOTABLE,
    NOT_TAKEN,
    OTHER_HEADING,
    Pool,
    group_sections,
    heading_quotes,
    select_units,
)
from mindbank.engine.synthesis.eviction import Edit, Placed, evict
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.salience import Quote, salience
from mindbank.engine.synthesis.selection import (
    VARIATION_COSINE,
    Candidate,
    candidates,
    lexical_vectors,
    mmr_order,
)
from mindbank.engine.synthesis.topics import fits, speaker_names
from mindbank.engine.synthesis.updates import RELATED_COSINE, repeats, updates

SECTION_JOIN = 0.45  # a new block joins the existing section whose centroid is at least this close (cosine)


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
    when given): memory id -> why a new fact is not quoted, and why a fact the document cited is no longer quoted
    (its block was evicted and no block left cites it: ``eviction.evicted_reason``), closest to the document first
    (:func:`_left_out`)."""
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
    # an answering document's first section is placed by relevance, not by its heading's words
    answer = next((sec.id for sec in document.sections if sec.heading), None) if narrow else None
    if fresh:
        _fold(document, placed, fresh, edit, read, lexical, answer)
    evict(document, placed, edit, max_tokens, by_relevance=narrow)
    requoted_only = [i for i in used if i not in edit.used]
    if left_out is not None:
        left_out.update(_left_out(new_hits, {*used, *edit.used}, {c.id for c in every}, reasons, edit))
    return _operations(document, placed, edit, operations), [*requoted_only, *edit.used]


def _left_out(
    new_hits: Sequence[ScoredMemory], quoted: set[str], quotable: set[str], reasons: dict[str, str], edit: Edit
) -> dict[str, str]:
    """Memory id -> why it is not quoted, closest to the document first (a trace that lists only so many keeps
    those): the facts an evicted old block cited that no block left cites, then the new facts that passed every
    gate and lost on room or were variations of a quoted fact, then those the gates kept out (another person's,
    below the relevance floor), then those not quotable at all; the new facts in ``new_hits``' order."""
    new = [h.memory.id for h in new_hits if h.memory.id not in quoted]
    out = dict(edit.evicted)
    out.update((i, edit.reasons[i]) for i in new if i in edit.reasons and i not in reasons)
    out.update((i, reasons[i]) for i in new if i in reasons)
    out.update((i, NOT_TAKEN) for i in new if i in quotable and i not in out)
    out.update((i, NOT_QUOTABLE) for i in new if i not in out)
    return out


def _fold(
    document: StructuredDocument,
    placed: list[Placed],
    fresh: list[Candidate],
    edit: Edit,
    read: ScopeRead,
    lexical: bool,
    answer: str | None = None,
) -> None:
    """Turn the new facts into replacements (updates, repeats) and new blocks (``answer``: the id of the answer
    section, which takes a block by nearness alone)."""
    pool = Pool(fresh)
    units = select_units(pool, mmr_order(pool.cands, exclude=pool.used), budget=10**9, limit=len(fresh))
    leftovers: list[Unit] = []
    headings = {sec.id: sec.heading for sec in document.sections}
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
        section_id = _home(unit, centroids, headings, answer, SECTION_JOIN)
        if section_id is not None:
            edit.appended.append((section_id, unit))
        else:
            leftovers.append(unit)
    if not leftovers:
        return
    existing = {s.heading.lower(): s.id for s in document.sections if s.heading}
    banned = speaker_names([c.hit.memory.text for c in fresh] + [p.text for p in placed])
    # a delta extends a document: a lone new fact is not titled by a phrase of its own (topics.py)
    for section in group_sections(leftovers, read, banned, lone=False):
        target = existing.get(section.heading.lower())
        if section.heading == OTHER_HEADING and centroids:
            # nothing new to title: each block joins its nearest section that it fits, else Other notes
            unplaced: list[Unit] = []
            for unit in section.units:
                section_id = _home(unit, centroids, headings, answer, -1.0)
                if section_id is None:
                    unplaced.append(unit)
                else:
                    edit.appended.append((section_id, unit))
            if unplaced and target is not None:
                edit.appended.extend((target, unit) for unit in unplaced)
            elif unplaced:
                edit.added.append((OTHER_HEADING, unplaced))
        elif target is not None:
            edit.appended.extend((target, unit) for unit in section.units)
        else:
            edit.added.append((section.heading, section.units))


def _home(
    unit: Unit, centroids: dict[str, np.ndarray], headings: dict[str, str], answer: str | None, floor: float
) -> str | None:
    """The section a new block joins (module docstring): the nearest one (centroid cosine ≥ ``floor``) whose
    heading it fits (``topics.fits``; the answer section takes a block relevant enough, ``answer.FLOOR``), or the
    nearest one it is close to
    whatever the heading's words (≥ ``compose.JOIN_COSINE``); None when no section will do (it is then grouped with
    the other leftovers, and "Other notes" takes what no title fits)."""
    vector = unit.current.vector
    cosine = {sid: float(v @ vector) for sid, v in centroids.items() if v.shape == vector.shape}
    quotes = heading_quotes(unit)

    def fitting(sid: str) -> bool:
        heading = headings.get(sid, "")
        if sid == answer and unit.current.relevance >= FLOOR:
            return True  # as relevant as a full refresh's answer needs to be
        return heading != OTHER_HEADING and fits(heading, quotes)

    homes = [sid for sid, c in cosine.items() if (c >= floor and fitting(sid)) or c >= JOIN_COSINE]
    return max(homes, key=cosine.__getitem__, default=None)


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
    # new sections go before the document's Other notes, which stays last (None: at the end)
    kept = [s for s in document.sections if s.id not in removed_sections]
    other = next((i for i, s in enumerate(kept) if s.heading == OTHER_HEADING), None)
    after = kept[other - 1].id if other else None
    for heading, units in edit.added:
        base, n = slugify(heading), 2
        section_id = base
        while section_id in taken:
            section_id, n = f"{base}-{n}", n + 1
        taken.add(section_id)
        ordered = sorted(units, key=lambda u: (u.current.when is None, u.current.when, u.current.id))
        blocks = tuple(render_unit(u) for u in ordered)
        at = None if heading == OTHER_HEADING else after
        operations.append(AddSection(heading=heading, level=2, blocks=blocks, after_section_id=at, new_id=section_id))
        if at is not None:
            after = section_id
    return operations
