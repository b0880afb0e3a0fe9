"""SQL building blocks of the SQLite store: column lists, JSON/time encoding, the memory filter compiler and
keyword-query term pruning. No connection handling here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mindbank.domain.timeutil import to_iso
from mindbank.store.base import MemoryFilter

MAX_COMPOUND = 400
# every memory column but the embedding blob, which readers of MemoryUnit never need
MEMORY_COLUMNS = (
    "id, bank_id, document_id, chunk_id, text, fact_type, tags, context, metadata, occurred_start, occurred_end, "
    "mentioned_at, source_memory_ids, proof_count, consolidated_at, created_at, updated_at"
)
MEMORY_COLUMNS_M = ", ".join(
    "m." + c.strip() for c in MEMORY_COLUMNS.split(",")
)  # below SQLite's default SQLITEMAX_COMPOUND_SELECT (500)


def ts(value: str | None) -> datetime | None:
    """A stored ISO-8601 string as an aware datetime (None stays None)."""
    return None if value is None else datetime.fromisoformat(value)


def to_json(value: Any) -> str:
    """Compact, key-sorted JSON text for a JSON column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def tags_json(tags: Sequence[str]) -> str:
    """The stored form of a tag list: a sorted, de-duplicated JSON array (so ``exact`` is string equality)."""
    return json.dumps(sorted(set(tags)), separators=(",", ":"))


def _tags_clause(alias: str, wanted: Sequence[str], mode: str) -> tuple[str | None, list[Any]]:
    """One tag filter as SQL (None = no constraint), per the truth table of ``domain.tags``."""
    want = sorted(set(wanted))
    if mode == "exact":
        return f"{alias}.tags = ?", [tags_json(want)]
    if not want:
        return None, []
    marks = ",".join("?" * len(want))
    if mode in ("any", "any_strict"):
        hit = f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value IN ({marks}))"
    elif mode in ("all", "all_strict"):
        hit = f"(SELECT COUNT(*) FROM json_each({alias}.tags) WHERE value IN ({marks})) = {len(want)}"
    else:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    if mode.endswith("strict"):
        return f"({alias}.tags != '[]' AND {hit})", want
    return f"({alias}.tags = '[]' OR {hit})", want


def _group_clause(alias: str, group: dict[str, Any]) -> tuple[str, list[Any]]:
    if "and" in group or "or" in group:
        op = "and" if "and" in group else "or"
        parts = [_group_clause(alias, g) for g in group[op]]
        return "(" + f" {op.upper()} ".join(p for p, _ in parts) + ")", [x for _, ps in parts for x in ps]
    if "not" in group:
        inner, params = _group_clause(alias, group["not"])
        return f"(NOT {inner})", params
    clause, params = _tags_clause(alias, group["tags"], group["match"])
    return clause or "1=1", params


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Compile a :class:`MemoryFilter` to a SQL predicate over ``alias`` (tag truth table of domain.tags)."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.fact_types is not None:
        clauses.append(f"{alias}.fact_type IN ({','.join('?' * len(flt.fact_types))})")
        params.extend(flt.fact_types)
    if flt.updated_before is not None:
        clauses.append(f"{alias}.updated_at <= ?")
        params.append(to_iso(flt.updated_before))
    if flt.updated_after is not None:
        clauses.append(f"{alias}.updated_at > ?")
        params.append(to_iso(flt.updated_after))
    clause, p = _tags_clause(alias, flt.tags, flt.tags_match)
    if clause is not None:
        clauses.append(clause)
        params.extend(p)
    for group in flt.groups:
        clause, p = _group_clause(alias, group)
        clauses.append(clause)
        params.extend(p)
    return (" AND ".join(clauses) or "1=1"), params


COMMON_TERM_SHARE = 0.05


def prune_common_terms(conn: sqlite3.Connection, terms: Sequence[str]) -> list[str]:
    """Drop query terms present in more than ``COMMON_TERM_SHARE`` of all memories (the rarest always stays);
    below 1000 memories every term is kept."""
    total = conn.execute("SELECT MAX(seq) FROM memory_units").fetchone()[0] or 0
    if total < 1000 or len(terms) <= 1:
        return list(terms)
    # the index holds porter stems; a stem is the word or the word cut by up to three letters ("caroline" ->
    # "carolin"), so the largest document count among those forms is the term's (an estimate good enough to prune)
    forms = {t: [t] + [t[: len(t) - cut] for cut in range(1, 4) if len(t) - cut >= 3] for t in terms}
    candidates = sorted({f for fs in forms.values() for f in fs})
    marks = ",".join("?" * len(candidates))
    docs = dict(conn.execute(f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({marks})", candidates).fetchall())
    frequency = {t: max((int(docs.get(f, 0)) for f in fs), default=0) for t, fs in forms.items()}
    rarest = min(terms, key=lambda t: frequency[t])
    return [t for t in terms if t == rarest or frequency[t] <= COMMON_TERM_SHARE * total]
