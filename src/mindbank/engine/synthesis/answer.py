"""Answer first, breadth that follows the question: which facts a briefing quotes, and which open it.

A mental model answers a standing question, so its document opens with the facts that most directly answer it and
quotes only as much of the scope as the question reaches. Relevance is the hybrid recall score of each fact for
the source query (``engine/recall.py``: dense and BM25 arms fused, lifted by conversational neighbours), the ranking
``/recall`` returns, divided by the best score of the whole scope (``selection.candidates``), so improving recall
improves documents.

* **Relevance floor.** A fact is quoted only when its relevance reaches :data:`FLOOR` × the relevance of the best
  quotable fact, and :data:`MIN_FLOOR` of the scope's best score (``floor``). The floor is relative to the
  best-scoring facts, not a count: a narrow question ("What pets does Melanie have?") has a few facts near the top
  and gets a short answer; facts that have nothing to do with the question score far below the best and never move
  the floor.
* **Broad questions.** A question that names no topic of its own — every content word of it is generic
  (:data:`GENERIC`: "What matters most to X, and what is X working on?", "What plans do they share?") — asks about
  the whole scope: every quotable fact passes, there is no answer section, and the briefing keeps its topic breadth
  (``selection.py``, facts weighed by the same hybrid relevance).
* **Answer first.** The document's first section holds the :data:`ANSWER_MAX` most relevant quotable facts,
  whatever the floor (what ``/recall``'s first results would show, questions and small talk aside; in a scope of a
  few facts the floor would otherwise leave out a weak match that still answers), most relevant first, each
  showing its current value when it was updated (``updates.py``); its heading names the answer's subject
  (:func:`answer_heading`). Topic sections of the other quoted facts follow (``topics.py``).
* **Shared subject.** A fact that names someone or something (a capitalised word inside a sentence: "Seraphim",
  "Luna") that a strong answer (relevance ≥ :data:`ANSWER_BAR` × the best) also names is about the answer's
  subject, whatever words it uses ("Seraphim shed her skin" answers "What pets do they have, and what happened with
  them?" once "My snake Seraphim …" does): its relevance is raised to at least :data:`SUBJECT_SHARE` × that fact's
  (``linked``). Speakers' names link nothing, nor do the calendar's ("in May", "on Saturdays"), nor does a name
  more than :data:`NAME_MAX_FACTS` facts use (a place or group the whole scope talks about).
* **What is to come.** A question about plans, goals or upcoming events is answered by statements of intention or
  schedule, not by what happened: a quote that speaks only of the past has its relevance scaled by
  ``tense.PAST_SHARE`` for such a question, and when plans are all a broad question asks about, a statement of the
  speaker's own plan scores at least ``tense.PLAN_SHARE`` × the best (``tense.py``, :func:`to_come`).
* **What someone said.** A question about what a person said, told, suggested or advised ("What does Jon tell Gina
  he won't do?", "According to Evan, what is important for Sam to believe in?": :func:`asks_speech`) is answered by
  their words to the other speaker, advice and exhortations included: a request to the listener ("But remember,
  it's important to believe in yourself …"), never quoted otherwise, is quoted like a statement
  (``salience.quote``'s ``advice``).
* **Delta.** A delta refresh admits a new fact whose relevance reaches :data:`DELTA_FLOOR` (relative to the
  scope's best score, a looser bar than the full refresh's: a fact that nearly answers is kept rather than lost
  until the next full refresh); a fact below it is recorded in the refresh trace with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from mindbank.domain.text import keyword_terms, strip_speaker
from mindbank.domain.timecues import CALENDAR_NAMES
from mindbank.engine.synthesis.selection import Candidate, stem
from mindbank.engine.synthesis.tense import PAST_SHARE, PLAN_SHARE, asks_future, past_only, states_plan
from mindbank.engine.synthesis.topics import phrases_of, rank_phrases, title

FLOOR = 0.65  # a quoted fact scores at least this share of the best quotable fact's relevance
MIN_FLOOR = 0.45  # ... and at least this share of the scope's best score (when the best facts are not quotable)
DELTA_FLOOR = 0.2  # a delta refresh admits a new fact at this share of the scope's best score
ANSWER_BAR = 0.7  # a fact this close to the best is a strong answer: the names it uses link other facts to it
ANSWER_MAX = 5  # blocks in the answer section at most
SUBJECT_SHARE = 0.8  # a fact naming the subject of an answer fact scores at least this share of it
NAME_MAX_FACTS = 6  # a name used by more facts than this is a topic of the whole scope ("LGBTQ"), not a subject
ANSWER_HEADING = "Answer"  # when neither the question nor the answer's quotes give a subject

# words that name no topic: a question made only of these (beside names, question words and stopwords) is broad
GENERIC = frozenset(
    """matter matters mattered most important importance main key big biggest work working works worked do does
    doing did done going go goes happen happening happened up new news life lives plan plans planning planned goal
    goals share shared sharing common both together care cares caring about everything anything something thing
    things stuff know known knows interest interests interested focus focused focusing priority priorities
    value values want wants wanted like likes love loves recent recently lately current currently now today
    general overall think thinks feel feels day days time times talk talks talked talking discuss discussed
    mention mentioned say says said upcoming future coming next soon event events""".split()
)
# words of a question asking for what someone said: their words, advice and exhortations answer it
SPEECH_WORDS = frozenset(
    """say says said tell tells told suggest suggests suggested advise advises advised advice recommend recommends
    recommended encourage encourages encouraged remind reminds reminded""".split()
)
_QUESTION_WORDS = frozenset("what which who whom whose when where why how is are was were does do did".split())


def is_broad(question: str, named: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether ``question`` names no topic of its own (module docstring): every keyword term of it, names and
    question words aside, is in :data:`GENERIC`. A question with no such term at all ("What about Caroline?") is
    broad too. A word capitalised inside the question is set aside as a name (the scope's person, or a title's
    capital: "What about Running?") unless it is in ``named`` — lowercased words the scope's facts write
    capitalised that are not its speakers (:func:`scope_names`) — when it is the question's topic ("Why does John like
    Aragorn from Lord of the Rings?" asks about Aragorn)."""
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", question)
    names = {w.lower().removesuffix("'s").removesuffix("’s") for w in words[1:] if w[:1].isupper() and w != "I"}
    names -= set(named)
    terms = [t for t in keyword_terms(question) if t not in names and t not in _QUESTION_WORDS]
    return all(t in GENERIC or stem(t) in GENERIC for t in terms)


