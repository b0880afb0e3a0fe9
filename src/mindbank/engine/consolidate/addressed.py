"""Talk to the listener: what an observation leaves out of a turn that a briefing may still quote.

A briefing quotes a turn under a standing question, beside other quotes; an observation is read alone, away from the
conversation, as a statement of what the bank knows about someone. So the consolidator holds a turn's sentences to
a stricter bar than the briefing's salience bar (``mindbank.engine.synthesis.salience``), by rules about whom a
sentence is said to and whom it is about:

* **Vocatives are the address, not the content.** A name that addresses the listener — a comma-delimited piece of
  at most :data:`MAX_VOCATIVE_WORDS` words ending in a capitalised word, at the start or the end of a sentence, or a
  single name set off on both sides ("Sam, …", "Alright Sam, …", "Got it Nate, …", "…, Mel.", "Oof, Sam, so
  embarrassing!") — is removed before the sentence is weighed: it names whom the sentence is said to, not anyone it
  is about. A piece with a preposition ("In Paris, …"), a time word ("Last March, …") or a person ("I met Tom,
  …") is a phrase or a clause of the sentence. A leading piece that thanks the listener ("Thanks for the idea, my
  mate and I …") is the address too.
* **An exclamation about no one is a reaction or an exhortation.** A sentence ending in "!" that speaks neither in
  the first person, nor of a third person by a subject pronoun ("They are so sweet!" and "It has great characters!"
  describe what the pronoun stands for), nor names anyone or anything (a capitalised word after its first), nor
  gives a number in digits, reacts to what the other person said ("That's so cool!", "Weddings are definitely full
  of joy!") or urges them ("Cherish those family time moments!", "Have fun with it!"). It is left out.
* **The listener as the subject is the speaker's view of the listener.** A sentence that opens on the listener —
  a second-person word (you, your …) among its first two words — and says nothing in the first person is a
  compliment, encouragement or advice ("You never shy away from a challenge …", "Your hard work will definitely
  start conversations …", "Glad you found a spot that calms you down …", "Maybe you want to …"): it states nothing
  about the speaker and is left out. An impersonal "you" that opens a sentence ("Everywhere you go …") is left out
  with it; text alone does not tell the two apart.
* **A short statement to the listener is conversation, not knowledge.** A statement that mentions the listener and
  says too little to stand alone ("I'll make sure to keep you updated.", "Your support means the world to me.") is a
  promise, a thanks or a compliment; said twice it is a habit of the conversation, not a fact about the speaker. A
  name in it does not make it stand alone (it is often the listener's: "I'd put a GPS sensor on your keys!"). The
  caller (``statements.py``) applies this rule with :func:`to_listener`.

All are pure functions of the text.
"""

from __future__ import annotations

import re

from mindbank.engine.synthesis.referents import THIRD_PERSON
from mindbank.engine.synthesis.salience import (
    ELLIPSIS,
    FIRST_PERSON,
    SECOND_PERSON,
    THANKS,
    TIME_WORDS,
    split_sentences,
)

MAX_VOCATIVE_WORDS = 3
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_-]*")
_PIECES = re.compile(r"\s*,\s*")
_END = re.compile(r"[\s\"')\]”’]*[.!?…]+[\s\"')\]”’]*$")
# a piece with one of these is a phrase of the sentence ("In Paris, …", "For me, …"), not a name said to someone
_PREPOSITIONS = frozenset(
    "in at on to from with for of by near about after before during since until into onto over under like as".split()
)
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"})
# a piece with a person in it has a subject or an object: a clause ("I met Tom"), not a name said to someone
_PHRASE_WORDS = _PREPOSITIONS | TIME_WORDS | FIRST_PERSON | SECOND_PERSON | (THIRD_PERSON - {"it"})
_SUBJECT_REACH = 2  # a subject comes first, or second after a conjunction or an opener ("And they …", "Glad you …")


