"""What a delta took out of the document, and why (``engine/refresh/dropped.py``): every memory the edited document
cited that the final one does not, with the synthesizer's reason, else the cap's, else a plain removal; a memory
another block still cites is not listed."""

from __future__ import annotations

from mindbank.domain.document import parse_markdown
from mindbank.engine.refresh.dropped import REMOVED, TRIMMED, dropped_citations

BEFORE = parse_markdown(
    "## Climbing\n\n- I boulder twice a week. [mem:a]\n\n- I rent shoes. [mem:b] [mem:c]\n\n- I climb with Lena. [mem:d]\n"
)


def test_each_memory_gone_from_the_document_gets_the_reason_for_its_going() -> None:
    edited = parse_markdown("## Climbing\n\n- I boulder twice a week. [mem:a]\n\n- I climb with Lena. [mem:d]\n")
    final = parse_markdown("## Climbing\n\n- I boulder twice a week. [mem:a]\n")
    trimmed = [b.id for b in edited.sections[0].blocks if "Lena" in b.text]
    dropped = dropped_citations(BEFORE, edited, final, {"b": "evicted: over max_tokens, less worthy"}, trimmed)
    assert dropped == {"b": "evicted: over max_tokens, less worthy", "c": REMOVED, "d": TRIMMED}


def test_a_memory_still_cited_by_another_block_is_not_listed() -> None:
    final = parse_markdown("## Climbing\n\n- I boulder twice a week. [mem:a] [mem:c]\n\n- I climb with Lena. [mem:d]\n")
    assert dropped_citations(BEFORE, final, final, {"c": "evicted: over max_tokens"}, []) == {"b": REMOVED}
