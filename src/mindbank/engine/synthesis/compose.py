"""The extractive composer: a briefing — cited quotes grouped into topics — from a scope's facts, within a budget.

No model writes prose here. A full refresh runs these steps, each in its own module (with the facts' recall scores,
``ScopeRead.relevance``, a narrow question is first answered: ``answer.py`` lifts facts sharing the answer's subject,
drops those under the relative relevance floor, and the most relevant open the document in an answer section; the
steps below then lay out the rest):

1. **Salience** (``salience.py``): every fact is split into sentences; its informative ones are its quote, and a
   fact with nothing informative (questions, reactions, greetings, thanks, small talk) is never quoted.
2. **Breadth** (``selection.py``): quotable facts are taken by maximal marginal relevance over their stored
   embeddings, so the briefing covers many topics; each pick becomes a block (``blocks.py``) holding the newest
   value of what it states (older values shown as "earlier", ``updates.updates``) and every fact that says the
   same thing again (cited in the block, "mentioned N times", ``updates.repeats``). Blocks are taken until
   ``max_tokens`` or :data:`MAX_BLOCKS` is reached.
3. **Topics** (``topics.py``): blocks are clustered into sections titled by a key phrase their facts share, each
   block under a heading whose words it holds (``topics.fits``); sections by weight, blocks within a section by
   date. A full refresh over a document answering the same
   question keeps its layout (``layout.py``): facts still quoted stay under their sections, in their order.
4. Rendering: an intro line, the answer section (when there is one), then ``## heading`` and one block per list
   item. :func:`compose_briefing` also says why each fact it read is not quoted (``Briefing.left_out``).

The delta editor (``delta.py``) reuses steps 1–3 for new facts against an existing document.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from mindbank.domain.document import count_tokens
from mindbank.domain.records import ScoredMemory
from mindbank.engine.synthesis.answer import (
    ANSWER_BAR,
    ANSWER_MAX,
    answer_heading,
    answer_order,
    asks_speech,
    is_broad,
    linked,
    scope_names,
    to_come,
)
from mindbank.engine.synthesis.answer import floor as relevance_floor
from mindbank.engine.synthesis.attribution import about_others
from mindbank.engine.synthesis.blocks import Unit, render_unit
from mindbank.engine.synthesis.layout import follow_layout, layout_of
from mindbank.engine.synthesis.port import ScopeRead
from mindbank.engine.synthesis.selection import Candidate, Vector, candidates, matrix_of, mmr_order, stems
from mindbank.engine.synthesis.topics import cluster, fits, headings, section_count, speaker_names, topic_vectors
from mindbank.engine.synthesis.updates import RELATED_COSINE, REPEAT_COSINE, repeats, updates

# a briefing a person reads through: about eight topics of five points; max_tokens caps it further
MAX_BLOCKS = 40
OTHER_HEADING = "Other notes"  # the blocks of clusters that no title drawn from their own facts fits
BLOCK_SEPARATOR = 2  # tokens the blank line between blocks adds (count_tokens of the rendered document)
HEADING_RESERVE = 8  # tokens set aside per section heading while blocks are chosen
SPLIT_AT = 4  # an untitled cluster this large is split in two and titled again
JOIN_COSINE = 0.6  # a block joins a section whose heading it does not hold this close (raw cosine to its centroid)
MAX_MISSES = 12  # blocks too large for what is left of the budget before the composer stops trying


def intro_line(source_query: str) -> str:
    """The document's first paragraph: the standing question it answers."""
    return f"What the memories say about: {' '.join(source_query.split())}"


def _dated(cand: Candidate) -> datetime:
    """When a fact an update matched happened: the update rule holds only between dated facts, so never None."""
    when = cand.when
    assert when is not None
    return when


@dataclass(slots=True)
class Section:
    """A section being written: its heading and blocks."""

    heading: str
    units: list[Unit]

    @property
    def weight(self) -> float:
        """The sum of its facts' salience (sections are ordered by weight, heaviest first)."""
        return sum(m.quote.salience for u in self.units for m in u.members)


