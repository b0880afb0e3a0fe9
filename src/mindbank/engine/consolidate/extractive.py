"""The extractive consolidator: informative facts become attributed, dated observations; repeats merge, updates
keep history (no model).

Per new fact, in order (spec "Automatic Refresh"; reference facts §6 — observations are the consolidated,
deduplicated statements of a bank, each with its proof):

* a fact with nothing quotable — greetings, thanks, questions, reactions, by the briefing's salience bar read with
  the other speaker's turn before it (:func:`mindbank.engine.consolidate.statements.stated`: a reaction to that
  turn's news states nothing, an answer to its question carries the question) — forms no observation and is
  marked consolidated;
* otherwise it is compared with the observations of its scope (those stored and those formed earlier in the round),
  nearest first by cosine, with the briefing's rules (:mod:`mindbank.engine.synthesis.updates`): a *repeat* (the
  same statement in other words, or a paraphrase: cosine ≥ :data:`PARAPHRASE_COSINE` with the same numbers and no
  update either way) joins the observation — one more source, proof + 1, its newest mention; an
  *update* (a later value of the attribute it states) makes the observation state the new value with the new
  fact's dates and keep the earlier statement as history (the stored row is replaced: deleted and written anew);
* a fact that repeats or updates nothing forms its own observation (proof 1) — when its statement stands alone;
  a short one (fewer than six content words and no name or number) needs a second witness: an earlier fact of the
  scope saying the same (one of its neighbours from the vector index, or a fact earlier in the round), with which
  it forms an observation (proof 2, the earlier wording).

Observation writes per round are bounded by the round's facts: at most one create or update per fact and scope.
When sources of an observation are gone (deleted, or sent back by an edit), :meth:`ExtractiveConsolidator.plan`
retells it from what remains (``lost``): a statement whose fact is gone is replaced by the newest remaining
source's, and history entries whose fact is gone are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.engine.consolidate.plan import ConsolidationPlan, Neighbours, ObservationScopes, in_scope, scope_keys
from mindbank.engine.consolidate.statements import (
    Statement,
    day,
    names,
    numbers,
    speaker_of,
    split_history,
    stated,
    statement,
    with_history,
)
from mindbank.engine.synthesis.updates import RELATED_COSINE, repeats, updates

COMPARED = 5  # nearest related observations a fact is compared with
# MiniLM cosine of whole statements above which two statements by one speaker that update nothing are one: on the
# labelled set (bench/data/consolidation_labels.json) paraphrases score 0.90–0.98, different facts on one topic
# at most 0.83
PARAPHRASE_COSINE = 0.9


@dataclass(slots=True)
class _Draft:
    """An observation being built, grown or restated in this round."""

    scope: tuple[str, ...]
    current: Statement
    history: list[tuple[str, str]]
    sources: list[str]
    proof: int
    existing: MemoryUnit | None = None
    restated: bool = False  # its statement, dates or history changed: the stored row is replaced
    grown: bool = False


def _text(fact: MemoryUnit, previous: Mapping[str, str]) -> str | None:
    """What ``fact`` states (:func:`~mindbank.engine.consolidate.statements.stated`, read with the turn before it
    in ``previous``), standing alone or not."""
    found = stated(fact.text, previous.get(fact.id, ""))
    return found[0] if found is not None else None


def _apart(a: Statement, b: Statement) -> tuple[frozenset[str], frozenset[str]]:
    """The names only ``a`` gives and those only ``b`` gives. Both non-empty: the two are not one statement said
    twice; more than one on either side: not one value changed either ("My sister Clara lives in Lisbon" / "My
    brother Paul lives in Porto")."""
    mine, theirs = names(a.quoted.text), names(b.quoted.text)
    return mine - theirs, theirs - mine


def _paraphrase(newer: Statement, older: Statement, cosine: float) -> bool:
    """The same statement in other words although the repeat rule's marks differ ("every Thursday" / "on
    Thursdays", "learning" / "studying"): cosine at least :data:`PARAPHRASE_COSINE`, the same numbers, and an
    update in neither direction (two values of one attribute are never one statement)."""
    if cosine < PARAPHRASE_COSINE or newer.candidate.speaker != older.candidate.speaker:
        return False
    if numbers(newer.quoted.text) != numbers(older.quoted.text):
        return False
    mine, theirs = newer.candidate, older.candidate
    return not updates(mine, theirs, cosine) and not updates(theirs, mine, cosine)


class ExtractiveConsolidator:
    """Informative facts to observations, repeats merged, updates with history (module docstring)."""

    def plan(
        self,
        facts: Sequence[MemoryUnit],
        vectors: dict[str, np.ndarray],
        observations: Sequence[MemoryUnit],
        scopes: ObservationScopes,
        neighbours: Neighbours | None = None,
        lost: Mapping[str, Sequence[MemoryUnit]] | None = None,
        previous: Mapping[str, str] | None = None,
    ) -> ConsolidationPlan:
        """Creates, updates and replacements for a batch of pending ``facts`` (module docstring). ``vectors`` holds
        the facts', the observations', the neighbours' and the ``lost`` sources' embeddings; ``lost``: per
        observation that lost sources, the source facts it still has; ``neighbours``: per fact, earlier consolidated
        facts, the second witnesses a short statement may form an observation with; ``previous``: memory id -> the
        other speaker's turn just before it (``exchange.previous_turns``), for the facts, neighbours and remaining
        sources that have one — each is read with it (``statements.stated``)."""
        turns = previous or {}
        pools: dict[tuple[str, ...], list[_Draft]] = {}
        wanted = {scope for fact in facts for scope in scope_keys(fact.tags, scopes)}
        for obs in observations:
            if obs.tags not in wanted and obs.id not in (lost or {}):
                continue  # a scope no fact of this round belongs to: nothing to compare or retell
            draft = self._stored(obs, vectors, (lost or {}).get(obs.id), turns)
            if draft is not None:
                pools.setdefault(obs.tags, []).append(draft)
        singles: dict[tuple[str, ...], list[Statement]] = {}  # short statements of this round with no observation
        for fact in facts:
            vector, found = vectors.get(fact.id), stated(fact.text, turns.get(fact.id, ""))
            said = statement(fact, found[0], vector) if vector is not None and found is not None else None
            if said is None or found is None:
                continue
            for scope in scope_keys(fact.tags, scopes):
                twins = self._short(fact, scope, scopes, neighbours or {}, vectors, turns)
                earlier = [*singles.get(scope, []), *twins]
                if not self._place(fact, said, pools.setdefault(scope, []), scope, alone=found[1], witnesses=earlier):
                    singles.setdefault(scope, []).append(said)
        return self._plan([d for pool in pools.values() for d in pool])

    @staticmethod
    def _short(
        fact: MemoryUnit, scope: tuple[str, ...], scopes: ObservationScopes, neighbours: Neighbours,
        vectors: dict[str, np.ndarray], previous: Mapping[str, str],
    ) -> list[Statement]:  # fmt: skip
        """The fact's earlier neighbours of ``scope`` (consolidated facts from the vector index) as statements."""
        out: list[Statement] = []
        for twin, _ in neighbours.get(fact.id, ()):
            vector, found = vectors.get(twin.id), stated(twin.text, previous.get(twin.id, ""))
            if vector is not None and found is not None and in_scope(twin, scope, scopes):
                said = statement(twin, found[0], vector)
                if said is not None:
                    out.append(said)
        return out

    @staticmethod
    def _stored(
        obs: MemoryUnit, vectors: dict[str, np.ndarray], remaining: Sequence[MemoryUnit] | None,
        previous: Mapping[str, str],
    ) -> _Draft | None:  # fmt: skip
        """A stored observation as a draft; retold from its ``remaining`` sources when some were lost."""
        vector = vectors.get(obs.id)
        if vector is None:
            return None
        current, history = split_history(obs.text)
        sources = list(obs.source_memory_ids or ())
        said = statement(obs, current, vector)
        draft = _Draft(obs.tags, said, history, sources, obs.proof_count or 1, existing=obs) if said else None
        if remaining is None:
            return draft
        says = {_text(s, previous): s for s in remaining}
        kept_history = [(when, text) for when, text in history if any(
            s is not None and s.endswith(text) for s in says)]  # fmt: skip
        if current in says:
            if draft is not None and kept_history != history:
                draft.history, draft.restated = kept_history, True
            return draft
        # the fact the observation stated is gone: the newest remaining source states it now
        newest = max(remaining, key=lambda s: (s.moment is not None, s.moment or 0, s.created_at))
        text, vector = _text(newest, previous), vectors.get(newest.id)
        retold = statement(newest, text, vector) if text is not None and vector is not None else None
        if retold is None:
            return draft
        history = [(when, said_) for when, said_ in kept_history if not (text or "").endswith(said_)]
        return _Draft(obs.tags, retold, history, sources, obs.proof_count or 1, existing=obs, restated=True)

    @staticmethod
    def _place(
        fact: MemoryUnit, said: Statement, pool: list[_Draft], scope: tuple[str, ...], *, alone: bool,
        witnesses: Sequence[Statement] = (),
    ) -> bool:  # fmt: skip
        """Join ``fact`` to the observation it repeats, make it update the one whose value it changes, or start a
        new observation when its statement stands ``alone`` or one of its ``witnesses`` (earlier short statements
        of the scope) says the same. Returns whether the fact is now a source of an observation."""
        if pool:
            scores = np.asarray([float(d.current.vector @ said.vector) for d in pool])
            order = [int(i) for i in np.argsort(-scores)[:COMPARED] if scores[i] >= RELATED_COSINE]
            mine = said.candidate
            for i in order:
                draft, cosine = pool[i], float(scores[i])
                theirs = draft.current.candidate
                mine_only, theirs_only = _apart(said, draft.current)
                if mine_only and theirs_only and (len(mine_only) > 1 or len(theirs_only) > 1):
                    continue  # another person or place besides the value: another statement, and no update
                if not (mine_only and theirs_only) and (
                    repeats(mine, theirs, cosine) or _paraphrase(said, draft.current, cosine)
                ):
                    if fact.id not in draft.sources:
                        draft.sources.append(fact.id)
                        draft.proof += 1
                        draft.grown = True
                    return True
                if updates(mine, theirs, cosine):
                    earlier = draft.current.unit.text
                    speaker = speaker_of(earlier)
                    earlier = earlier[len(speaker) + 2 :] if speaker else earlier
                    draft.history.insert(0, (day(draft.current.unit.moment), earlier))
                    draft.current = said
                    draft.sources.append(fact.id)
                    draft.proof += 1
                    draft.restated = True
                    return True
        if alone:
            pool.append(_Draft(scope, said, [], [fact.id], 1))
            return True
        # a short statement needs a second witness: an earlier short fact of the scope saying the same
        for twin in witnesses:
            if twin.unit.id == fact.id or any(twin.unit.id in d.sources for d in pool):
                continue
            cosine = float(twin.vector @ said.vector)
            if repeats(said.candidate, twin.candidate, cosine) or _paraphrase(said, twin, cosine):
                pool.append(_Draft(scope, twin, [], [twin.unit.id, fact.id], 2))
                return True
        return False

    @staticmethod
    def _plan(drafts: Sequence[_Draft]) -> ConsolidationPlan:
        plan = ConsolidationPlan()
        for draft in drafts:
            if draft.existing is not None and not draft.restated:
                if draft.grown or len(draft.sources) != len(draft.existing.source_memory_ids or ()):
                    plan.updates.append((draft.existing.id, tuple(draft.sources), draft.proof))
                continue
            if draft.existing is not None:
                plan.deletes.append(draft.existing.id)
                plan.successors.append((draft.existing.id, len(plan.creates)))
            unit = draft.current.unit
            plan.creates.append(
                NewMemory(
                    text=with_history(unit.text, draft.history), fact_type="observation",
                    embedding=draft.current.vector, tags=draft.scope, context=unit.context, metadata={},
                    document_id=None, chunk_id=None, occurred_start=unit.occurred_start,
                    occurred_end=unit.occurred_end, mentioned_at=unit.mentioned_at,
                    source_memory_ids=tuple(draft.sources), proof_count=draft.proof,
                )
            )  # fmt: skip
        return plan
