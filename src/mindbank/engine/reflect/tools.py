"""Reflect's tools over one bank: what the agent (or the extractive reflect) may read, and what it has read.

Reference facts §5 (tools), spec "Tags and Visibility". Every read goes through one :class:`ReflectScope`: the
request's tag filter (and, during a refresh, the snapshot window) applies to memories and mental models alike.

Mental-model visibility uses the memory truth table (``domain.tags``): no tags → every model; tags with ``any`` /
``all`` → untagged models plus matching ones; the strict modes and ``exact`` hide untagged models; tag groups are
AND-ed as in recall. Excluded ids (and, in a refresh, the model itself) are never shown; empty models neither,
since they hold nothing to read.

Tools return JSON-able dicts. A bad argument from the model raises :class:`ToolArgumentError` (its message goes
back to the model, which may try again); any other exception is a real failure of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from mindbank.domain.document import count_tokens
from mindbank.domain.records import FACT_TYPES, FactType, MentalModel, ScoredMemory, SourceChunk
from mindbank.domain.scope import MemoryFilter, admits_tags
from mindbank.domain.timeutil import to_iso
from mindbank.engine.recall import RecallRequest, recall
from mindbank.engine.refresh.staleness import mark_stale
from mindbank.errors import TransientError
from mindbank.providers.embeddings.base import Embedder
from mindbank.providers.llm.base import ToolSpec, tool_spec
from mindbank.store.base import Store

Budget = Literal["low", "mid", "high"]
MIN_TOOL_TOKENS, MAX_TOOL_TOKENS = 1000, 16000  # bounds on a tool's max_tokens argument (reference §5)
FULL_TOP_HIT_TOKENS = 4000  # search_mental_models returns its top hit in full up to this size
SNIPPET_CHARS = 280
DOCUMENT_CHARS = 8000  # expand(depth=document) returns at most this much of a document
MODEL_PAGE = 1000
MAX_MODELS = 5000  # a bank with more models than this is searched over its most recently refreshed ones


class ToolArgumentError(ValueError):
    """The model called a tool with unusable arguments; the message is returned to it as the tool's output."""


class ToolExecutionError(RuntimeError):
    """A tool failed for a reason other than its arguments (a store error): the run fails (reference
    ``ReflectToolExecutionError``; a refresh records ``retrieval_failed``). Transient errors are not wrapped."""

    def __init__(self, tool: str, cause: Exception) -> None:
        super().__init__(f"tool {tool} failed: {type(cause).__name__}: {cause}")
        self.tool = tool


@dataclass(frozen=True, slots=True)
class ReflectScope:
    """What one reflect run may read.

    ``filter`` carries the tag filter (flat tags or tag groups) and, for a refresh, the snapshot bounds; its
    ``fact_types`` is ignored (each tool sets its own within ``fact_types``). ``self_id`` is the model being
    refreshed (never a source of itself)."""

    bank_id: str
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    fact_types: tuple[FactType, ...] = FACT_TYPES
    exclude_mental_models: bool = False
    exclude_mental_model_ids: frozenset[str] = frozenset()
    self_id: str | None = None
    recall_max_tokens: int = 2048
    observations_max_tokens: int = 5000
    recall_candidates: int = 60

    def model_visible(self, model: MentalModel) -> bool:
        """Whether ``model`` may be read in this run (visibility rules in the module docstring)."""
        if model.id == self.self_id or model.id in self.exclude_mental_model_ids or not model.content.strip():
            return False
        return admits_tags(self.filter, model.tags)


@dataclass(slots=True)
class Evidence:
    """Everything tools returned in this run, by id: only these may be cited."""

    memories: dict[str, ScoredMemory] = field(default_factory=dict)
    mental_models: dict[str, MentalModel] = field(default_factory=dict)
    tools_run: list[str] = field(default_factory=list)

    def add_memories(self, hits: Sequence[ScoredMemory]) -> None:
        for hit in hits:
            self.memories.setdefault(hit.memory.id, hit)

    def add_models(self, models: Sequence[MentalModel]) -> None:
        for model in models:
            self.mental_models.setdefault(model.id, model)

    @property
    def retrieved_anything(self) -> bool:
        return bool(self.memories or self.mental_models)


def memory_view(hit: ScoredMemory) -> dict[str, Any]:
    """A retrieved memory as the model sees it."""
    m = hit.memory
    view: dict[str, Any] = {
        "id": m.id,
        "type": m.fact_type,
        "text": m.text,
        "date": to_iso(m.moment),
    }
    if m.context:
        view["context"] = m.context
    if m.tags:
        view["tags"] = list(m.tags)
    if m.fact_type == "observation" and m.proof_count is not None:
        view["proof_count"] = m.proof_count
    return view


def chunk_view(chunk: SourceChunk) -> dict[str, Any]:
    """A source chunk as the model sees it: its text and the retrieved memories drawn from it."""
    return {"memory_ids": list(chunk.memory_ids), "text": chunk.text}