class Pool:
    """The candidates of one refresh with their pairwise cosines, and the facts already used by a block."""

    def __init__(self, cands: Sequence[Candidate]) -> None:
        self.cands = list(cands)
        matrix = matrix_of(self.cands)
        self.sims = matrix @ matrix.T if len(self.cands) else np.zeros((0, 0), dtype=np.float32)
        self.used: set[int] = set()

    def _near(self, i: int, floor: float) -> list[int]:
        return [int(j) for j in np.flatnonzero(self.sims[i] >= floor) if j != i and j not in self.used]

    def unit(self, i: int) -> Unit:
        """The block fact ``i`` opens: the newest value of its attribute as current, the older values as earlier
        (newest first), and the facts that repeat the current; all of them marked used."""
        chain = [i]
        current = i
        while True:
            newer = [j for j in self._near(current, RELATED_COSINE) if j not in chain
                     and updates(self.cands[j], self.cands[current], float(self.sims[current, j]))]  # fmt: skip
            if not newer:
                break
            current = max(newer, key=lambda j: (self.cands[j].when, j))
            chain.append(current)
        older = [j for j in self._near(current, RELATED_COSINE) if j not in chain
                 and updates(self.cands[current], self.cands[j], float(self.sims[current, j]))]  # fmt: skip
        earlier = sorted(set(chain[:-1]) | set(older), key=lambda j: _dated(self.cands[j]), reverse=True)
        taken = {current, *earlier}
        same = [j for j in self._near(current, REPEAT_COSINE) if j not in taken
                and repeats(self.cands[current], self.cands[j], float(self.sims[current, j]))]  # fmt: skip
        self.used.update(taken | set(same))
        return Unit(
            self.cands[current],
            repeats=sorted((self.cands[j] for j in same), key=lambda c: (c.when is None, c.when)),
            earlier=[self.cands[j] for j in earlier],
        )


def block_cost(unit: Unit) -> int:
    """Tokens a block adds to a rendered document."""
    return count_tokens(render_unit(unit)) + BLOCK_SEPARATOR


def select_units(
    pool: Pool, order: Iterable[int], *, budget: int, limit: int = MAX_BLOCKS, headed: bool = False
) -> list[Unit]:
    """Blocks opened by ``order`` (indices into ``pool``) until ``budget`` tokens or ``limit`` blocks are used.
    ``headed``: keep :data:`HEADING_RESERVE` tokens per section the blocks so far would make."""
    units: list[Unit] = []
    used = misses = 0
    for i in order:
        if i in pool.used:
            continue
        unit = pool.unit(i)
        cost = block_cost(unit)
        headings_cost = HEADING_RESERVE * section_count(len(units) + 1) if headed else 0
        if units and used + cost + headings_cost > budget:
            misses += 1
            if misses > MAX_MISSES:
                break
            continue
        units.append(unit)
        used += cost
        if len(units) >= limit:
            break
    return units


def _centroids(groups: Sequence[Sequence[Unit]]) -> Vector:
    rows = []
    for group in groups:
        mean = np.sum([u.current.vector for u in group], axis=0)
        rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
    return np.asarray(rows, dtype=np.float32)


def shown_quotes(unit: Unit) -> list[str]:
    """The quotes a reader sees in a block: the current one and its earlier values (repeats are cited only)."""
    return [unit.current.quote.text, *(c.quote.text for c in unit.earlier)]


def heading_quotes(unit: Unit) -> list[str]:
    """The quotes a heading may rest on: :func:`shown_quotes`, none for a block said to the other speaker
    (``Candidate.listener``): it supports the facts of the person it speaks to, under their headings, and never
    titles a section of its own."""
    return [] if unit.current.listener else shown_quotes(unit)


def _topic_groups(units: Sequence[Unit], k: int) -> list[list[Unit]]:
    vectors = topic_vectors(np.stack([u.current.vector for u in units]), [" ".join(shown_quotes(u)) for u in units])
    return [[units[i] for i in g] for g in cluster(vectors, [u.worth for u in units], k)]


