"""Attribution: a question about one person is answered by what that person says, not by what the others say.

In a conversation every fact is a turn of one speaker (its ``Name:`` prefix). A standing question that names some of
the scope's speakers but not all ("What does Tomas do?", "What is Priya training for?") asks about those people, so
a fact another speaker said is about that other speaker's life ("Priya: I signed up for Portuguese lessons.") and is
not quoted as answering it — unless what would be quoted of it names one of the people asked about ("Priya: Tomas
fixed my bike yesterday."), when it says something about them; a name only in a greeting the quote leaves out
("Tomas! It's been ages. I just got back from a run.") does not count. A question that names no speaker, or every
speaker, keeps every fact. Facts without a speaker prefix (a document, a note) are never left out by this rule.

Speakers are matched by the words of their prefix ("Melanie", "Melanie Smith"), case-insensitively, a possessive
dropped ("Priya's training" names Priya).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mindbank.engine.synthesis.answer import capitalised
from mindbank.engine.synthesis.selection import Candidate

ABOUT_OTHER = "about another person: said by {speaker}, the question asks about {asked}"


def _words(text: str) -> set[str]:
    return {w.lower().removesuffix("'s").removesuffix("’s") for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", text)}


def asked_speakers(question: str, speakers: Sequence[str]) -> set[str]:
    """The ``speakers`` (as written in their prefixes) that ``question`` names, or the empty set when it names none
    or all of them (then no fact is about "another" person)."""
    named = _words(question)
    distinct = sorted(set(speakers) - {""})
    asked = {s for s in distinct if _words(s) & named}
    return asked if asked and len(asked) < len(distinct) else set()


def about_others(
    cands: Sequence[Candidate], question: str, context: Sequence[Candidate] = ()
) -> tuple[list[Candidate], dict[str, str]]:
    """``(kept, left out)``: the candidates ``question`` may cite under the rule of the module docstring, and for
    each other one (memory id) the reason, :data:`ABOUT_OTHER` filled in. The scope's speakers are those of
    ``cands`` and ``context`` (a delta's new facts may all be one speaker's: the document's facts say who else
    speaks)."""
    asked = asked_speakers(question, [c.speaker for c in (*cands, *context)])
    if not asked:
        return list(cands), {}
    asked_words = {w for s in asked for w in _words(s)}
    kept: list[Candidate] = []
    left: dict[str, str] = {}
    for cand in cands:
        speaker = cand.speaker
        # the name must be in what would be quoted: a greeting that names the listener ("Tomas! It's been ages.")
        # is dropped from the quote and does not make the rest of the turn about them
        if not speaker or speaker in asked or capitalised(cand.quote.text)[1] & asked_words:
            kept.append(cand)
        else:
            left[cand.id] = ABOUT_OTHER.format(speaker=speaker, asked=" and ".join(sorted(asked)))
    return kept, left
