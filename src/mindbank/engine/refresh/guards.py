"""The refresh's trust rules that shape a candidate document (beyond the reference: a refresh never publishes an
answer it cannot back with a memory, never publishes an empty document, and never silently drops a fact):

* :func:`blocks_left` — how much of a document a retraction would leave: a retraction that removes every block
  is an empty publication, refused (``refresh_failed_empty_scope``) rather than applied.
* :func:`is_refusal` — a candidate with no valid citation in any block, or an agent that said ``answer_found:
  false``, never replaces a populated document.
* :func:`carried_facts` — the new facts whose delta operations were rejected even after the repair re-ask: they are
  carried over to the next delta instead of being dropped.
* :func:`trim_to_budget` — ``max_tokens`` is a hard cap (the reference only warns): the lowest-ranked blocks go
  first, deterministically, and a lone block still over the cap is cut at a word boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from mindbank.domain.document import (
    Block,
    Section,
    StructuredDocument,
    cited_memory_ids,
    count_tokens,
    format_citation,
    render_markdown,
)

Ranker = Callable[[Sequence[str]], Sequence[float]]  # block texts -> a score each (higher: keep)


def blocks_left(document: StructuredDocument, missing: Collection[str] = ()) -> int:
    """How many blocks that rest on a memory survive removing every block citing one in ``missing`` (retraction
    rule). Uncited blocks (an extractive document's one-line preamble) are not counted: nothing supports them, so a
    document left with only those is an empty one."""
    gone = set(missing)
    return sum(1 for s in document.sections for b in s.blocks if b.memory_ids and not set(b.memory_ids) & gone)


def is_refusal(document: StructuredDocument, known: Collection[str], answer_found: bool | None) -> bool:
    """Whether a full candidate is a refusal: the synthesizer said it found no answer, or no block cites a memory
    this refresh read (``known``)."""
    if answer_found is False:
        return True
    valid = set(known)
    return not any(set(b.memory_ids) & valid for s in document.sections for b in s.blocks)


def carried_facts(skipped: Sequence[dict[str, Any]], result: StructuredDocument, fresh: Collection[str]) -> list[str]:
    """The new facts (ids in ``fresh``) that rejected operations (``skipped``, as ``apply_operations`` reports
    them) would have cited and that the resulting document does not cite anyway, in first-seen order."""
    placed = set(result.memory_ids())
    wanted = set(fresh)
    out: list[str] = []
    for op in skipped:
        texts = [op["text"]] if isinstance(op.get("text"), str) else []
        texts += [t for t in op.get("blocks") or [] if isinstance(t, str)]
        for text in texts:
            out.extend(i for i in cited_memory_ids(text) if i in wanted and i not in placed)
    return list(dict.fromkeys(out))


def trim_to_budget(
    document: StructuredDocument, max_tokens: int, rank: Ranker, *, keep: Collection[str] = ()
) -> tuple[StructuredDocument, list[str]]:
    """``document`` cut to at most ``max_tokens`` (``count_tokens`` of its render) and the ids of the blocks removed.

    Blocks are removed lowest ``rank`` first (ties: the later block first), a section left empty goes with its last
    block; when a single block remains over the cap its text is cut to whole words and keeps its citations. A
    document within the cap comes back unchanged. Blocks in ``keep`` (fixed content) are never removed or cut: with
    only those left the document stays as it is."""
    if count_tokens(render_markdown(document)) <= max_tokens:
        return document, []
    kept = set(keep)
    removed: set[str] = set()
    order = [(si, bi, b) for si, s in enumerate(document.sections) for bi, b in enumerate(s.blocks)]
    if kept:
        trimmable = [(si, bi, b) for si, bi, b in order if b.id not in kept]
        scores = list(rank([_plain(b.text) for _, _, b in trimmable]))
        current = document
        for i in sorted(range(len(trimmable)), key=lambda i: (scores[i], -i)):
            removed.add(trimmable[i][2].id)
            current = _without(document, removed)
            if count_tokens(render_markdown(current)) <= max_tokens:
                break
        return current, [b.id for _, _, b in order if b.id in removed]
    scores = list(rank([_plain(b.text) for _, _, b in order]))
    # lowest score first; among equals the one further down the document goes first
    queue = sorted(range(len(order)), key=lambda i: (scores[i], -i))
    current = document
    for i in queue:
        if len(removed) >= len(order) - 1:
            break
        removed.add(order[i][2].id)
        current = _without(document, removed)
        if count_tokens(render_markdown(current)) <= max_tokens:
            return current, [b.id for _, _, b in order if b.id in removed]
    current = _cut_last_block(current, max_tokens)
    return current, [b.id for _, _, b in order if b.id in removed]


def _plain(text: str) -> str:
    for memory_id in cited_memory_ids(text):
        text = text.replace(format_citation(memory_id), "")
    return text.strip()


def _without(document: StructuredDocument, removed: set[str]) -> StructuredDocument:
    sections = []
    for section in document.sections:
        blocks = [b for b in section.blocks if b.id not in removed]
        if blocks:
            sections.append(replace(section, blocks=blocks))
    return StructuredDocument(sections)


def _cut_last_block(document: StructuredDocument, max_tokens: int) -> StructuredDocument:
    """The one remaining block cut to whole words (citations kept at its end) so the document fits."""
    section = next(s for s in document.sections if s.blocks)
    block = section.blocks[0]
    citations = " ".join(format_citation(i) for i in block.memory_ids)
    words = _plain(block.text).split()
    while words:
        text = " ".join(words) + " …" + (f" {citations}" if citations else "")
        candidate = _single(section, replace(block, text=text))
        if count_tokens(render_markdown(candidate)) <= max_tokens:
            return candidate
        words = words[: max(0, len(words) - max(1, len(words) // 10))]
    return _single(section, replace(block, text=citations or "…"))


def _single(section: Section, block: Block) -> StructuredDocument:
    return StructuredDocument([Section(section.id, section.heading, section.level, [block])])