def _title(
    groups: list[list[Unit]], read: ScopeRead, banned: set[str], *, rerank: bool = True, lone: bool = False
) -> tuple[list[str | None], Vector]:
    groups.sort(key=lambda g: -Section("", g).weight)  # the heaviest section titles first
    centroids = _centroids(groups)
    quotes = [[q for u in g for q in heading_quotes(u)] for g in groups]
    embed = read.embed if rerank else None
    return headings(quotes, centroids, banned=banned, embed=embed, lone=lone), centroids


def _titled(
    units: Sequence[Unit], read: ScopeRead, banned: set[str], lone: bool, k: int
) -> tuple[list[Section], list[Unit]]:
    """One pass of :func:`group_sections` over ``k`` clusters: ``(titled sections, blocks no heading fits)``."""
    groups = _topic_groups(units, k)
    # whether a cluster can be titled at all does not depend on the embedding re-rank: find out without it
    titles, _ = _title(groups, read, banned, rerank=False, lone=lone)
    if any(not t and len(g) >= SPLIT_AT for t, g in zip(titles, groups, strict=True)):
        groups = [half for t, g in zip(titles, groups, strict=True)
                  for half in ([g] if t or len(g) < SPLIT_AT else _topic_groups(g, 2))]  # fmt: skip
    titles, _ = _title(groups, read, banned, lone=lone)
    sections: dict[int, Section] = {}
    misfits: list[Unit] = []
    for i, title in enumerate(titles):
        for unit in groups[i]:
            if title and fits(title, heading_quotes(unit)):
                sections.setdefault(i, Section(title, [])).units.append(unit)
            else:
                misfits.append(unit)
    # where a block that fits none of its own cluster's heading goes: the nearest section whose heading it holds,
    # else the nearest section it is close to (what the heading's blocks say, it says in other words)
    near = {i: _centroids([s.units])[0] for i, s in sections.items()}
    rest: list[Unit] = []
    for unit in misfits:
        cosine = {i: float(v @ unit.current.vector) for i, v in near.items()}
        homes = [i for i, s in sections.items() if fits(s.heading, heading_quotes(unit))]
        home = max(homes or [i for i, c in cosine.items() if c >= JOIN_COSINE], key=cosine.__getitem__, default=None)
        if home is None:
            rest.append(unit)
        else:
            sections[home].units.append(unit)
    return list(sections.values()), rest


def group_sections(
    units: Sequence[Unit], read: ScopeRead, banned: set[str], *, lone: bool | None = None
) -> list[Section]:
    """Sections for ``units`` (``topics.py``): clustered and titled. A cluster of four or more blocks that no title
    fits is split in two and each half titled again. A heading rests on two facts: a cluster of one block is not
    titled by it unless ``lone`` (default: when it is the only block). A block sits under a heading it fits
    (``topics.fits``: its quote holds a word of the heading); one that fits none of its cluster's joins the
    nearest titled section it fits, else the nearest one whose fitting blocks it is close to (raw centroid cosine
    ≥ :data:`JOIN_COSINE`: it says the same in other words), else the blocks left over are clustered once more,
    more coarsely (⌈√n⌉ − 1 clusters), and titled (the headings already used set aside), and what is still left
    goes to one :data:`OTHER_HEADING` section at the end. Sections by weight, blocks within a section by date."""
    if not units:
        return []
    lone = len(units) == 1 if lone is None else lone
    ordered, rest = _titled(units, read, banned, lone, section_count(len(units)))
    if len(rest) >= 2:
        used = banned | {w.lower() for s in ordered for w in s.heading.split()}
        # coarser than the first pass (two lone blocks are one cluster), so what they share can title them
        more, rest = _titled(rest, read, used, False, max(1, section_count(len(rest)) - 1))
        ordered += more
    if rest:
        ordered.append(Section(OTHER_HEADING, rest))
    for section in ordered:
        section.units.sort(key=lambda u: (u.current.when is None, u.current.when, u.current.id))
    ordered.sort(key=lambda s: (s.heading == OTHER_HEADING, -s.weight))
    return ordered


