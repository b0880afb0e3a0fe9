"""Salience: how much a sentence says, and which sentences of a fact a briefing quotes.

A briefing quotes at sentence level. A fact (usually one conversation turn) is split into sentences; each is
scored by what it tells a reader who was not there, and only its informative sentences are quoted, never its
questions. The rule: a fact's worth is how much it says — self-disclosure, named
people and places, numbers, dates and times, events (started, finished, moved, adopted, lost, joined, won …) —
minus what marks it as conversation glue: questions, reactions ("That's amazing!"), greetings, thanks and
second-person small talk ("You'll be an awesome mom!"). Relevance to the standing question is added by the
caller (``selection.py``); salience is a property of the text alone, so the delta editor can recompute it from a
document's own quotes.

Score of one sentence (unitless, typically −3 … 6)::

    info       = min(distinct content words, 12) / 3     how much it says at all (0 … 4); chat filler, words
                                                         naming talk itself (news, word, question) and words
                                                         standing for nobody in particular (everyone, someone)
                                                         do not count
  + disclosure = 1.0 if it speaks in the first person   (I, my, we, our …)
  + specifics  = 0.5 per name / number / time word, at most 3 of them
  + event      = 0.75 if it names an event verb          (started, moved, adopted, joined …)
  − glue       = 2.0 greeting, thanks or a bare vocative ("Thanks, Gina."); 1.5 a reaction, interjection or
                 word of sympathy or judgement ("Poor Biscuit …", "Lucky Marta!") without a first-person
                 statement, or second person without first person ("You'll be an awesome mom!"); 1.0 second
                 person beside first person ("I'm proud of you") or an exhortation ("Let's …"); 0.75 a
                 statement opened by a greeting or vocative ("Hey Caroline, since we last chatted, …")

A question (ends with "?") is never quoted whatever it scores. A sentence is quotable when it scores at least
:data:`SENTENCE_BAR` and has at least :data:`MIN_SENTENCE_WORDS` content words — three content words and no glue
make a statement ("The kitchen sink is leaking again.", "Xavier lives in Paris." say enough); of a fact's
quotable sentences a briefing quotes those scoring at least :data:`RELATIVE_BAR` of its best one (a strong
statement is not diluted by the pleasantries around it). Longer, more specific statements score higher, so a
briefing that has to choose quotes them first.
A fact's salience is its best sentence's score plus :data:`EXTRA_SENTENCE_SHARE` of each further quoted one.

A trailing bracketed annotation (``[shares a photo: a painting of a lake]``) is a sentence of its own: what a
photo shows can be what the turn is about. It is quoted beside a quoted sentence of the speaker's, never alone
(a bullet that only describes a picture says nothing the speaker said).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from mindbank.domain.text import STOPWORDS, strip_speaker
from mindbank.engine.synthesis.exchange import (
    names_something,
    prompt_note,
    prompt_of,
    prompt_words,
    reacts_to,
    said_note,
    split_asked_note,
)
from mindbank.engine.synthesis.referents import THIRD_PERSON, has_antecedent, is_request, needs_referent, resolve

SENTENCE_BAR = 1.0
MIN_SENTENCE_WORDS = 3
EXTRA_SENTENCE_SHARE = 0.3
RELATIVE_BAR = 0.7
ELLIPSIS = " … "

_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s+(?=\[[^\]]*\]\s*$)")
_ANNOTATION = re.compile(r"^\[[^\]]*\]$")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’_-]*")
_NUMBER = re.compile(r"^\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s|k|km|kg|am|pm|%)?$", re.IGNORECASE)

FIRST_PERSON = frozenset(
    "i i'm i've i'd i'll me my mine myself we we're we've we'd we'll our ours us ourselves".split()
)
SECOND_PERSON = frozenset("you you're you've you'd you'll your yours yourself yourselves ya u".split())
# interjections and evaluations that open a reaction to what the other person said
REACTIONS = frozenset(
    """wow whoa woah omg aww awww aw haha hahaha lol yay yeah yep yup ooh oh ah ahh hmm congrats congratulations
    cool awesome amazing great nice sweet lovely wonderful fantastic incredible impressive beautiful gorgeous cute
    adorable glad sorry sounds totally definitely absolutely exactly true right agreed ok okay sure well so that's
    that what how neat brilliant perfect""".split()
)
# sympathy, judgement or relish passed on what the other person told ("Poor Biscuit, framed again.", "Lucky Marta, a
# week in Lisbon.", "Ugh, damp.", "Mmm, that sounds delicious, John!"): a reaction, whoever it names, even as an
# opener before a comma
JUDGEMENTS = frozenset(
    "poor lucky ugh ouch yikes phew whew bummer shame pity gosh geez jeez ha hah hooray bravo darn dang mmm mm yum"
    " yummy".split()
)
REACTIONS = REACTIONS | JUDGEMENTS
GREETINGS = frozenset(
    "hi hey hello hiya howdy bye goodbye cya morning evening night later care soon chat catch".split()
)
THANKS = frozenset("thanks thank thx ty appreciate appreciated appreciation".split())
EXHORTATIONS = frozenset("let's lets let".split())  # "Let's keep motivating each other!"
# words that carry no content of their own in chat (beyond the stopword list): evaluations, fillers, chat verbs
FILLER = (
    frozenset(
        """really yeah yes no oh hey hi wow lol haha gonna wanna gotta kinda sorta totally super pretty lots lot
    awesome amazing great good nice cool sweet lovely wonderful fantastic incredible thing things stuff
    glad happy sure okay ok thanks thank hear heard sounds sound seems seem looks look wait can't cannot
    always never ever still even well much many every everything something anything nothing""".split()
    )
    | frozenset(
        # words that name talk itself: a sentence made of them announces or remarks on what is said without saying
        # anything ("I have news too, two things actually.", "Obrigado is the only word I know.")
        "news word words question questions update updates announcement".split()
    )
    | frozenset(
        # words that stand for nobody in particular: a remark about "everyone" states no fact about anyone ("Everyone
        # has an opinion about my floor.", "Everyone asks that!")
        "everyone everybody someone somebody anyone anybody nobody".split()
    )
)
EVENT_VERBS = frozenset(
    """start started starting begin began begun finish finished finishing complete completed move moved moving
    adopt adopted adopting lose lost join joined joining win won winning graduate graduated graduating marry
    married engaged divorce divorced quit hired promoted launch launched launching open opened sign signed visit
    visited visiting travel traveled travelled traveling travelling attend attended volunteer volunteered
    volunteering paint painted write wrote written publish published run ran race raced competed compete
    perform performed taught teach teaching learn learned learnt learning plan planned planning decide decided
    buy bought sell sold build built create created make made retire retired born died passed diagnosed
    recovered injured broke break apply applied accepted rejected received receive got get enroll enrolled
    enrolling study studied studying train trained training organize organized organised hosted host
    celebrated celebrate went go going gone took take taking gave give giving found founded invest invested""".split()
)
TIME_WORDS = frozenset(
    """yesterday today tonight tomorrow ago since weekend week weeks month months year years decade summer winter
    spring autumn fall season monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december birthday anniversary christmas holiday
    holidays morning afternoon evening recently lately soon""".split()
)
NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred
    thousand million first second third fourth fifth half dozen couple""".split()
)
# set phrases of chat that carry no content whatever their words ("Long time no talk!", "Take care!")
_IDIOM = re.compile(
    r"^\W*(?:long time no (?:see|talk|chat)|what'?s up|how (?:are|have) you|how'?s it going|see (?:you|ya)|talk "
    r"(?:soon|later)|take care|good luck|no worries|my pleasure|you'?re welcome|catch you|have a (?:good|great|nice))",
    re.IGNORECASE,
)
# a pronoun and verb that open a statement naming someone or something ("It's Shia Labeouf!"), not an address
_NAMING = frozenset("it's that's he's she's they're this's".split())
_PRONOUNS = THIRD_PERSON | frozenset("him them".split())  # what stands for something named elsewhere
# words that, capitalised mid-sentence, are still not names
_NOT_NAMES = FIRST_PERSON | SECOND_PERSON | frozenset({"I", "OK", "Ok", "LOL", "OMG"})