def _clamp_tokens(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolArgumentError("max_tokens must be a number")
    return int(min(MAX_TOOL_TOKENS, max(MIN_TOOL_TOKENS, value)))


def _query(args: dict[str, Any]) -> str:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolArgumentError("query must be a non-empty string")
    return query.strip()


def _ids(args: dict[str, Any], key: str) -> list[str]:
    value = args.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ToolArgumentError(f"{key} must be a non-empty list of ids")
    return list(dict.fromkeys(value))


_REASON = {"type": "string", "description": "Why you call this tool now (one short sentence)."}


class ReflectTools:
    """The tool belt of one run. ``evidence`` accumulates every memory and model a tool returned."""

    def __init__(self, store: Store, embedder: Embedder, scope: ReflectScope) -> None:
        self.store = store
        self.embedder = embedder
        self.scope = scope
        self.evidence = Evidence()
        self._models: list[MentalModel] | None = None
        self._model_vectors: np.ndarray | None = None

    # ------------------------------------------------------------------ what is on offer
    def visible_models(self) -> list[MentalModel]:
        """The models this run may read (cached for the run)."""
        if self._models is None:
            found: list[MentalModel] = []
            if not self.scope.exclude_mental_models:
                offset = 0
                while offset < MAX_MODELS:
                    page, total = self.store.list_mental_models(
                        self.scope.bank_id, tags=(), tags_match="any", limit=MODEL_PAGE, offset=offset
                    )
                    found.extend(m for m in page if self.scope.model_visible(m))
                    offset += MODEL_PAGE
                    if offset >= total or not page:
                        break
            self._models = found
        return self._models

    @property
    def can_search_models(self) -> bool:
        return bool(self.visible_models())

    @property
    def can_search_observations(self) -> bool:
        return "observation" in self.scope.fact_types

    @property
    def can_recall(self) -> bool:
        return any(t in self.scope.fact_types for t in ("world", "experience"))

    def available(self) -> list[str]:
        """Names of the retrieval tools on offer, in hierarchy order."""
        names = []
        if self.can_search_models:
            names += ["search_mental_models", "read_mental_models"]
        if self.can_search_observations:
            names.append("search_observations")
        if self.can_recall:
            names.append("recall")
        if self.can_search_observations or self.can_recall:
            names.append("expand")
        return names

    def specs(self, done: ToolSpec) -> list[ToolSpec]:
        """OpenAI-format specs of the available tools plus ``done``."""
        all_specs = {
            "search_mental_models": tool_spec(
                "search_mental_models",
                "Search the bank's mental models: curated, cited summaries. Each hit says whether it is stale (newer "
                "memories exist that it has not absorbed). The best hit comes in full, the others as snippets.",
                {
                    "type": "object",
                    "properties": {
                        "reason": _REASON,
                        "query": {"type": "string"},
                        "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
                    },
                    "required": ["query"],
                },
            ),
            "read_mental_models": tool_spec(
                "read_mental_models",
                "Read mental models in full by id (ids from search_mental_models).",
                {
                    "type": "object",
                    "properties": {
                        "reason": _REASON,
                        "mental_model_ids": {"type": "array", "items": {"type": "string"}},
                        "max_tokens": {"type": "integer"},
                    },
                    "required": ["mental_model_ids"],
                },
            ),
            "search_observations": tool_spec(
                "search_observations",
                "Search observations: facts consolidated from several memories, with how many back them.",
                {
                    "type": "object",
                    "properties": {"reason": _REASON, "query": {"type": "string"}, "max_tokens": {"type": "integer"}},
                    "required": ["query"],
                },
            ),
            "recall": tool_spec(
                "recall",
                "Search raw facts (world facts and the agent's own experiences), best match first.",
                {
                    "type": "object",
                    "properties": {"reason": _REASON, "query": {"type": "string"}, "max_tokens": {"type": "integer"}},
                    "required": ["query"],
                },
            ),
            "expand": tool_spec(
                "expand",
                "Widen retrieved memories to their source: the conversation turn (chunk) or the whole document.",
                {
                    "type": "object",
                    "properties": {
                        "reason": _REASON,
                        "memory_ids": {"type": "array", "items": {"type": "string"}},
                        "depth": {"type": "string", "enum": ["chunk", "document"]},
                    },
                    "required": ["memory_ids"],
                },
            ),
        }
        return [all_specs[name] for name in self.available()] + [done]

    # ------------------------------------------------------------------ running
    def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one tool. Raises :class:`ToolArgumentError` for an unknown/unavailable tool or bad arguments."""
        if name not in self.available():
            raise ToolArgumentError(f"unknown or unavailable tool {name!r}; available: {', '.join(self.available())}")
        handler: Callable[[dict[str, Any]], dict[str, Any]] = getattr(self, f"_{name}")
        output = handler(args)
        self.evidence.tools_run.append(name)
        return output

    def timed(self, name: str, args: dict[str, Any], iteration: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run a tool and return ``(output, trace entry)``; argument errors become an ``{"error": ...}`` output,
        other failures raise :class:`ToolExecutionError`."""
        started = time.perf_counter()
        try:
            output = self.run(name, args)
        except ToolArgumentError as exc:
            output = {"error": str(exc)}
        except TransientError:
            raise
        except Exception as exc:
            raise ToolExecutionError(name, exc) from exc
        entry = {
            "tool": name,
            "reason": args.get("reason"),
            "input": {k: v for k, v in args.items() if k != "reason"},
            "output": output,
            "result_count": _count(output),
            "duration_ms": int((time.perf_counter() - started) * 1000),
            "iteration": iteration,
        }
        return output, entry

    # ------------------------------------------------------------------ tools
    def _search_mental_models(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _query(args)
        limit = args.get("max_results") or 5
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ToolArgumentError("max_results must be an integer")
        models = self.visible_models()
        if self._model_vectors is None:
            texts = [f"{m.name}. {m.source_query}\n{m.content[:1500]}" for m in models]
            self._model_vectors = self.embedder.embed(texts)
        relevance = self._model_vectors @ self.embedder.embed([query])[0]
        order = sorted(range(len(models)), key=lambda i: (-float(relevance[i]), models[i].id))[: max(1, min(20, limit))]
        hits = [models[i] for i in order]
        mark_stale(self.store, self.scope.bank_id, hits)
        self.evidence.add_models(hits)
        out = []
        for rank, i in enumerate(order):
            model = models[i]
            entry: dict[str, Any] = {
                "id": model.id,
                "name": model.name,
                "source_query": model.source_query,
                "relevance": round(float(relevance[i]), 4),
                "updated_at": to_iso(model.last_refreshed_at),
                "is_stale": bool(model.is_stale),
                "staleness_reason": "newer memories in its scope" if model.is_stale else None,
                "content_chars": len(model.content),
            }
            if rank == 0 and count_tokens(model.content) <= FULL_TOP_HIT_TOKENS:
                entry["content"] = model.content
            else:
                entry["snippet"] = model.content[:SNIPPET_CHARS]
            out.append(entry)
        return {"mental_models": out}

    def _read_mental_models(self, args: dict[str, Any]) -> dict[str, Any]:
        wanted = _ids(args, "mental_model_ids")
        budget = _clamp_tokens(args.get("max_tokens"), 6000)
        by_id = {m.id: m for m in self.visible_models()}
        read: list[MentalModel] = []
        not_read: list[str] = []
        unknown: list[str] = []
        used = 0
        for model_id in wanted:
            model = by_id.get(model_id)
            if model is None:
                unknown.append(model_id)
                continue
            cost = count_tokens(model.content)
            if (read and used + cost > budget) or not_read:
                not_read.append(model_id)  # stop at the first model over budget (reference §5)
                continue
            used += cost
            read.append(model)
        mark_stale(self.store, self.scope.bank_id, read)
        self.evidence.add_models(read)
        return {
            "mental_models": [
                {"id": m.id, "name": m.name, "content": m.content, "is_stale": bool(m.is_stale)} for m in read
            ],
            "not_read": not_read,
            "unknown_ids": unknown,
        }

    def _recall_memories(self, query: str, types: tuple[FactType, ...], max_tokens: int) -> list[ScoredMemory]:
        hits = recall(
            self.store,
            self.embedder,
            self.scope.bank_id,
            RecallRequest(
                query=query, filter=replace(self.scope.filter, fact_types=types), max_tokens=max_tokens, fill=True
            ),
            candidates=self.scope.recall_candidates,
        )
        self.evidence.add_memories(hits)
        return hits

    def _search_observations(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _query(args)
        budget = _clamp_tokens(args.get("max_tokens"), self.scope.observations_max_tokens)
        hits = self._recall_memories(query, ("observation",), budget)
        pending = int(self.store.bank_stats(self.scope.bank_id).get("pending_consolidation") or 0)
        freshness = "up_to_date" if pending == 0 else "slightly_stale" if pending < 10 else "stale"
        return {
            "observations": [memory_view(h) for h in hits],
            "is_stale": pending > 0,
            "freshness": freshness,
            "pending_consolidation": pending,
        }

    def _recall(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _query(args)
        budget = _clamp_tokens(args.get("max_tokens"), self.scope.recall_max_tokens)
        types = tuple(t for t in self.scope.fact_types if t in ("world", "experience"))
        return {"memories": [memory_view(h) for h in self._recall_memories(query, types, budget)]}

    def _expand(self, args: dict[str, Any]) -> dict[str, Any]:
        wanted = _ids(args, "memory_ids")
        depth = args.get("depth") or "chunk"
        if depth not in ("chunk", "document"):
            raise ToolArgumentError("depth must be 'chunk' or 'document'")
        # only memories this run retrieved may be expanded: expand must not reach outside the request's scope
        allowed = [i for i in wanted if i in self.evidence.memories]
        results = []
        for source in self.store.memory_sources(self.scope.bank_id, allowed):
            text = source.chunk_text if depth == "chunk" else source.document_text
            results.append(
                {"memory_id": source.memory_id, "depth": depth, "text": (text or "")[:DOCUMENT_CHARS] or None}
            )
        return {"results": results, "not_retrieved": [i for i in wanted if i not in self.evidence.memories]}


def _count(output: dict[str, Any]) -> int:
    for key in ("mental_models", "observations", "memories", "results"):
        if isinstance(output.get(key), list):
            return len(output[key])
    return 0
