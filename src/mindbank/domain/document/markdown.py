"""The markdown codec of a document: ``render_markdown``, ``parse_markdown`` and the normalisers of block and heading
text that keep ``render -> parse -> render`` byte-identical.

Rendering joins heading lines and block texts with one blank line and ends with a single newline; a person-written
or pinned block is preceded by a ``<!-- curated: … -->`` line (docs/curation.md). Parsing splits on
ATX headings and blank lines outside fenced code, so ``parse -> render`` reaches a fixed point after one pass.
"""

from __future__ import annotations

import re

from mindbank.domain.document.model import (
    PREAMBLE_ID,
    Block,
    DocumentError,
    Section,
    StructuredDocument,
    block_id_for,
    dedupe_id,
    slugify,
)

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


def render_markdown(doc: StructuredDocument) -> str:
    """Return the canonical markdown of ``doc``.

    Heading lines (``"#" * level + " " + heading``, none for an empty heading) and block texts are joined
    by one blank line; a non-empty result ends with exactly one newline, an empty document renders ``""``.
    """
    pieces: list[str] = []
    for section in doc.sections:
        if section.heading:
            pieces.append("#" * section.level + " " + section.heading)
        pieces.extend(_marked(section, block) for block in section.blocks)
    return "\n\n".join(pieces) + "\n" if pieces else ""


def curation_note(section: Section, block: Block) -> str | None:
    """The rendered mark of fixed content (curation, beyond the reference): ``"written by <author> at <time>"``
    and/or ``"pinned"``, or None for a block a refresh wrote and nobody pinned. Such a block need not cite memories;
    the mark says why it stands."""
    notes = []
    if block.origin == "person":
        notes.append(f"written by {block.author or 'a person'}" + (f" at {block.edited_at}" if block.edited_at else ""))
    if block.pinned or section.pinned:
        notes.append("pinned")
    return "; ".join(notes) or None


def _marked(section: Section, block: Block) -> str:
    """A block's text, preceded by an HTML comment line naming its curation (``<!-- curated: … -->``): invisible
    where markdown is displayed, read by agents that get the raw content. ``--`` in a name cannot close it early."""
    note = curation_note(section, block)
    if note is None:
        return block.text
    return "<!-- curated: " + note.replace("--", "\u2014").replace("\n", " ") + " -->\n" + block.text


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
        sid = PREAMBLE_ID if i == 0 and not heading else dedupe_id(slugify(heading), section_ids)
        section_ids.add(sid)
        blocks: list[Block] = []
        for block_text in texts:
            bid = dedupe_id(block_id_for(block_text), block_ids)
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
