"""The turn before: a conversation turn is read with the turn it answers or reacts to.

A fact retained from a conversation is one speaker's turn. Three kinds of its sentences only make sense against the
other speaker's turn just before it (:func:`previous_turns` finds it), and both the briefing (``salience.quote``)
and offline consolidation read them by these rules:

* **Reactions.** When the turn before is the other speaker's news (a statement, not a question), a sentence of the
  reply that does not speak in the first person and picks up that news — it names something the news named
  ("Biscuit in a bandana is the real winner here." after "Biscuit and Anjali were waiting at the finish"), or at
  least :data:`REACTION_SHARE` of its own content words (at least two) come from the news ("Fifteen minutes of
  verbs on a nursing break is serious commitment." after "I do fifteen minutes on a language app during my
  break"), or that takes a word from it and names nothing the news did not ("Everyone's first pot should be
  kept." after "My first bowl collapsed into an ashtray"; "The blue is gorgeous." after a photo of a blue mug) —
  is a comment on the other speaker's life, not a fact about the speaker: never quoted as the speaker's own fact
  (:func:`reacts_to`). So is such a sentence that speaks of the news by a third-person pronoun and names nothing of
  its own, when the news told of its speaker's own life in the first person ("Better to find it now than under
  brand new tiles." after "I found damp underneath"; not after a remark such as "Looks like you all had fun!",
  where the pronoun is the reply's own story: "The kids loved it."), and a sentence
  that opens on a name the news used and brings the speaker in only after that clause ("Biscuit the beagle as a
  running partner, that I would like to see.").
* **Answers.** When the turn before ends with a question to the speaker, the reply's sentences are answers to it:
  a sentence whose subject is a pronoun with nothing to stand for in its own turn ("They signed it to show our
  friendship." after "Did they sign it for a special reason?") or that is too short to stand alone ("It's Shia
  Labeouf!" after "Who do those words belong to?") is quoted with the question it answers in front, as an
  editorial note (:func:`asked_note`) — the pronoun only when the question names something
  (:func:`names_something`: "Beatriz taught me that one early." after "Did I say that right?" still says
  nothing a reader can place): ``[Tim asked: "Did they sign it for a special reason?"] They signed it …``.
  A turn ending with a request or exhortation to the speaker ("Keep going after your dreams!") asks for a reply
  the same way (:func:`prompt_of`): "I'm not giving up." is quoted behind it, ``[Gina said: "Keep going after your
  dreams!"] I'm not giving up.`` (:func:`prompt_note`).
* **Continuations.** When the turn before ends with news, a reply whose first statement has only a pronoun for a
  subject ("She sounds like she knows her stuff, I had a coach like that for two years.") continues it: the
  pronoun stands for what the other speaker just said, and the sentence is quoted behind the statement of theirs
  that names it, ``[Priya said: "My physio found the problem."] She …`` (:func:`said_note`; which statement:
  ``salience.quote``). A pronoun after a statement of the reply's own takes that statement instead
  (``referents.py``).

The turn before a fact is the memory of the same ``context`` (one conversation session) at the nearest earlier
moment (``occurred_start``, else ``mentioned_at``; LoCoMo turns are a second apart) within
:data:`TURN_WINDOW_S`, said by another speaker (both texts carry a ``Name:`` prefix); a fact without a context,
a time or a prefix has none. Observations (which carry their facts' contexts, dates and speakers) are no turn
before anything, as in the stores' preceding text and consolidation's turns before; an observation is read with
the turn before the fact it restates, like that fact.
Everything here is a pure function of texts and records.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from datetime import datetime

from mindbank.domain.records import MemoryUnit
from mindbank.domain.text import STOPWORDS, speaker_prefix, strip_speaker
from mindbank.engine.synthesis.referents import is_request

TURN_WINDOW_S = 3600.0  # a memory further back than this (seconds) is not the turn a fact replies to
REACTION_SHARE = 1 / 3  # a reply sentence with this share of its content words from the news comments on it
MAX_QUESTION_WORDS = 30  # a question longer than this is cut (with "…") in the note

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_-]*")
_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself we we're we've we'd we'll our ours us".split())
# a sentence ends after ".", "!" or "?" — not after an initial ("George R. R. Martin's books?", "J.K. Rowling")
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)[\"')\]]*\s+")
_CLAUSE = re.compile(r"[,;:—–]")
# third-person pronouns: in a reply to news with no first-person word, what they stand for is what the news told
_POINTERS = frozenset("it it's its them they they're their he he's him his she she's her".split())
# words a noun follows: what a prompt names something with ("the race", "your sister"; not "that", which may stand
# alone: "Did I say that right?")
_DETERMINERS = frozenset("a an the my your his her our their these those".split())
# the editorial notes' shape (asked_note, prompt_note, said_note), the trailing space included
_NOTE = re.compile(r'^\[(?:[^\]"]+ )?(?:asked|said): ".*?"\] ')


def _word(token: str) -> str:
    word = token.lower().replace("’", "'").removesuffix("'s")
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def _content(text: str) -> set[str]:
    """Lowercased words that are not stopwords (plural ``s`` and possessive dropped): what two turns share."""
    return {w for t in _TOKEN.findall(text) if len(w := _word(t)) > 2 and w not in STOPWORDS}


def _capitalised(text: str) -> set[str]:
    """Capitalised words of ``text`` that are not stopwords nor "I" (a name, or a sentence's first word)."""
    return {_word(t) for t in _TOKEN.findall(text) if t[:1].isupper() and t != "I" and _word(t) not in STOPWORDS}


def _first_person(sentence: str) -> bool:
    return any(t.lower().replace("’", "'") in _FIRST_PERSON for t in _TOKEN.findall(sentence))


def question_of(previous: str) -> str:
    """The question ``previous`` (a turn, its speaker prefix allowed) ends with — its last sentence when that ends
    with "?", a bracketed photo annotation aside — or "" when it ends with a statement."""
    body = re.sub(r"\s*\[[^\]]*\]\s*$", "", strip_speaker(previous)).strip()
    sentences = [s.strip() for s in _SENTENCE.split(body) if s.strip()]
    if not sentences or not sentences[-1].rstrip(" \"')”’").endswith("?"):
        return ""
    return sentences[-1]


def reacts_to(sentence: str, previous: str) -> bool:
    """Whether ``sentence`` (of a reply) is a reaction to the other speaker's news in ``previous`` (module
    docstring): ``previous`` ends with a statement, and the sentence either has no first-person word and names
    something the news names with a capital ("Biscuit"), or speaks of it by a third-person pronoun and names
    nothing the news did not (news in the first person), or takes at least :data:`REACTION_SHARE` (and two) of its
    content words from the news, or takes one and names nothing the news did not (no name, no number), or it opens
    on such a name with no first-person word before its first comma."""
    if not previous or prompt_of(previous):
        return False
    own = _content(sentence)
    news = strip_speaker(previous)
    named = _capitalised(sentence) & _capitalised(news) & own
    if _first_person(sentence):
        # "Biscuit the beagle as a running partner, that I would like to see.": it opens on what the news named,
        # and the speaker comes in only after that clause, to say what they think of it
        tokens = _TOKEN.findall(sentence)
        opener = _word(tokens[0]) if tokens else ""
        return opener in named and not _first_person(_CLAUSE.split(sentence, maxsplit=1)[0])
    if named:
        return True
    # "Better to find it now than under brand new tiles." after "I found damp underneath": it speaks of what the
    # other speaker told of their own life by a pronoun alone, and names nothing of its own (after a remark that
    # tells nothing of its speaker — "The connection to nature must be incredible." — the pronoun is the reply's)
    if any(t.lower().replace("’", "'") in _POINTERS for t in _TOKEN.findall(sentence)) and _tells_own(news):
        return not _own_specifics(sentence, news)
    shared = own & _content(news)
    if len(shared) >= 2 and len(shared) >= REACTION_SHARE * len(own):
        return True
    # "Everyone's first pot should be kept." after "My first bowl collapsed …": it picks up the news and brings
    # nothing of its own (no name or number the news did not give), so it is a comment on it
    return bool(shared) and not _own_specifics(sentence, news)


def _tells_own(news: str) -> bool:
    """Whether ``news`` (a turn's text, no prefix) holds a statement in the first person: news of its speaker's own
    life, not only a remark on the listener's ("Looks like you all had fun!")."""
    body = re.sub(r"\[[^\]]*\]", " ", news)
    return any(_first_person(s) and not s.rstrip().endswith("?") for s in _SENTENCE.split(body))


def _own_specifics(sentence: str, news: str) -> bool:
    """Whether ``sentence`` names something ``news`` does not: a number, or a capitalised word inside it."""
    tokens = _TOKEN.findall(sentence)
    given = _capitalised(news)
    return any(any(ch.isdigit() for ch in t) for t in tokens) or any(
        t[:1].isupper() and t != "I" and _word(t) not in STOPWORDS and _word(t) not in given for t in tokens[1:]
    )


def prompt_of(previous: str) -> str:
    """What ``previous`` (a turn) ends with that asks the speaker for a reply: its question (:func:`question_of`), or
    its last sentence when that is a request or exhortation to the listener ("Keep going after your dreams!",
    ``referents.is_request``); "" when it ends with news."""
    question = question_of(previous)
    if question:
        return question
    body = re.sub(r"\s*\[[^\]]*\]\s*$", "", strip_speaker(previous)).strip()
    sentences = [s.strip() for s in _SENTENCE.split(body) if s.strip()]
    return sentences[-1] if sentences and is_request(sentences[-1]) else ""


def prompt_words(previous: str) -> int:
    """How many content words the question or request ``previous`` ends with holds (:func:`prompt_of`; 0 when it
    ends with news): what a reply borrows from it to stand on its own ("I'm not giving up." after "Keep going
    after your dreams!")."""
    return len(_content(prompt_of(previous)))


def names_something(prompt: str) -> bool:
    """Whether a question or request (``prompt``) names something a reply's pronoun may stand for: a noun after an
    article or possessive ("Does that mean the race is off?", "How are the lessons with Beatriz?"), a capitalised
    word inside it, or a number. A prompt that itself only points back ("Did I say that right?", "What will it
    do?", "Which is?") names nothing, so a reply leaning on it ("Beatriz taught me that one early.") still has
    nothing to stand for."""
    tokens = _TOKEN.findall(prompt)
    return any(
        (t.lower() in _DETERMINERS and i + 1 < len(tokens) and _word(tokens[i + 1]) not in STOPWORDS)
        or (i and t[:1].isupper() and t != "I" and _word(t) not in STOPWORDS)
        or any(ch.isdigit() for ch in t)
        for i, t in enumerate(tokens)
    )


def _note(previous: str, verb: str, said: str) -> str:
    words = said.split()
    if len(words) > MAX_QUESTION_WORDS:
        said = " ".join(words[:MAX_QUESTION_WORDS]) + " …"
    who = speaker_prefix(previous)
    return f'[{who} {verb}: "{said}"] ' if who else f'[{verb}: "{said}"] '


def prompt_note(previous: str) -> str:
    """The editorial note a reply leaning on ``previous`` is quoted behind: :func:`asked_note` for a question,
    ``[Gina said: "Keep going after your dreams!"] `` for a request; "" when ``previous`` ends with news."""
    if question_of(previous):
        return asked_note(previous)
    prompt = prompt_of(previous)
    return _note(previous, "said", prompt) if prompt else ""


def said_note(previous: str, sentence: str) -> str:
    """The editorial note a reply is quoted behind when its pronoun stands for what the other speaker just said:
    ``[Priya said: "My physio found the problem."] `` (``sentence``, a statement of ``previous``, cut to
    :data:`MAX_QUESTION_WORDS` words); "" when ``sentence`` is empty."""
    return _note(previous, "said", sentence) if sentence else ""


def question_words(previous: str) -> int:
    """How many content words the question ``previous`` ends with holds (0 when it ends with a statement): what
    an answer borrows from it to stand on its own."""
    return len(_content(question_of(previous)))


def asked_note(previous: str) -> str:
    """The editorial note an answer is quoted behind: ``[Tim asked: "Did they sign it for a special reason?"] ``
    (the question cut to :data:`MAX_QUESTION_WORDS` words); "" when ``previous`` ends with no question."""
    question = question_of(previous)
    return _note(previous, "asked", question) if question else ""


def split_asked_note(text: str) -> tuple[str, str]:
    """``(note, rest)`` of a quote that opens with an editorial note — :func:`asked_note`, or the ``said`` note of
    :func:`prompt_note` and :func:`said_note` (the note with its trailing space; ``("", text)`` when there is
    none): how a reader of a stored quote tells the question or statement it was said behind from what the
    speaker said."""
    found = _NOTE.match(text)
    return (found.group(0), text[found.end() :]) if found else ("", text)


def listener_of(previous: str) -> str:
    """The other speaker a reply is said to: the ``Name`` of ``previous``'s speaker prefix ("" when unknown). A
    name of theirs in the reply is its address ("I love the thought Nate!"), not something the reply names."""
    return speaker_prefix(previous) or ""


def previous_turns(facts: Iterable[MemoryUnit], pool: Iterable[MemoryUnit]) -> dict[str, str]:
    """Memory id -> the text of the turn before it (module docstring), for each of ``facts`` that has one among
    ``pool`` (the memories it may be found in: the facts themselves count). A turn stored as several facts (one
    moment) is read whole: its pieces joined in the order they were written (``MemoryUnit.seq``), under one speaker
    prefix."""
    moments: dict[str, dict[datetime, dict[str, MemoryUnit]]] = {}
    for memory in pool:
        when = memory.moment
        # an observation carries its fact's context, dates and speaker, but it is no turn: joined to the turn it
        # restates it would bury the question that turn ends with under a statement
        if memory.context and when is not None and speaker_prefix(memory.text) and memory.fact_type != "observation":
            moments.setdefault(memory.context, {}).setdefault(when, {})[memory.id] = memory
    timelines = {context: sorted(slots) for context, slots in moments.items()}
    out: dict[str, str] = {}
    for fact in facts:
        when = fact.moment
        speaker = speaker_prefix(fact.text)
        times = timelines.get(fact.context or "")
        if when is None or not speaker or not times:
            continue
        at = bisect.bisect_left(times, when)  # the fact's own moment, or where it would be
        if at == 0 or (when - times[at - 1]).total_seconds() > TURN_WINDOW_S:
            continue
        # the pieces of one turn share every time: the store's write order (``seq``) is the order they were said in
        pieces = sorted(moments[fact.context or ""][times[at - 1]].values(), key=lambda m: (m.created_at, m.seq, m.id))
        who = {speaker_prefix(m.text) for m in pieces}
        if len(who) == 1 and speaker not in who:
            out[fact.id] = f"{pieces[0].text.split(':', 1)[0]}: " + " ".join(strip_speaker(m.text) for m in pieces)
    return out