def _tokens(text: str) -> list[str]:
    return [t.replace("’", "'") for t in _TOKEN.findall(text)]


def _vocative(piece: str) -> bool:
    """Whether a comma-delimited ``piece`` is a name said to the listener (module docstring)."""
    words = _tokens(piece)
    if not words or len(words) > MAX_VOCATIVE_WORDS:
        return False
    last = words[-1]
    if not last[:1].isupper() or last in _NOT_NAMES or last.lower().rstrip("s") in TIME_WORDS:
        return False
    return not any(w.lower() in _PHRASE_WORDS for w in words)


def _thanks(piece: str) -> bool:
    """Whether a comma-delimited ``piece`` thanks the listener ("Thanks for the idea", "Thank you so much")."""
    words = [w.lower() for w in _tokens(piece)]
    return bool(words) and words[0] in THANKS


def without_vocatives(sentence: str) -> str:
    """``sentence`` without the names it addresses the listener by and a leading thanks to them (module docstring),
    its end punctuation kept; unchanged when it has none or is nothing but that, and a photo description ("[shares
    a photo: …]") always."""
    if sentence.startswith("["):
        return sentence
    end = _END.search(sentence)
    tail = end.group(0) if end else ""
    body = sentence[: len(sentence) - len(tail)] if tail else sentence
    pieces = _PIECES.split(body)
    if len(pieces) < 2:
        return sentence
    last = len(pieces) - 1
    kept = [
        p for i, p in enumerate(pieces)
        if not (_vocative(p) and (i in (0, last) or len(_tokens(p)) == 1)) and not (i == 0 and _thanks(p))
    ]  # fmt: skip
    if len(kept) == len(pieces) or not kept:
        return sentence
    text = ", ".join(kept)
    return text[:1].upper() + text[1:] + tail.strip()


def left_out(sentence: str) -> bool:
    """Whether an observation leaves ``sentence`` out (module docstring): the listener is its subject and it has no
    first-person word; or it is an exclamation about no one — it ends with "!", has no first-person word, no
    third-person pronoun for a subject, no name once its vocatives are removed, and no digit."""
    words = _tokens(without_vocatives(sentence))
    if any(w.lower() in SECOND_PERSON for w in words[:_SUBJECT_REACH]) and not any(
        w.lower() in FIRST_PERSON for w in words
    ):
        return True
    if not sentence.rstrip(" \"')”’").endswith("!"):
        return False
    if any(w.lower() in FIRST_PERSON for w in words) or any(ch.isdigit() for ch in sentence):
        return False
    if any(w.lower() in THIRD_PERSON for w in words[:_SUBJECT_REACH]):
        return False  # "They are so sweet!", "It has adventures and magic!": about what the pronoun stands for
    return not any(w[:1].isupper() and w not in _NOT_NAMES for w in words[1:])


def to_listener(text: str) -> bool:
    """Whether ``text`` mentions the listener (a second-person word: you, your, yourself …)."""
    return any(w.lower() in SECOND_PERSON for w in _tokens(text))


def without_addressee(fact_text: str) -> str:
    """``fact_text`` (speaker prefix already removed) without the names it addresses the listener by, sentence by
    sentence (module docstring); sentences joined by one space."""
    return " ".join(without_vocatives(s) for s in split_sentences(fact_text))


def observable(quoted: str) -> str | None:
    """A quote (sentences, " … " where some were left out) without the sentences :func:`left_out` marks; None when
    no sentence of the speaker's is left (a photo description alone says nothing they said). The quote is taken
    first and filtered after, so a sentence left out may still name what a pronoun of the next one stands for."""
    parts = []
    for part in quoted.split(ELLIPSIS):
        kept = [s for s in split_sentences(part) if not left_out(s)]
        if kept:
            parts.append(" ".join(kept))
    spoken = any(not s.startswith("[") for p in parts for s in split_sentences(p))
    return ELLIPSIS.join(parts) if spoken else None
