"""The lexical index's shared SQL: a memory's moment and its preceding text (the second full-text field), spelled
for either store."""

from __future__ import annotations

# keyword search weighs a match in the text said just before a memory (its ``preceding_text``) at this share of a
# match in the memory's own text (tuned on the LoCoMo tune conversations, docs/benchmarks.md)
PRECEDING_WEIGHT = 0.3


# a preceding text holds at most this many facts, the last ones written at that moment: a long turn's pieces share
# its moment, and so does every fact of a document retained in one piece, whose successor in the same context would
# otherwise carry the whole document as its preceding text (and the lexical index a copy of it per fact)
PRECEDING_PIECES = 8


def preceding_sql(bank: str, context: str, moment: str, *, concat: str) -> str:
    """SQL for the preceding text of a fact of ``bank`` / ``context`` said at ``moment`` (SQL expressions): the
    texts (joined by ``concat``, the dialect's aggregate over ``p.text``, in write order ``p.seq``) of the last
    :data:`PRECEDING_PIECES` facts at the nearest earlier moment of that context; observations neither have nor lend
    one. NULL when nothing was said before."""
    return (
        f"(SELECT {concat} FROM (SELECT * FROM (SELECT l.text, l.seq FROM memory_units l "
        f"WHERE l.bank_id = {bank} AND l.context = {context} AND l.fact_type <> 'observation' "
        f"AND {moment_sql('l')} = {nearest_moment('x', bank, context, f'< {moment}')} "
        f"ORDER BY l.seq DESC LIMIT {PRECEDING_PIECES}) AS t ORDER BY t.seq) AS p)"
    )


def nearest_moment(alias: str, bank: str, context: str, bound: str) -> str:
    """SQL for the moment of ``context``'s facts nearest to ``bound`` (``"< m"``: the latest before ``m``; ``"> m"``:
    the earliest after it), observations left out; NULL when there is none.

    Spelled ``ORDER BY ... LIMIT 1`` rather than ``MAX``/``MIN`` so that both stores walk the context's moment index
    from the bound and stop at the first fact, instead of reading every earlier (or later) row of the context to
    filter out observations: a context can hold a whole bank's memories."""
    order = "DESC" if bound.lstrip().startswith("<") else "ASC"
    return (
        f"(SELECT {moment_sql(alias)} FROM memory_units {alias} WHERE {alias}.bank_id = {bank} "
        f"AND {alias}.context = {context} AND {alias}.fact_type <> 'observation' AND {moment_sql(alias)} {bound} "
        f"ORDER BY {moment_sql(alias)} {order} LIMIT 1)"
    )


def moment_sql(alias: str) -> str:
    """SQL for a memory's moment (when it happened, else when it was said) on table alias ``alias``; the
    expression ``idx_memory_units_context_moment`` indexes."""
    return f"COALESCE({alias}.occurred_start, {alias}.mentioned_at)"
