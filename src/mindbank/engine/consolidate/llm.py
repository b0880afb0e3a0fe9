"""``LLMConsolidator``: the ``engine.consolidate.Consolidator`` port backed by an LLM (reference facts §6).

Per observation scope, pending facts go to the model in batches of ``BATCH_SIZE`` together with the scope's most
related existing observations and the earlier, already consolidated facts nearest to them (the round's neighbours:
a new observation may rest on an earlier fact and a new one, so facts arriving one retain at a time still meet);
it answers JSON ``{creates: [{text, source_fact_ids}], updates: [{observation_id,
source_fact_ids, text?}], deletes: [{observation_id}]}``: a new observation stated in its own words from two or
more facts; existing observations that the facts confirm (sources and proof count grow) and, with ``text``, restate
(the new facts refine or correct them); observations the new facts show to be wrong or superseded, deleted.
Ids outside the batch or the scope are dropped; a fact no operation names is simply consolidated, as with the
extractive consolidator. Rewriting or deleting an observation is a memory write: mental models citing it go stale.
A reply that is not JSON or does not fit the schema falls back to the extractive consolidator for that batch
(nothing lost); transient provider errors propagate so the worker retries the consolidation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mindbank.domain.records import MemoryUnit, NewMemory
from mindbank.engine.consolidate.extractive import ExtractiveConsolidator
from mindbank.engine.consolidate.plan import ConsolidationPlan, Neighbours, ObservationScopes, in_scope, scope_keys
from mindbank.engine.synthesis.structured import schema_problems
from mindbank.providers.embeddings.base import Embedder, embed_texts
from mindbank.providers.llm.base import LLM, LLMError, LLMTransientError, system, user

log = logging.getLogger(__name__)
BATCH_SIZE = 16
MAX_OBSERVATIONS = 30  # related observations shown per batch
CONSOLIDATION_TEMPERATURE = 0.0  # reference: consolidation 0.0

_IDS = {"type": "array", "items": {"type": "string"}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "creates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "source_fact_ids": _IDS, "reason": {"type": "string"}},
                "required": ["text", "source_fact_ids"],
            },
        },
        "updates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "observation_id": {"type": "string"},
                    "source_fact_ids": _IDS,
                    "text": {"type": "string"},
                    "reason": {"type": "string"},
                },
                "required": ["observation_id", "source_fact_ids"],
            },
        },
        "deletes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"observation_id": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["observation_id"],
            },
        },
    },
    "required": ["creates", "updates"],
}

PROMPT = """You consolidate an agent's memories into observations: durable statements that several facts support.
You get NEW facts, EARLIER facts related to them and EXISTING observations (ids given). Reply with JSON
{"creates": [...], "updates": [...], "deletes": [...]}:
- creates: {text, source_fact_ids}: a new observation, in your own words, that two or more facts support, at least
  one of them new (or one new fact stating something lasting: a preference, a plan, a relationship); earlier facts
  may be among its sources. Never invent anything.
- updates: {observation_id, source_fact_ids, text?}: an existing observation that new facts confirm; give "text"
  only when the new facts refine or correct it (the whole restated observation).