@dataclass(frozen=True, slots=True)
class SentenceScore:
    """One sentence and what it says: ``score`` (see the module docstring), its content-word count, and whether
    it is a question or glue (scored down for glue; a question is never quoted)."""

    text: str
    score: float
    content_words: int
    question: bool
    glue: bool
    plain_words: int = 0  # words that are not stopwords, the opener included
    request: bool = False  # an imperative to the listener ("Send me pictures …"): never quoted
    referring: bool = False  # its subject is a pronoun standing for something it does not name (``referents.py``)

    @property
    def quotable(self) -> bool:
        """Whether a briefing may quote this sentence (a referring one only with its antecedent: :func:`quote`)."""
        return (
            not self.question
            and not self.request
            and self.score >= SENTENCE_BAR
            and self.content_words >= MIN_SENTENCE_WORDS
        )

    @property
    def antecedent(self) -> bool:
        """Whether this sentence may name what a following pronoun refers to: a statement (not a question, request
        or glue) of at least two words that are not stopwords ("My physio found the problem.", not "Not yet." nor
        "Congrats on finishing your degree!")."""
        return not self.question and not self.request and not self.glue and self.score >= 0 and self.plain_words >= 2


@dataclass(frozen=True, slots=True)
class Quote:
    """What a briefing quotes of a fact: ``text`` (its quotable sentences verbatim, in order, joined by " … "
    where sentences were left out), the fact's ``salience`` and how many of its words are not stopwords."""

    text: str
    salience: float
    content_words: int


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (speaker prefix already removed): split after ``.``, ``!`` or ``?`` and before a
    trailing ``[...]`` annotation; empty pieces dropped."""
    return [s.strip() for s in _SPLIT.split(text.strip()) if s and s.strip()]


def _tokens(sentence: str) -> list[str]:
    return _TOKEN.findall(sentence.replace("’", "'"))


def _plain(tokens: list[str]) -> list[str]:
    out = []
    for token in tokens:
        word = token.lower().strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) > 1 and word not in STOPWORDS:
            out.append(word)
    return out


def plain_words(text: str) -> list[str]:
    """Words that are not stopwords: lowercased, possessive ``'s`` dropped (what the thin-bullet rule counts)."""
    return _plain(_tokens(text))