def asks_speech(question: str) -> bool:
    """Whether ``question`` asks what someone said, told or advised (module docstring): it holds a word of
    :data:`SPEECH_WORDS` or "according to"."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", question)]
    return any(w in SPEECH_WORDS for w in words) or re.search(r"\baccording to\b", question, re.IGNORECASE) is not None


def scope_names(cands: Sequence[Candidate], speakers: set[str]) -> frozenset[str]:
    """The words ``cands`` write capitalised (a sentence's first word included: "Anthony and I went …";
    :func:`capitalised`), lowercased, ``speakers`` aside: a question naming one of them is narrow
    (:func:`is_broad`)."""
    return frozenset(n for c in cands for n in capitalised(c.hit.memory.text)[1]) - speakers


def floor(cands: Sequence[Candidate], question: str, named: set[str] | frozenset[str] = frozenset()) -> float:
    """The relevance a fact needs to be quoted in a full refresh: :data:`FLOOR` × the best quotable fact's
    relevance and at least :data:`MIN_FLOOR` (relevance is relative to the scope's best score: when the facts that
    match best are questions or small talk, the best quotable fact may be a weak match, and half of it would let
    most of the scope in), or 0 for a broad question (``named``: as :func:`is_broad` reads it)."""
    if not cands or is_broad(question, named):
        return 0.0
    return max(FLOOR * max(c.relevance for c in cands), MIN_FLOOR)


@lru_cache(maxsize=65536)
def capitalised(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """``(names, capitalised)`` of a text, lowercased, a possessive dropped, bracketed annotations, the speaker
    prefix and the calendar's names (``timecues.CALENDAR_NAMES``: "May", "Saturdays") left out: ``names`` are the
    capitalised words inside a sentence (not its first word, not "I") — surely names; ``capitalised`` every
    capitalised word, a sentence's first included (a name there only when it is used as one elsewhere:
    :func:`linked`)."""
    body = re.sub(r"\[[^\]]*\]", " ", strip_speaker(text))
    inner: set[str] = set()
    every: set[str] = set()
    for sentence in re.split(r"(?<=[.!?…])\s+", body):
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", sentence)]
        for position, word in enumerate(words):
            if not word[:1].isupper() or word == "I" or len(word) < 3:
                continue
            name = word.lower().removesuffix("'s").removesuffix("’s")
            if name in CALENDAR_NAMES:  # "in May" links no fact to another
                continue
            every.add(name)
            if position:
                inner.add(name)
    return frozenset(inner), frozenset(every)


def linked(cands: Sequence[Candidate], anchors: Sequence[Candidate], speakers: set[str]) -> list[Candidate]:
    """``cands`` with the shared-subject rule applied (module docstring): a candidate naming what an anchor names
    (speakers' names aside) scores at least :data:`SUBJECT_SHARE` × the best such anchor's relevance. A word counts
    as a name when some candidate or anchor uses it capitalised inside a sentence, and links only when at most
    :data:`NAME_MAX_FACTS` of them use it."""
    every = {c.id: c for c in (*cands, *anchors)}.values()
    known = {n for c in every for n in capitalised(c.hit.memory.text)[0]} - speakers
    uses: dict[str, int] = {}
    for c in every:
        for name in capitalised(c.hit.memory.text)[1] & known:
            uses[name] = uses.get(name, 0) + 1
    known = {n for n in known if uses.get(n, 0) <= NAME_MAX_FACTS}
    by_name: dict[str, float] = {}
    for anchor in anchors:
        for name in capitalised(anchor.hit.memory.text)[1] & known:
            by_name[name] = max(by_name.get(name, 0.0), anchor.relevance)
    if not by_name:
        return list(cands)
    out = []
    for cand in cands:
        lift = max((by_name.get(n, 0.0) for n in capitalised(cand.hit.memory.text)[1]), default=0.0)
        lifted = SUBJECT_SHARE * lift
        out.append(replace(cand, relevance=lifted) if lifted > cand.relevance else cand)
    return out


def answer_order(cands: Sequence[Candidate], bar: float = 0.0) -> list[int]:
    """Indices of the candidates with relevance ≥ ``bar`` × the best, most relevant first (ties by memory id, so a
    rerun gives the same order): with ``bar`` 0 the order the answer section takes them in, with
    :data:`ANSWER_BAR` the strong answers whose subjects lift other facts (:func:`linked`)."""
    if not cands:
        return []
    best = max(c.relevance for c in cands)
    if best <= 0:
        return []
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].relevance, cands[i].id))
    return [i for i in order if cands[i].relevance >= bar * best]


def answer_heading(question: str, quotes: Sequence[str], banned: set[str]) -> str:
    """The answer section's heading: the question's own phrase that the answer's ``quotes`` hold (the longest, then
    the first), else the answer quotes' best key phrase that shares a word with the question, else the question's
    first phrase, else :data:`ANSWER_HEADING`. Names in ``banned`` (speakers) never title it."""
    asked = [(surface, stems) for surface, stems, _ in phrases_of(question, banned)]
    held = {s for q in quotes for _, stems, _ in phrases_of(q, banned) for s in stems}
    covered = [(surface, stems) for surface, stems in asked if stems and set(stems) <= held]
    if covered:
        return title(max(covered, key=lambda p: len(p[1]))[0])
    wanted = {s for _, stems in asked for s in stems}
    frequency: dict[str, int] = {}
    for q in quotes:
        for s in {s for _, stems, _ in phrases_of(q, banned) for s in stems}:
            frequency[s] = frequency.get(s, 0) + 1
    for phrase in rank_phrases(quotes, frequency, len(quotes), banned):
        if wanted & set(phrase.stems):
            return title(phrase.text)
    if asked:
        return title(asked[0][0])
    return ANSWER_HEADING


def to_come(cands: Sequence[Candidate], question: str, *, broad: bool = False) -> list[Candidate]:
    """``cands`` with the rule of ``tense.py`` applied: when ``question`` asks about the future
    (``tense.asks_future``), each candidate whose quote speaks only of the past (``tense.past_only``) keeps
    ``tense.PAST_SHARE`` of its relevance, and when it is ``broad`` (plans are all it asks about) each candidate
    stating a plan of its speaker's (``tense.states_plan``) scores at least ``tense.PLAN_SHARE`` × the best;
    otherwise unchanged."""
    if not asks_future(question):
        return list(cands)
    out = [replace(c, relevance=c.relevance * PAST_SHARE) if past_only(c.quote.text) else c for c in cands]
    if not broad or not out:
        return out
    bar = PLAN_SHARE * max(c.relevance for c in out)
    return [replace(c, relevance=bar) if c.relevance < bar and states_plan(c.quote.text) else c for c in out]