def render_sections(intro: str, sections: Sequence[Section]) -> str:
    """The markdown of a briefing."""
    parts = [intro]
    for section in sections:
        parts.append(f"## {section.heading}")
        parts.extend(render_unit(u) for u in section.units)
    return "\n\n".join(parts) + "\n"


def rank_for_document(hits: Sequence[ScoredMemory]) -> list[ScoredMemory]:
    """The quotable hits, most worth quoting first (salience plus relevance; an observation stands for its
    sources, which are left out; a text seen twice is kept once)."""
    cands = candidates(hits)
    return [c.hit for c in sorted(cands, key=lambda c: -c.worth)]


def _order(pool: Pool, ranked: bool) -> Iterator[int]:
    if ranked:
        return iter(range(len(pool.cands)))
    return mmr_order(pool.cands, exclude=pool.used)


@dataclass(slots=True)
class Briefing:
    """A composed briefing: its markdown, the memory ids it cites, and why each other fact it read is not quoted
    (memory id -> reason: :func:`left_out_reasons`)."""

    markdown: str
    cited: list[str]
    left_out: dict[str, str]


NOT_QUOTABLE = "not quotable: a question, reaction or small talk"
NOT_TAKEN = "not taken: a variation of a quoted fact, or over max_tokens"
OBSERVATION = "an observation: its source facts are quoted or left out in its place"


