"""Attribution: a question about one person is answered by what that person says, not by what the others say.

In a conversation every fact is a turn of one speaker (its ``Name:`` prefix). A standing question that names some of
the scope's speakers but not all ("What does Tomas do?", "What is Priya training for?") asks about those people, so
a fact another speaker said is about that other speaker's life ("Priya: I signed up for Portuguese lessons.") and is
not quoted as answering it — unless what would be quoted of it names one of the people asked about ("Priya: Tomas
fixed my bike yesterday."), when it says something about them, or speaks to one of them in the second person
(``Candidate.listener``: "Maria, to John: Trying new classes sounds like a fun way to switch up your exercise
routine"), when it tells of their life and is shown as said to them; a name only in a greeting the quote leaves out
("Tomas! It's been ages. I just got back from a run.") does not count. A question that names no speaker, or every
speaker, keeps every fact. Facts without a speaker prefix (a document, a note) are never left out by this rule.

Speakers are matched by the words of their prefix ("Melanie", "Melanie Smith"), case-insensitively, a possessive
dropped ("Priya's training" names Priya).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mindbank.domain.text import keyword_terms
from mindbank.engine.synthesis.answer import capitalised
from mindbank.engine.synthesis.selection import Candidate

ABOUT_OTHER = "about another person: said by {speaker}, the question asks about {asked}"
# words that only ask: a question left with nothing else once the names are out has nothing to rank by
_ASKING = frozenset("what which who whom whose when where why how is are was were does do did about".split())


def _words(text: str) -> set[str]:
    return {w.lower().removesuffix("'s").removesuffix("’s") for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", text)}


def asked_speakers(question: str, speakers: Sequence[str]) -> set[str]:
    """The ``speakers`` (as written in their prefixes) that ``question`` names, or the empty set when it names none
    or all of them (then no fact is about "another" person)."""
    named = _words(question)
    distinct = sorted(set(speakers) - {""})
    asked = {s for s in distinct if _words(s) & named}
    return asked if asked and len(asked) < len(distinct) else set()


def without_speakers(question: str, speakers: Sequence[str]) -> str:
    """``question`` with the names of the scope's ``speakers`` (as written in their prefixes) taken out, possessives
    with them, when it names every one of them and there are at least two ("When did Joanna plan to go over to
    Nate's?" -> "When did plan to go over to?"): the query a question's relevance is ranked by
    (``engine/refresh/reading.py``). Every turn carries one of those names (its prefix, or an address to the
    other speaker; recall's who arm lifts a memory said by a person the query names, so every turn), so together
    they lift the whole conversation and let a narrow question's relevance floor pass
    most of it, while telling nothing about what is asked. A question naming some speakers only keeps their names:
    they tell whose turns answer it. ``question`` unchanged as well when nothing would be left to search for but
    question words and stopwords ("What about Caroline and Melanie?")."""
    distinct = {s for s in speakers if s}
    named = _words(question)
    if len(distinct) < 2 or not all(_words(s) & named for s in distinct):
        return question
    names = {w for s in distinct for w in _words(s)}
    kept = re.sub(
        r"[A-Za-z][A-Za-z'’-]*",
        lambda m: "" if _words(m.group(0)) & names else m.group(0),
        question,
    )
    kept = re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s{2,}", " ", kept)).strip()
    return kept if set(keyword_terms(kept)) - _ASKING else question


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
        if not speaker or speaker in asked or cand.listener in asked or capitalised(cand.quote.text)[1] & asked_words:
            kept.append(cand)
        else:
            left[cand.id] = ABOUT_OTHER.format(speaker=speaker, asked=" and ".join(sorted(asked)))
    return kept, left