def content_words(text: str) -> list[str]:
    """Words that carry content: :func:`plain_words` that are not chat filler either ("awesome", "stuff")."""
    return [w for w in plain_words(text) if w not in FILLER]


def _names(tokens: list[str]) -> int:
    """Capitalised words after the first token (a sentence's first word is capitalised anyway)."""
    return sum(1 for t in tokens[1:] if t[:1].isupper() and t not in _NOT_NAMES and t.lower() not in STOPWORDS)


def _opener_length(sentence: str) -> int:
    """How many leading tokens are an opener — greeting, thanks, interjection or vocative ("Hey Gina,",
    "Wow, Caroline,") — ended by a comma or dash; 0 when the sentence does not open that way."""
    head = re.split(r"[,;:—–]|\s-\s", sentence, maxsplit=1)
    if len(head) < 2:
        return 0
    words = _tokens(head[0])
    glue = GREETINGS | THANKS | REACTIONS
    openers = all(w.lower() in glue or w.lower() in STOPWORDS or w[:1].isupper() for w in words)
    return len(words) if words and openers and any(w.lower() in glue for w in words) else 0


def score_sentence(sentence: str) -> SentenceScore:
    """Score one sentence (module docstring). A leading opener ("Hey Gina,") is glue of its own: the rest of the
    sentence is scored as if it stood alone, and only a sentence that is nothing but glue is scored down as such."""
    all_tokens = _tokens(sentence)
    opened = _opener_length(sentence)
    tokens = all_tokens[opened:]
    lower = [t.lower() for t in tokens]
    plain = _plain(all_tokens)
    # distinct words: a caption saying "wooden floor" twice says no more than once
    words = list(dict.fromkeys(w for w in _plain(tokens) if w not in FILLER))
    question = sentence.rstrip(" \"')”’").endswith("?")
    first = any(w in FIRST_PERSON for w in lower)
    second = any(w in SECOND_PERSON for w in lower)
    opener = lower[0] if lower else ""
    specifics = _names(tokens) + sum(1 for t in lower if _NUMBER.match(t) or t in NUMBER_WORDS or t in TIME_WORDS)
    score = min(len(words), 12) / 3
    score += 1.0 if first else 0.0
    score += 0.5 * min(specifics, 3)
    score += 0.75 if any(w in EVENT_VERBS for w in lower) else 0.0
    glue = 0.0
    # "Thanks, Gina." is only an address; "It's Shia Labeouf!" names someone as a statement (a subject and verb)
    vocative_only = all(t[:1].isupper() or t.lower() in STOPWORDS for t in tokens) and not (
        len(tokens) > 1 and lower[0].replace("’", "'") in _NAMING
    )
    judged = any(t.lower() in JUDGEMENTS for t in all_tokens[:opened])  # "Poor Biscuit, …", "Lucky Marta, …"
    if vocative_only or opener in GREETINGS or opener in THANKS or (opener == "good" and lower[1:2] == ["night"]):
        glue = 2.0
    elif ((opener in REACTIONS or judged) and not (first and len(words) >= MIN_SENTENCE_WORDS)) or (
        second and not first
    ):
        glue = 1.5
    elif second or opener in EXHORTATIONS:
        glue = 1.0
    elif opened:
        glue = 0.75  # "Hey Caroline, since we last chatted, …": framed as talk to the other person
    if _IDIOM.search(sentence):
        glue = max(glue, 2.0)
    rest = " ".join(tokens)
    return SentenceScore(
        sentence, score - glue, len(words), question, glue > 0, len(plain), is_request(rest), needs_referent(rest)
    )