def left_out_reasons(
    hits: Sequence[ScoredMemory],
    cited: Sequence[str],
    quotable: set[str],
    below: Mapping[str, tuple[float, float]],
    others: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Why each fact of ``hits`` that a briefing does not cite is left out: about another person than the question
    asks about (``others``: id -> reason), below the relevance floor (``below``: id -> (its relevance, the
    floor)), not quotable, or not taken by selection."""
    taken = set(cited)
    out: dict[str, str] = {}
    for hit in hits:
        memory_id = hit.memory.id
        if memory_id in taken:
            continue
        if others and memory_id in others:
            out[memory_id] = others[memory_id]
        elif memory_id in below:
            relevance, bar = below[memory_id]
            out[memory_id] = f"below the relevance floor {bar:.2f} (relevance {relevance:.2f})"
        elif memory_id not in quotable:
            out[memory_id] = OBSERVATION if hit.memory.fact_type == "observation" else NOT_QUOTABLE
        else:
            out[memory_id] = NOT_TAKEN
    return out


def compose_markdown(
    *,
    source_query: str,
    hits: Sequence[ScoredMemory],
    max_tokens: int,
    ranked: bool = False,
    read: ScopeRead | None = None,
) -> tuple[str, list[str]]:
    """A briefing answering ``source_query`` from ``hits`` within ``max_tokens`` (:func:`compose_briefing`):
    ``(markdown, cited memory ids)``; ``("", [])`` when nothing is worth quoting."""
    briefing = compose_briefing(source_query=source_query, hits=hits, max_tokens=max_tokens, ranked=ranked, read=read)
    return briefing.markdown, briefing.cited


def compose_briefing(
    *,
    source_query: str,
    hits: Sequence[ScoredMemory],
    max_tokens: int,
    ranked: bool = False,
    read: ScopeRead | None = None,
) -> Briefing:
    """A briefing answering ``source_query`` from ``hits`` within ``max_tokens`` (module docstring).

    ``ranked``: take the hits in the given order instead of by maximal marginal relevance (the reflect answer,
    which ranks them itself). ``read``: the stored vectors, the query's vector, the embedder and the facts' recall
    scores (without them a lexical stand-in is used, headings are not re-ranked by embedding, and without scores
    there is no answer section or relevance floor). Empty markdown when nothing is worth quoting."""
    read = read or ScopeRead()
    cands = candidates(hits, read.vectors, read.query_vector, read.relevance, read.previous, asks_speech(source_query))
    quotable = {c.id for c in cands}
    # a question about one speaker is not answered by what another says about their own life (attribution.py)
    cands, others = about_others(cands, source_query)
    below: dict[str, tuple[float, float]] = {}
    # a broad question is answered by the whole scope: no answer section, no floor, today's topic breadth
    speakers = speaker_names([c.hit.memory.text for c in cands])
    named = scope_names(cands, speakers)
    broad = is_broad(source_query, named)
    if read.relevance and not ranked:
        # a question about plans is answered by what is to come, not by what happened (tense.py)
        cands = to_come(cands, source_query, broad=broad)
    answering = bool(read.relevance) and not ranked and not broad
    if answering:
        cands = linked(cands, [cands[i] for i in answer_order(cands, ANSWER_BAR)], speakers)
        bar = relevance_floor(cands, source_query, named)
        # the answer is the most relevant quotable facts, as /recall's first results are, when they share a word
        # with the question or the best answer (a weak match in a small scope that still answers); the floor
        # decides how far the document reaches beyond them
        order = answer_order(cands)
        topic = stems(source_query) | (stems(cands[order[0]].quote.text) if order else frozenset())
        top = {cands[i].id for i in order[:ANSWER_MAX] if stems(cands[i].quote.text) & topic}
        below = {c.id: (c.relevance, bar) for c in cands if c.relevance < bar and c.id not in top}
        cands = [c for c in cands if c.relevance >= bar or c.id in top]
    if not cands:
        return Briefing("", [], left_out_reasons(hits, [], quotable, below, others))
    pool = Pool(cands)
    intro = intro_line(source_query)
    budget = max(1, max_tokens - count_tokens(intro) - BLOCK_SEPARATOR)
    first: list[Unit] = []
    if answering:
        budget -= HEADING_RESERVE
        first = select_units(pool, iter(answer_order(pool.cands)), budget=budget, limit=ANSWER_MAX)
        budget -= sum(block_cost(u) for u in first)
    rest = select_units(pool, _order(pool, ranked), budget=budget, headed=True, limit=MAX_BLOCKS - len(first))
    banned = speaker_names([c.hit.memory.text for c in cands])
    markdown, sections = _layout(source_query, intro, first, rest, read, banned)
    # headings were only estimated while choosing: drop the least worthy block and regroup (so every heading still
    # rests on its own section's facts) until the render fits; the answer's least relevant block goes last
    while count_tokens(markdown) > max_tokens and len(first) + len(rest) > 1:
        if rest:
            rest.remove(min(rest, key=lambda u: u.worth))
        else:
            first.pop()
        markdown, sections = _layout(source_query, intro, first, rest, read, banned)
    cited = [m.id for s in sections for u in s.units for m in u.members]
    return Briefing(markdown, cited, left_out_reasons(hits, cited, quotable, below, others))


def _layout(
    source_query: str, intro: str, first: list[Unit], rest: list[Unit], read: ScopeRead, banned: set[str]
) -> tuple[str, list[Section]]:
    """The answer section (when there is one) then the topic sections, laid out as the current document is when
    it answers the same question (``layout.py``), rendered."""
    sections: list[Section] = []
    if first:
        heading = answer_heading(source_query, [q for u in first for q in heading_quotes(u)], banned)
        sections.append(Section(heading, list(first)))
        banned = banned | {w.lower() for w in heading.split()}
    # a lone topic block beside an answer section is not titled by a phrase of its own (topics.py)
    sections.extend(group_sections(rest, read, banned, lone=not first and len(rest) == 1))
    current = read.current
    preamble = current.sections[0] if current is not None and current.sections else None
    if preamble is not None and not preamble.heading and [b.text for b in preamble.blocks] == [intro]:
        arranged = follow_layout([(s.heading, s.units) for s in sections], layout_of(current), answering=bool(first))
        sections = [Section(heading, units) for heading, units in arranged]
    return render_sections(intro, sections), sections