- deletes: {observation_id}: an existing observation the new facts show to be wrong or no longer true.
Use only the ids given. Leave out facts that support nothing lasting. Empty lists are a valid answer."""

Updates = list[tuple[str, tuple[str, ...], int]]


class LLMConsolidator:
    """See the module docstring. ``fallback`` handles batches whose reply is unusable."""

    def __init__(self, llm: LLM, embedder: Embedder, *, fallback: ExtractiveConsolidator | None = None) -> None:
        self.llm = llm
        self.embedder = embedder
        self.fallback = fallback or ExtractiveConsolidator()

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
        """Creates, updates (grown sources), rewrites and deletes for a batch of pending facts, as
        ``Store.write_consolidation`` takes them; ``neighbours``: per fact, earlier consolidated facts shown beside
        it. ``lost`` is not read: an observation the model wrote keeps its text when sources go (the model restates
        it when a later fact touches it). ``previous`` (the turn before each fact) is read only by the extractive
        fallback for a batch the model gave no usable reply for. Raises ``LLMTransientError``."""
        by_scope: dict[tuple[str, ...], list[MemoryUnit]] = {}
        for fact in facts:
            for scope in scope_keys(fact.tags, scopes):
                by_scope.setdefault(scope, []).append(fact)
        creates: list[NewMemory] = []
        grown: dict[str, list[str]] = {o.id: list(o.source_memory_ids or ()) for o in observations}
        touched: set[str] = set()
        rewrites: dict[str, str] = {}
        deletes: set[str] = set()
        for scope, members in by_scope.items():
            in_scope_obs = [o for o in observations if o.tags == scope]
            for start in range(0, len(members), BATCH_SIZE):
                batch = members[start : start + BATCH_SIZE]
                earlier = self._earlier(batch, scope, scopes, neighbours or {})
                reply = self._ask(batch, self._related(batch, in_scope_obs, vectors), earlier)
                if reply is None:
                    fallback = self.fallback.plan(
                        batch, vectors, in_scope_obs, scopes, neighbours=neighbours, previous=previous
                    )
                    creates.extend(fallback.creates)
                    deletes.update(fallback.deletes)  # observations the fallback restated with a later value
                    for obs_id, sources, _ in fallback.updates:
                        grown[obs_id] = list(dict.fromkeys([*grown[obs_id], *sources]))
                        touched.add(obs_id)
                    continue
                creates.extend(self._creates(reply["creates"], batch, scope, earlier))
                known = {o.id for o in in_scope_obs}
                batch_ids = {f.id for f in batch}
                for update in reply["updates"]:
                    cited = [i for i in update["source_fact_ids"] if i in batch_ids]
                    if update["observation_id"] in known and cited:
                        obs_id = update["observation_id"]
                        grown[obs_id] = list(dict.fromkeys([*grown[obs_id], *cited]))
                        touched.add(obs_id)
                        text = " ".join(str(update.get("text") or "").split())
                        if text:
                            rewrites[obs_id] = text
                deletes |= {d["observation_id"] for d in reply.get("deletes", []) if d["observation_id"] in known}
        touched -= deletes
        updates = [(i, tuple(grown[i]), len(grown[i])) for i in sorted(touched)]
        kept = [(i, t) for i, t in sorted(rewrites.items()) if i not in deletes]
        vectors_new = embed_texts(self.embedder, [t for _, t in kept])
        return ConsolidationPlan(
            creates=creates,
            updates=updates,
            rewrites=[(i, t, v) for (i, t), v in zip(kept, vectors_new, strict=True)],
            deletes=sorted(deletes),
        )

    def _related(
        self, batch: Sequence[MemoryUnit], observations: Sequence[MemoryUnit], vectors: dict[str, np.ndarray]
    ) -> list[MemoryUnit]:
        """The scope's observations closest to the batch (by best cosine to any of its facts)."""
        fact_vectors = [vectors[f.id] for f in batch if f.id in vectors]
        if not fact_vectors or len(observations) <= MAX_OBSERVATIONS:
            return list(observations)
        matrix = np.stack(fact_vectors)

        def closeness(o: MemoryUnit) -> float:
            return float((matrix @ vectors[o.id]).max()) if o.id in vectors else -1.0

        return sorted(observations, key=closeness, reverse=True)[:MAX_OBSERVATIONS]

    @staticmethod
    def _earlier(
        batch: Sequence[MemoryUnit], scope: tuple[str, ...], scopes: ObservationScopes, neighbours: Neighbours
    ) -> list[MemoryUnit]:
        """The batch's earlier neighbours in ``scope``, each once, nearest first, at most ``MAX_OBSERVATIONS``."""
        hits = sorted(
            (hit for f in batch for hit in neighbours.get(f.id, ()) if in_scope(hit[0], scope, scopes)),
            key=lambda hit: -hit[1],
        )
        unique: dict[str, MemoryUnit] = {}
        for memory, _ in hits:
            unique.setdefault(memory.id, memory)
        return list(unique.values())[:MAX_OBSERVATIONS]

    def _ask(
        self, batch: Sequence[MemoryUnit], observations: Sequence[MemoryUnit], earlier: Sequence[MemoryUnit] = ()
    ) -> dict[str, Any] | None:
        payload = {
            "new_facts": [{"id": f.id, "text": f.text} for f in batch],
            "earlier_facts": [{"id": f.id, "text": f.text} for f in earlier],
            "existing_observations": [{"id": o.id, "text": o.text} for o in observations],
        }
        try:
            reply = self.llm.chat(
                [system(PROMPT), user(json.dumps(payload, ensure_ascii=False))],
                response_schema=SCHEMA,
                schema_name="consolidation",
                temperature=CONSOLIDATION_TEMPERATURE,
                scope="consolidation",
            )
        except LLMTransientError:
            raise
        except LLMError as exc:
            log.warning("LLM consolidation failed (%s); using the extractive consolidator for this batch", exc)
            return None
        if reply.parsed is None or schema_problems(reply.parsed, SCHEMA):
            log.warning("LLM consolidation reply did not fit the schema; using the extractive consolidator")
            return None
        parsed: dict[str, Any] = reply.parsed  # the schema check above proved it a JSON object
        return parsed

    def _creates(
        self, raw: Sequence[dict[str, Any]], batch: Sequence[MemoryUnit], scope: tuple[str, ...],
        earlier: Sequence[MemoryUnit] = (),
    ) -> list[NewMemory]:  # fmt: skip
        new = {f.id for f in batch}
        by_id = {f.id: f for f in [*earlier, *batch]}
        kept = []
        for create in raw:
            text = " ".join(create["text"].split())
            sources = [by_id[i] for i in dict.fromkeys(create["source_fact_ids"]) if i in by_id]
            if text and any(f.id in new for f in sources):
                kept.append((text, sources))
        if not kept:
            return []
        vectors = self.embedder.embed([text for text, _ in kept])
        out = []
        for (text, sources), vector in zip(kept, vectors, strict=True):
            first = min(sources, key=lambda f: f.occurred_start or f.mentioned_at or f.created_at)
            out.append(
                NewMemory(
                    text=text, fact_type="observation", embedding=vector, tags=scope, context=first.context,
                    metadata={}, document_id=None, chunk_id=None, occurred_start=first.occurred_start,
                    occurred_end=max((f.occurred_end for f in sources if f.occurred_end), default=None),
                    mentioned_at=first.mentioned_at, source_memory_ids=tuple(f.id for f in sources),
                    proof_count=len(sources),
                )
            )  # fmt: skip
        return out
