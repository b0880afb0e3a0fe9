"""A :class:`~mindbank.domain.scope.MemoryFilter` compiled to a SQL predicate, once for both stores.

The shape of the predicate (fact types, the ``updated_at`` window, the tag filter, tag groups combined with
``AND``/``OR``/``NOT``) is the same on both backends; how a backend spells a list membership, a time parameter, a
tag filter and a constant truth is its :class:`~mindbank.store.dialect.Dialect`.
"""

from __future__ import annotations

from typing import Any

from mindbank.domain.scope import MemoryFilter
from mindbank.store.dialect import Dialect


def group_clause(alias: str, group: dict[str, Any], dialect: Dialect) -> tuple[str, list[Any]]:
    """A (validated) tag group — ``{"and": [...]}``, ``{"or": [...]}``, ``{"not": g}`` or a leaf
    ``{"tags": [...], "match": mode}`` — as SQL over ``alias``, with its parameters. Empty ``and`` is true and empty
    ``or`` false, like numpy's ``logical_and.reduce([])`` / ``logical_or.reduce([])`` in the in-process index."""
    if "and" in group or "or" in group:
        op = "and" if "and" in group else "or"
        parts = [group_clause(alias, g, dialect) for g in group[op]]
        if not parts:
            return (dialect.true if op == "and" else dialect.false), []
        return "(" + f" {op.upper()} ".join(p for p, _ in parts) + ")", [x for _, ps in parts for x in ps]
    if "not" in group:
        inner, params = group_clause(alias, group["not"], dialect)
        return f"(NOT {inner})", params
    clause, params = dialect.tags_clause(alias, group["tags"], group["match"])
    return clause or dialect.true, params


def compile_filter(flt: MemoryFilter, alias: str, dialect: Dialect) -> tuple[str, list[Any]]:
    """``flt`` as a SQL predicate over the memory table ``alias`` and its parameters (the tag truth table of
    :mod:`mindbank.domain.tags`); no condition at all compiles to the dialect's constant truth. Raises
    ``ValueError`` for an unknown ``tags_match`` mode."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.fact_types is not None:
        clause, p = dialect.in_list(f"{alias}.fact_type", list(flt.fact_types))
        clauses.append(clause)
        params.extend(p)
    if flt.updated_before is not None:
        clauses.append(f"{alias}.updated_at <= {dialect.mark}")
        params.append(dialect.time(flt.updated_before))
    if flt.updated_after is not None:
        clauses.append(f"{alias}.updated_at > {dialect.mark}")
        params.append(dialect.time(flt.updated_after))
    tag_clause, p = dialect.tags_clause(alias, flt.tags, flt.tags_match)
    if tag_clause is not None:
        clauses.append(tag_clause)
        params.extend(p)
    for group in flt.groups:
        clause, p = group_clause(alias, group, dialect)
        clauses.append(clause)
        params.extend(p)
    return (" AND ".join(clauses) or dialect.true), params
