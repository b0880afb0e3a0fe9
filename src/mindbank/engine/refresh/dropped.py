"""What a delta refresh took out of the document: the memories its document cited before that it no longer cites,
each with the reason the trace and the dry run give (``left_out``).

A delta edits the document it is given; a fact the editor evicts to make room, or the ``max_tokens`` cap trims,
was quoted by an earlier refresh and is still in scope, so its leaving is recorded like a new fact left out. A
memory still cited by another block is not lost and is not listed; gone citations (deleted or out of scope) are
the retraction's report, not this.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mindbank.domain.document import StructuredDocument

TRIMMED = "trimmed: over max_tokens, less related to the source query than every block kept"
REMOVED = "removed by the delta's operations"


def dropped_citations(
    before: StructuredDocument,
    capped: StructuredDocument,
    after: StructuredDocument,
    reasons: Mapping[str, str],
    trimmed: Collection[str],
) -> dict[str, str]:
    """Memory id -> reason for every memory ``before`` (the document the delta edited, gone citations already
    retracted) cites and ``after`` (the final document) does not, in ``before``'s order. ``capped``: the edited
    document before the ``max_tokens`` cap; ``trimmed``: the ids of the blocks the cap removed from it.
    ``reasons``: the synthesizer's own (memory id -> reason, e.g. ``eviction.evicted_reason``); a memory it gives
    none for gets :data:`TRIMMED` when a trimmed block cited it, else :data:`REMOVED`."""
    kept = set(after.memory_ids())
    cut = {i for s in capped.sections for b in s.blocks if b.id in trimmed for i in b.memory_ids}
    return {i: reasons.get(i) or (TRIMMED if i in cut else REMOVED) for i in before.memory_ids() if i not in kept}
