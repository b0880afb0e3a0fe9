"""Referents and requests: sentences a briefing or an observation must not quote as they stand.

A quote is read away from the conversation it came from, so two kinds of sentence do not survive being quoted
alone:

* **Lost referents.** A sentence whose subject is only a third-person pronoun ("She's cutting my mileage for two
  weeks.", "He's great for three kilometres …", "It's yours as soon as I make one …"), a demonstrative standing for
  a noun ("That was the best day of the year."), a possessive with no owner ("His vet says …"), or that refers back
  with "that one" / "this one" ("Beatriz taught me that one early.") says nothing a reader can place. Such a sentence
  is quoted with the sentence before it in the same turn when that sentence is a statement (its antecedent: "My
  physio found the problem. She's cutting my mileage …"), else behind the question the turn answers when the other
  speaker's turn before it asked one (``exchange.py``), else with a photo the turn shares (what "he" is shows in
  it), else — when it opens the turn and the other speaker's turn before ended with news — behind the statement
  of that turn that names it (``exchange.py``: continuations), or not at all (:func:`resolve`). Leading
  conjunctions and fillers ("And she …", "So they …") are skipped when finding the subject. A dummy or
  anticipatory "it" is not a lost referent: "It's six weeks to race day", "It took me a year to finish", "It's
  hard to train on nights" (followed by a number or time word, or by an infinitive "to" / "how" / "since" / "ago"
  clause).
* **Requests.** An imperative addressed to the other person ("Send me pictures of the kitchen …", "Let me know how
  it goes.", "Don't forget your charger.") asks for something; it states no knowledge and is never quoted, like a
  question (:func:`is_request`).

Both are pure functions of one sentence's words; the salience scorer (``salience.py``) calls them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_-]*")

# subject pronouns whose antecedent must be in view (first and second person are the speakers themselves)
THIRD_PERSON = frozenset(
    """he she they it he's she's they're they've they'd they'll he'd she'd he'll she'll it's it'd it'll
    his her their its""".split()
)
DEMONSTRATIVES = frozenset("this that these those that's this's".split())
# a demonstrative stands for a noun (and so needs one in view) when a verb follows it: "That was …", "This is …"
_PRONOUN_VERBS = frozenset(
    """is was are were has had have will would could can might must means meant made makes looked looks sounded
    sounds took takes got gets became""".split()
)
# words that may open a sentence before its subject ("And she said …", "So they …")
_LEADERS = frozenset("and but so then now also plus still anyway besides actually well because or".split())
_BACK_REFERENCE = re.compile(r"\b(?:that|this) one\b(?!\s+(?:of|who|which|that|where|when)\b)", re.IGNORECASE)
# "it" that stands for no noun: weather, time, distance, or an anticipatory subject ("It's hard to …")
_DUMMY_IT = re.compile(
    r"^it(?:'s|’s| is| was| has| had| will| takes| took| feels| felt| seems| seemed)?\b.*?\b(?:to|how|since|ago|"
    r"until|\d+|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|forty|fifty|hundred|"
    r"weeks?|months?|years?|days?|hours?|minutes?|raining|snowing|sunny|cold|hot|warm|late|early)\b",
    re.IGNORECASE,
)
# base-form verbs that open a request to the other person ("Send me …", "Let me know …", "Don't forget …")
REQUEST_VERBS = frozenset(
    """send tell let show give keep bring call text check come remember try say make take pass drop shoot email
    message ping share post save grab join enjoy please don't dont""".split()
)


def _words(sentence: str) -> list[str]:
    return [t.replace("’", "'") for t in _TOKEN.findall(sentence)]


def _subject(words: Sequence[str]) -> tuple[int, str]:
    """The position and lowercased form of the sentence's first word that is not a leading conjunction."""
    for position, word in enumerate(words):
        lower = word.lower()
        if lower not in _LEADERS:
            return position, lower
    return len(words), ""


def needs_referent(sentence: str) -> bool:
    """Whether ``sentence`` (speaker prefix and any opener removed) refers to something it does not name (module
    docstring): a third-person pronoun or a demonstrative pronoun as its subject (a dummy "it" aside), or a "that
    one" / "this one" standing for something said before."""
    words = _words(sentence)
    position, subject = _subject(words)
    if _BACK_REFERENCE.search(sentence):
        return True
    if subject in DEMONSTRATIVES:
        following = words[position + 1].lower() if position + 1 < len(words) else ""
        return subject.endswith("'s") or following in _PRONOUN_VERBS
    if subject not in THIRD_PERSON:
        return False
    # a dummy or anticipatory "it" stands for nothing said before
    return not (subject.startswith("it") and _DUMMY_IT.match(" ".join(words[position:])))


def is_request(sentence: str) -> bool:
    """Whether ``sentence`` is an imperative addressed to the listener (module docstring): it opens (leading
    conjunctions aside) with a base-form request verb written in its plain form — "Send me …", "Let me know …",
    "Please …", "Don't forget …" — and is not a first-person statement that happens to start so ("Made a cake
    today" starts with a past form, which is not in the list)."""
    words = _words(sentence)
    position, subject = _subject(words)
    if subject not in REQUEST_VERBS:
        return False
    # "Let us …" is an exhortation, scored as glue by the salience rules
    return not (subject == "let" and position + 1 < len(words) and words[position + 1].lower() in ("us", "'s"))


def has_antecedent(i: int, referring: Sequence[bool], antecedent: Sequence[bool]) -> int:
    """The index of the sentence of the same turn that names what referring sentence ``i`` refers to — the nearest
    statement before it, back through a chain of referring statements ("He … He …") — or -1 when none does."""
    j = i - 1
    while j >= 0 and referring[j] and antecedent[j]:
        j -= 1  # "He … He …": the chain goes back to the sentence that names him
    return j if j >= 0 and antecedent[j] and not referring[j] else -1


def opens_turn(i: int, referring: Sequence[bool], antecedent: Sequence[bool]) -> bool:
    """Whether sentence ``i`` comes before every statement of its turn that could name something (only greetings,
    reactions, questions or other referring sentences precede it): what its pronoun stands for was said before the
    turn, by the other speaker (``exchange.py``: continuations)."""
    return not any(antecedent[j] and not referring[j] for j in range(i))


def resolve(
    kept: Sequence[int],
    referring: Sequence[bool],
    antecedent: Sequence[bool],
    photo: int,
    *,
    asked: bool = False,
    carried: bool = False,
) -> list[int]:
    """The sentence indices a quote keeps once lost referents are dealt with (module docstring): each kept sentence
    that ``referring`` marks brings the sentences before it back to the nearest ``antecedent`` (a statement that may
    name what it refers to) when there is one in the turn; else it stays when the turn answers a question
    (``asked``: the question, quoted in front, names it — ``exchange.py``), else beside the turn's shared ``photo``
    (its index, -1 when none), which is then kept too; else, when it opens the turn (:func:`opens_turn`) and the
    turn before ended with a statement that can name it (``carried``: quoted in front, ``exchange.said_note``), it
    stays; else it is dropped. Sorted, without repeats."""
    out: set[int] = set()
    for i in kept:
        if not referring[i]:
            out.add(i)
            continue
        j = has_antecedent(i, referring, antecedent)
        if j >= 0:
            out.update(range(j, i + 1))
        elif asked:
            out.add(i)
        elif photo >= 0:
            out.update((i, photo))
        elif carried and opens_turn(i, referring, antecedent):
            out.add(i)
    return sorted(out)
