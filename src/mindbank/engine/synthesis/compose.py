"""The extractive composer: turns ranked facts into a cited, sectioned markdown document within a token budget.

No model writes prose here. Facts are taken in relevance order until the budget is spent, grouped into themed
sections (a theme is the content word shared by the most still-unplaced facts), and rendered one cited bullet
per block, so every block's provenance is exactly the memory it quotes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from mindbank.domain.document import (
    AddSection,
    AppendBlock,
    Operation,
    RemoveBlock,
    ReplaceBlock,
    Section,
    StructuredDocument,
    count_tokens,
    format_citation,
    render_markdown,
    slugify,
)
from mindbank.domain.records import ScoredMemory
from mindbank.domain.text import keyword_terms, strip_speaker

MAX_SECTIONS = 6
OTHER_HEADING = "Other notes"


MIN_CONTENT_TERMS = 3


def _body(text: str) -> str:
    return strip_speaker(text)


# words too generic to name a section even when many facts share them
_WEAK = frozenset(
    """about actually again already always amazing awesome back bad better big cool day days doing done else even
    every feel feeling first fun going gonna good great happy hard here just keep know last little long look looks
    lots made make many maybe much need new next nice night part pretty right said same says see sound sounds still
    super sure take tell thing things think time times today told tomorrow totally try want way week weeks well went
    whole work year years yesterday""".split()
)


def _terms(text: str) -> set[str]:
    return {t for t in keyword_terms(_body(text)) if t.isalpha() and len(t) >= 4 and t not in _WEAK}


def is_informative(text: str) -> bool:
    """Whether a fact says something: at least three content words, and not a bare question.

    Conversation turns such as "Which is?" or "Go on!" are kept as memories but never quoted in a document.
    """
    body = _body(text)
    if len(keyword_terms(body)) < MIN_CONTENT_TERMS:
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", body) if s.strip()]
    return not all(s.rstrip().endswith("?") for s in sentences)


def _when(hit: ScoredMemory) -> tuple[str, str]:
    when = hit.memory.occurred_start or hit.memory.mentioned_at
    return (when.isoformat() if when else "", hit.memory.id)


def _bullet(hit: ScoredMemory) -> str:
    memory = hit.memory
    when = memory.occurred_start or memory.mentioned_at
    date = f"({when.day} {when:%b %Y}) " if when else ""
    text = " ".join(memory.text.split())
    return f"- {date}{text} {format_citation(memory.id)}"


def group_by_theme(
    hits: Sequence[ScoredMemory], *, max_sections: int = MAX_SECTIONS
) -> list[tuple[str, list[ScoredMemory]]]:
    """Group hits into ``(heading, hits)`` themes, ordered by their best-ranked member.

    Words present in more than half of the hits (speaker names, the query's own subject) are not themes.
    """
    terms = [_terms(h.memory.text) for h in hits]
    frequency = Counter(t for ts in terms for t in ts)
    common = {t for t, n in frequency.items() if n > max(2, len(hits) // 2)}
    unplaced = list(range(len(hits)))
    groups: list[tuple[str, list[int]]] = []
    while unplaced and len(groups) < max_sections - 1:
        counts = Counter(t for i in unplaced for t in terms[i] if t not in common)
        best = [t for t, n in counts.items() if n >= 2]
        if not best:
            break
        # most shared first; ties go to the theme of the better-ranked fact, then alphabetically
        first_rank = {t: next(i for i in unplaced if t in terms[i]) for t in best}
        theme = min(best, key=lambda t: (-counts[t], first_rank[t], t))
        members = [i for i in unplaced if theme in terms[i]]
        groups.append((theme, members))
        unplaced = [i for i in unplaced if i not in members]
    if unplaced:
        groups.append(("", unplaced))
    groups.sort(key=lambda g: g[1][0])
    return [(theme.capitalize() if theme else OTHER_HEADING, [hits[i] for i in idx]) for theme, idx in groups]


def rank_for_document(hits: Sequence[ScoredMemory]) -> list[ScoredMemory]:
    """Order informative hits for a standing question: half relevance (recall order), half centrality.

    Centrality counts how many other hits share each of a fact's theme words, so facts about recurring topics
    (what someone keeps coming back to) outrank one-off remarks that happen to match the query's words.
    """
    # an observation speaks for the facts it consolidates: quote it once, not each source again
    covered = {s for h in hits if h.memory.fact_type == "observation" for s in (h.memory.source_memory_ids or ())}
    seen: set[str] = set()
    kept = []
    for h in hits:
        text = " ".join(h.memory.text.split()).lower()
        if h.memory.id in covered or text in seen or not is_informative(h.memory.text):
            continue
        seen.add(text)
        kept.append(h)
    if not kept:
        return []
    terms = [_terms(h.memory.text) for h in kept]
    frequency = Counter(t for ts in terms for t in ts)
    central = [sum(frequency[t] - 1 for t in ts) / max(1.0, len(ts)) ** 0.5 for ts in terms]
    top = max(central) or 1.0
    n = len(kept)
    score = [0.5 * (1 - i / n) + 0.5 * (c / top) for i, c in enumerate(central)]
    order = sorted(range(n), key=lambda i: (-score[i], i))
    return [kept[i] for i in order]


def compose_markdown(
    *, source_query: str, hits: Sequence[ScoredMemory], max_tokens: int, ranked: bool = False
) -> tuple[str, list[str]]:
    """A cited markdown answer to ``source_query`` from ``hits`` (best first) within ``max_tokens``.

    Returns ``(markdown, cited memory ids)``; ``("", [])`` when there are no hits.
    """
    hits = list(hits) if ranked else rank_for_document(hits)
    if not hits:
        return "", []
    intro = f"What the memories say about: {' '.join(source_query.split())}"
    budget = max_tokens - count_tokens(intro) - 8
    chosen: list[ScoredMemory] = []
    used = 0
    for hit in hits:
        cost = count_tokens(_bullet(hit)) + 4  # heading share and separators
        if chosen and used + cost > budget:
            break
        chosen.append(hit)
        used += cost
    parts = [intro]
    for heading, members in group_by_theme(chosen):
        parts.append(f"## {heading}")
        # chronological inside a theme, so a reader sees how it developed
        parts.extend(_bullet(h) for h in sorted(members, key=_when))
    markdown = "\n\n".join(parts) + "\n"
    # grouping adds headings; drop trailing facts until the render fits the budget
    if count_tokens(markdown) > max_tokens and len(chosen) > 1:
        return compose_markdown(source_query=source_query, hits=chosen[:-1], max_tokens=max_tokens, ranked=True)
    return markdown, [h.memory.id for h in chosen]


SIGNATURE_TERMS = 8


def section_signature(section: Section) -> list[str]:
    """A section's theme words: its heading's, then its blocks' most frequent content words (at most 8 more)."""
    counts = Counter(t for block in section.blocks for t in _terms(block.text))
    heading = sorted(_terms(section.heading))
    rest = [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if t not in heading]
    return heading + rest[:SIGNATURE_TERMS]


def document_outline(document: StructuredDocument) -> str:
    """What the extractive editor reads of a document: per section its id, heading, theme words and block count.

    Block texts are not read: placement needs themes, and eviction (when over budget) needs only block sizes.
    """
    return "\n".join(
        f"{s.id} | {s.heading} | {' '.join(section_signature(s))} | {len(s.blocks)}" for s in document.sections
    )


def plan_delta_operations(
    document: StructuredDocument, facts: Sequence[ScoredMemory], *, max_tokens: int
) -> tuple[list[Operation], list[str]]:
    """Delta operations that fold new ``facts`` into ``document`` (extractive engine).

    A block quoting a cited memory that was edited since (its text or time changed) is requoted
    (:func:`requote_edited`). Each informative, not-yet-cited fact is appended to the section whose theme it
    shares (the heading word first, then the most shared words); facts sharing a new theme get a new section
    (placed before the catch-all section); the rest go to the catch-all "Other notes". When the document would
    exceed ``max_tokens``, the oldest blocks of the catch-all (then of the largest section) are removed to make
    room. Sections no operation names stay byte-identical. Returns ``(operations, memory ids used)``.
    """
    cited = set(document.memory_ids())
    operations, used = requote_edited(document, [h for h in facts if h.memory.id in cited])
    # a requoted block changes size: count the change against the budget, and make room if it grew past it
    budget = max_tokens - count_tokens(render_markdown(document))
    budget -= sum(count_tokens(op.text) - count_tokens(_block_text(document, op)) for op in operations
                  if isinstance(op, ReplaceBlock))  # fmt: skip
    if budget < 0:
        budget += _make_room(document, operations, -budget, protect=used)
    fresh = [h for h in rank_for_document(facts) if h.memory.id not in cited]
    if not fresh:
        return operations, used
    themed = [s for s in document.sections if s.heading and s.heading != OTHER_HEADING]
    other = next((s for s in document.sections if s.heading == OTHER_HEADING), None)
    section_terms = {s.id: set(section_signature(s)) for s in themed}
    heading_term = {s.id: s.heading.lower() for s in themed}
    placed: dict[str, list[ScoredMemory]] = {}
    leftovers: list[ScoredMemory] = []
    for hit in fresh:
        terms = _terms(hit.memory.text)
        by_heading = [s.id for s in themed if heading_term[s.id] in terms]
        if by_heading:
            placed.setdefault(by_heading[0], []).append(hit)
            continue
        overlap = max(themed, key=lambda s: len(terms & section_terms[s.id]), default=None)
        if overlap is not None and len(terms & section_terms[overlap.id]) >= 2:
            placed.setdefault(overlap.id, []).append(hit)
        else:
            leftovers.append(hit)

    def take(hit: ScoredMemory) -> str | None:
        nonlocal budget
        text = _bullet(hit)
        cost = count_tokens(text) + 2
        if cost > budget:
            freed = _make_room(document, operations, cost - budget, protect=used)
            if not freed:
                return None
            budget += freed
        budget -= cost
        used.append(hit.memory.id)
        return text

    for section in themed:
        for hit in sorted(placed.get(section.id, []), key=_when):
            text = take(hit)
            if text is not None:
                operations.append(AppendBlock(section_id=section.id, text=text))
    new_groups = [(h, m) for h, m in group_by_theme(leftovers) if h != OTHER_HEADING and len(m) >= 2]
    grouped = {id(h) for _, members in new_groups for h in members}
    existing_headings = {s.heading.lower() for s in document.sections}
    taken_ids = {s.id for s in document.sections}
    anchor = _anchor_before_other(document)
    for heading, members in new_groups:
        if heading.lower() in existing_headings:
            grouped -= {id(h) for h in members}
            continue
        texts = [t for t in (take(h) for h in sorted(members, key=_when)) if t is not None]
        if texts:
            section_id = _unique_id(slugify(heading), taken_ids)
            taken_ids.add(section_id)
            operations.append(
                AddSection(heading=heading, level=2, blocks=tuple(texts), after_section_id=anchor, new_id=section_id)
            )
            anchor = section_id if anchor is not None else None
    rest = [h for h in leftovers if id(h) not in grouped]
    if rest:
        texts = [t for t in (take(h) for h in sorted(rest, key=_when)) if t is not None]
        if texts and other is not None:
            operations.extend(AppendBlock(section_id=other.id, text=t) for t in texts)
        elif texts:
            operations.append(AddSection(heading=OTHER_HEADING, level=2, blocks=tuple(texts)))
    return operations, used


def requote_edited(document: StructuredDocument, cited: Sequence[ScoredMemory]) -> tuple[list[Operation], list[str]]:
    """``replace_block`` for every block that quotes exactly one of ``cited`` (memories the document already cites
    and that were written since the watermark) when the quote no longer matches the memory's current text or
    time; ``(operations, memory ids requoted)``. Memories rewritten in place (PATCH text) stay truthful this way."""
    operations: list[Operation] = []
    used: list[str] = []
    for hit in cited:
        quote = _bullet(hit)
        for section in document.sections:
            for block in section.blocks:
                if block.memory_ids == (hit.memory.id,) and block.text != quote:
                    operations.append(ReplaceBlock(section_id=section.id, block_id=block.id, text=quote))
                    if hit.memory.id not in used:
                        used.append(hit.memory.id)
    return operations, used


def _block_text(document: StructuredDocument, op: ReplaceBlock) -> str:
    section = next(s for s in document.sections if s.id == op.section_id)
    return next(b.text for b in section.blocks if b.id == op.block_id)


def _unique_id(base: str, taken: set[str]) -> str:
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def _anchor_before_other(document: StructuredDocument) -> str | None:
    ids = [s.id for s in document.sections]
    other = next((i for i, s in enumerate(document.sections) if s.heading == OTHER_HEADING), None)
    if other is None:
        return None
    return ids[other - 1] if other > 0 else None


def _make_room(document: StructuredDocument, operations: list[Operation], needed: int, *, protect: list[str]) -> int:
    """Queue removals of the oldest blocks (catch-all first, then the largest section) until ``needed`` tokens
    are freed, and return the tokens freed; when that much cannot go, queue nothing and return 0."""
    removed = {op.block_id for op in operations if isinstance(op, RemoveBlock)}
    order = sorted(
        (s for s in document.sections if s.heading),
        key=lambda s: (s.heading != OTHER_HEADING, -len(s.blocks)),
    )
    evictions: list[Operation] = []
    freed = 0
    for section in order:
        for block in section.blocks:
            if freed >= needed:
                break
            if block.id in removed or not block.memory_ids or any(m in protect for m in block.memory_ids):
                continue
            if sum(1 for b in section.blocks if b.id not in removed) <= 1:
                break  # never empty a section by eviction
            evictions.append(RemoveBlock(section_id=section.id, block_id=block.id))
            removed.add(block.id)
            freed += count_tokens(block.text) + 2
    if freed < needed:
        return 0
    operations.extend(evictions)
    return freed
