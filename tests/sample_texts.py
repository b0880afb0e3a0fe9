"""Texts several test folders retain (a uniquely named module on the tests folder's import path)."""

from __future__ import annotations

# three short turns about Dana: each is one chunk and one fact
BOAT = [
    "Dana: I am restoring a 1970s sailing boat with my brother in the harbour.",
    "Dana: The sailing boat needs a new mast and fresh varnish on the deck before summer.",
    "Dana: I volunteer at the animal shelter on Saturdays walking the older dogs.",
]

# a turn of more than 80 words: the extractive retain splits it into several facts that share one chunk
LONG_TURN = (
    "Dana: The harbour master finally gave us a berth for the sailing boat, right next to the old ferry pier. "
    "We spent the whole weekend sanding the hull and the deck down to bare wood, and my brother found rot in two "
    "of the ribs near the stern. We will have to steam new oak ribs before we can think about varnish. "
    "The mast is still at the rigger's workshop and should be ready in about three weeks, if the weather holds "
    "and the rigger keeps his promise this time, which he did not do last spring."
)
