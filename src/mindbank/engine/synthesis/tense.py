"""What is to come: a question about plans, goals or upcoming events is answered by statements about the future.

A plan is an intention or something scheduled — "my plan has me running four days a week", "I'm going to retile
the kitchen before summer", "I signed up for Portuguese lessons" — not something that happened: "After one week of
on-call I could barely find my shoes." says how a past week went, whatever turn of the conversation it sits in.
So when the standing question asks about the future (:func:`asks_future`: "What plans, goals and upcoming events
do they talk about?", "What is Nate planning next?"), a quoted fact that speaks only of the past
(:func:`past_only`: a past-tense verb or past time word, and no word of intention, schedule or future) answers it
less: its relevance is scaled by :data:`PAST_SHARE` (``answer.py``). A fact in the present ("I do my long run on
the second day off") is left alone: a routine is part of a plan. When plans are all such a question asks about (a
broad question: "What plans, goals and upcoming events do they talk about?"), a statement of the speaker's own
intention or schedule (:func:`states_plan`: a sentence in the first person with a word of intention, schedule or
future — "Next is the kitchen, I want to retile it myself before summer.") answers it squarely, whatever words
it shares with the question: its relevance is raised to at least :data:`PLAN_SHARE` of the best (``answer.py``). A
third person's wants are no plan of the speaker's ("then he wants to sniff every lamppost").

Both tests read words only (no parser): a past form is a word in :data:`PAST_WORDS`, or a regular ``-ed`` form of at
least five letters (not in :data:`NOT_PAST`) within two words after a subject pronoun ("I finally started"; "roasted
veg" is an adjective); what escapes: an irregular past form not listed, a regular past after a noun subject ("My
bowl collapsed"), and a past commitment phrased without a listed word ("I got tickets for June" counts as past).
"""

from __future__ import annotations

import re

PAST_SHARE = 0.5  # a past-only fact answers a question about the future at this share of its relevance
PLAN_SHARE = 1.0  # a stated plan answers a broad question about plans as squarely as its best answer

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*")
# words of a question that ask about what is to come
FUTURE_QUESTION = frozenset(
    """plan plans planned planning goal goals aim aims upcoming future next intend intends intention intentions
    ambition ambitions hope hopes hoping will""".split()
)
# words of a statement that speak of what is to come: intention, schedule, commitment, the future itself
FUTURE_WORDS = frozenset(
    """will i'll we'll he'll she'll they'll you'll it'll shall gonna going plan plans planned planning goal goals
    aim aiming want wants wanna hope hoping intend intending next upcoming soon tomorrow tonight future someday
    later decide decided deciding signed sign signing registered register booked book applied apply applying
    enrolled enroll scheduled schedule arranged considering thinking wait looking dream dreams
    until before""".split()
)
# past forms that are not regular "-ed" words (modal and auxiliary pasts included: "could barely", "was")
PAST_WORDS = frozenset(
    """was were had did could went got ran came saw met took made gave found left lost won began bought brought
    caught felt fell flew drove rode ate drank wrote sold sent spent told thought taught heard kept slept swam
    ago yesterday last""".split()
)
FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine we we're we've we'd we'll our ours us".split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# what says a statement is about what is intended or to come (stricter than FUTURE_WORDS, which only spare a fact
# the past-only discount): the future, a plan or goal, a wish or decision to do something, what is next
_PLAN = re.compile(
    r"\b(?:will|\w+'ll|shall|gonna|going to|plan|plans|planning|planned|goal|goals|aim to|aiming to|wants? to|"
    r"wanna|hope to|hoping to|intend|intends|intending|decided to|signed up|upcoming|next (?!to\b)|soon)\b"
)
SUBJECTS = frozenset("i we he she they you".split())  # a regular "-ed" right after one of these is a past verb
NOT_PAST = frozenset("need needed indeed speed exceed proceed succeed hundred seed feed bleed breed".split())


def _words(text: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in _TOKEN.findall(text)]


def asks_future(question: str) -> bool:
    """Whether ``question`` asks about plans, goals or what is to come (a word of :data:`FUTURE_QUESTION`)."""
    return any(w in FUTURE_QUESTION for w in _words(question))


def past_only(text: str) -> bool:
    """Whether ``text`` (a quote) speaks only of the past: a past form or past time word (:data:`PAST_WORDS`, or a
    regular ``-ed`` form within two words after a subject pronoun: "I finally started", "we painted" — not an
    adjective, "roasted veg") and no word of :data:`FUTURE_WORDS` (module docstring)."""
    words = _words(text)
    if any(w in FUTURE_WORDS for w in words):
        return False
    return any(
        w in PAST_WORDS
        or (len(w) >= 5 and w.endswith("ed") and w not in NOT_PAST and SUBJECTS & set(words[max(0, i - 2) : i]))
        for i, w in enumerate(words)
    )


def states_plan(text: str) -> bool:
    """Whether ``text`` (a quote; bracketed notes and photo descriptions aside) states a plan of the speaker's own:
    one of its sentences speaks in the first person and says what is intended or to come (:data:`_PLAN`: "my plan
    has me running four days a week", "Next is the kitchen, I want to retile it myself before summer", "I'll video
    call him"; not "then he wants to sniff every lamppost", nor "a sandwich next to a nurse")."""
    body = re.sub(r"\[[^\]]*\]", " ", text).replace("’", "'").lower()
    return any(set(_words(s)) & FIRST_PERSON and _PLAN.search(s) for s in _SENTENCE.split(body))