@lru_cache(maxsize=65536)
def quote(fact_text: str, previous: str = "", advice: bool = False) -> Quote | None:
    """The quotable part of a fact (module docstring), or None when it has nothing worth quoting. A pure function
    of the text, cached: every refresh of a scope quotes the same facts again.

    ``previous``: the other speaker's turn just before this one (``exchange.previous_turns``; "" when unknown). A
    sentence reacting to the news it told is not quoted (``exchange.reacts_to``); when it ended with a question
    or a request, a sentence answering it may lean on it — a pronoun subject with nothing to stand for in its own
    turn, or fewer than :data:`MIN_SENTENCE_WORDS` content words of its own that the question's make up — and the
    quote then opens with it as an editorial note (``exchange.prompt_note``); when it ended with news, a pronoun
    subject opening this turn stands for what it said, and the quote opens with the statement of it that names
    it (:func:`previous_antecedent`, ``exchange.said_note``).

    ``advice``: the standing question asks what someone said, told or advised (``answer.asks_speech``), so a
    request or exhortation to the listener that otherwise passes the bar ("But remember, it's important to believe
    in yourself …") is what it asks for, and is quoted like a statement."""
    sentences = split_sentences(strip_speaker(fact_text))
    scored = [score_sentence(s) for s in sentences]
    if advice:
        scored = [replace(s, request=False) for s in scored]
    borrowed = prompt_words(previous)
    said = previous_antecedent(previous)
    # what the other speaker just said decides what a reply's sentences are: reactions to it, or answers to it
    reaction = [bool(previous) and not _ANNOTATION.match(t) and reacts_to(t, previous) for t in sentences]
    short = [
        bool(borrowed) and not s.quotable and s.content_words >= 1 and s.content_words + borrowed >= MIN_SENTENCE_WORDS
        and not s.question and not s.request and s.score >= SENTENCE_BAR
        for s in scored
    ]  # fmt: skip
    kept = [i for i, s in enumerate(scored) if (s.quotable or short[i]) and not reaction[i]]
    # an attachment's description ("[shares a photo: …]") is quoted beside what the speaker said, never alone
    spoken = [i for i in kept if not _ANNOTATION.match(sentences[i])]
    if not spoken:
        return None
    best = max(scored[i].score for i in kept)
    kept = [i for i in kept if scored[i].score >= RELATIVE_BAR * best]
    if not any(i in spoken for i in kept):  # the description outscored every sentence: the best one stands beside it
        kept = sorted([max(spoken, key=lambda i: scored[i].score), *kept])
    # a pronoun subject comes with the sentence that names what it stands for, or behind the question it answers,
    # or beside the photo, or not at all
    photo = max((i for i, s in enumerate(sentences) if _ANNOTATION.match(s)), default=-1)
    referring = [s.referring for s in scored]
    antecedent = [s.antecedent for s in scored]
    # a question that only points back itself ("Did I say that right?") names nothing a pronoun could stand for
    asked = bool(borrowed) and names_something(prompt_of(previous))
    kept = resolve(kept, referring, antecedent, photo, asked=asked, carried=bool(said))
    spoken = [i for i in kept if not _ANNOTATION.match(sentences[i])]
    if not spoken:
        return None
    lost = any(referring[i] and has_antecedent(i, referring, antecedent) < 0 for i in kept)
    best = max(scored[i].score for i in kept)
    parts: list[str] = []
    if borrowed and (lost or any(short[i] for i in kept)):
        parts.append(prompt_note(previous).strip())
    elif said and lost and photo not in kept:
        parts.append(said_note(previous, said).strip())
    for position, i in enumerate(kept):
        if position and i != kept[position - 1] + 1:
            parts.append(ELLIPSIS.strip())
        parts.append(sentences[i])
    text = " ".join(parts)
    words = sum(scored[i].plain_words for i in kept)
    salience = best + EXTRA_SENTENCE_SHARE * (sum(max(scored[i].score, 0.0) for i in kept) - best)
    return Quote(text, salience, words)


def previous_antecedent(previous: str) -> str:
    """The statement of ``previous`` (the other speaker's turn before a reply) that a pronoun opening the reply
    stands for: back from its end past greetings, reactions and photo descriptions, the nearest statement that may
    name something (:attr:`SentenceScore.antecedent`), back through a chain of referring statements to the one
    that names it ("I adopted a kitten named Luna. She sleeps all day. So cute!" -> "I adopted a kitten named
    Luna."). "" when ``previous`` is empty, ends with a question or request (``exchange.prompt_of``: the reply
    answers that instead) or holds no such statement, or when that statement has a third-person pronoun of its
    own ("I would drink tea from it.": it names nothing either)."""
    if not previous or prompt_of(previous):
        return ""
    sentences = [s for s in split_sentences(strip_speaker(previous)) if not _ANNOTATION.match(s)]
    scored = [score_sentence(s) for s in sentences]
    end = len(scored)
    while end and not scored[end - 1].antecedent:
        end -= 1  # trailing glue ("So cute!") names nothing
    if not end:
        return ""
    j = has_antecedent(end, [s.referring for s in scored], [s.antecedent for s in scored])
    # a statement that itself says "it" or "them" ("I would drink tea from it.") does not name what "it" is
    if j < 0 or any(t.lower().replace("’", "'") in _PRONOUNS for t in _tokens(sentences[j])):
        return ""
    return sentences[j]


def plain_quote(fact_text: str) -> Quote | None:
    """A fact's best plain statement when :func:`quote` finds nothing quotable: the highest-scoring sentence that
    is neither a question nor glue (score at least 0) and says at least one content word — "I am learning the
    cello." falls under the three-word bar but is what a scope of a few short facts has to say. None when the fact
    is only questions, greetings or reactions. Used by the briefing only when no fact of the scope is quotable."""
    sentences = split_sentences(strip_speaker(fact_text))
    scored = [score_sentence(s) for s in sentences]
    plain = [
        i for i, s in enumerate(scored)
        if not s.question and not s.request and not s.referring and s.score >= 0 and s.plain_words >= 1
        and not _ANNOTATION.match(sentences[i])
    ]  # fmt: skip
    if not plain:
        return None
    best = max(plain, key=lambda i: scored[i].score)
    return Quote(sentences[best], scored[best].score, scored[best].plain_words)


def salience(fact_text: str) -> float:
    """A fact's salience (0.0 when it has nothing quotable)."""
    found = quote(fact_text)
    return found.salience if found else 0.0


def speaks_to_listener(quote_text: str) -> bool:
    """Whether a quote (:func:`quote`'s text) speaks to the listener: what the speaker said holds a second-person
    word ("Trying new classes sounds like a fun way to switch up your exercise routine"), an editorial note in
    front of it (the other speaker's question, ``exchange.split_asked_note``) aside. Such a sentence is about the
    listener's life as much as the speaker's: a briefing shows whom it was said to (``blocks.py``)."""
    _, said = split_asked_note(quote_text)
    return any(t.lower() in SECOND_PERSON for t in _tokens(said))


def without_opener(sentence: str) -> str:
    """``sentence`` without a leading opener — greeting, thanks, interjection or vocative ended by a comma or dash
    ("Hey Maria, since we last chatted, I volunteer …" -> "Since we last chatted, I volunteer …"), its first letter
    capitalised; unchanged when it has none or is nothing else."""
    opened = _opener_length(sentence)
    if not opened:
        return sentence
    head = re.split(r"[,;:—–]|\s-\s", sentence, maxsplit=1)
    rest = head[1].lstrip(" ,;:—–-") if len(head) == 2 else ""
    return rest[:1].upper() + rest[1:] if rest else sentence
