"""Every SQL statement of the PostgreSQL store, by name, plus the compiler of :class:`MemoryFilter` predicates.

The statements live with their feature (``bank_queries``, ``memory_queries``, ``search_queries``, ``model_queries``,
``spend_queries``, ``knowledge_queries``, ``operation_queries``, ``access_queries``, ``resource_queries``,
``transfer_queries``, ``consolidation_queries``); this module merges them into ``Q`` and keeps the connection's own
statements and the SQL helpers.

Statements use psycopg's positional ``%s`` placeholders. A few carry a ``{where}`` (a compiled filter, itself
parameterised) or ``{kind}`` slot that the store's query mixins fill with ``str.format`` before execution; nothing
user-supplied is ever formatted into SQL text, only fixed fragments built here.

Text ordering that SQLite does byte-wise (ids, tags) is spelled ``COLLATE "C"`` so both backends page identically
whatever the database's default collation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import psycopg

from mindbank.domain.tags import TAGS_MATCH_MODES
from mindbank.store.dialect import Dialect, merge_statements
from mindbank.store.postgres.access_queries import ACCESS_Q
from mindbank.store.postgres.bank_queries import BANK_Q
from mindbank.store.postgres.consolidation_queries import CONSOLIDATION_Q
from mindbank.store.postgres.knowledge_queries import KNOWLEDGE_Q
from mindbank.store.postgres.memory_queries import MEMORY_Q
from mindbank.store.postgres.model_queries import MODEL_Q
from mindbank.store.postgres.observation_queries import OBSERVATION_Q
from mindbank.store.postgres.operation_queries import OPERATION_Q
from mindbank.store.postgres.reembed_queries import REEMBED_Q
from mindbank.store.postgres.resource_queries import RESOURCE_Q
from mindbank.store.postgres.search_queries import SEARCH_Q
from mindbank.store.postgres.spend_queries import SPEND_Q
from mindbank.store.postgres.transfer_queries import TRANSFER_Q

_CONNECTION_Q: dict[str, str] = {
    "vector_version": "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
    # worker heartbeats are process liveness, not data: a running worker writes them whatever a request does
    "list_tables": (
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type = 'BASE TABLE' AND table_name != 'worker_heartbeats' ORDER BY table_name"
    ),
}
# every statement by name: the connection's own and each feature's (<feature>_queries.py; resource_queries.py holds
# documents, directives, webhooks, operation administration, the bank's LLM request log and heartbeats)
Q = merge_statements(
    _CONNECTION_Q, BANK_Q, MEMORY_Q, SEARCH_Q, MODEL_Q, SPEND_Q, KNOWLEDGE_Q, OPERATION_Q, ACCESS_Q, RESOURCE_Q,
    TRANSFER_Q, CONSOLIDATION_Q, REEMBED_Q, OBSERVATION_Q,
)  # fmt: skip


def tag_list(values: Sequence[str]) -> list[str]:
    """Canonical stored form of a tag list (sorted, de-duplicated), as a list psycopg adapts to ``text[]``."""
    return sorted(set(values))


def model_tags_clause(tags: Sequence[str], tags_match: str) -> tuple[str, list[Any]]:
    """The ``{where}`` of ``list_mental_models``/``count_mental_models`` for a tag filter on models (empty string:
    no filter): ``exact`` = equal, ``all`` = superset (``@>``), anything else = overlaps (``&&``)."""
    want = tag_list(tags)
    if not want:
        return "", []
    op = {"exact": "=", "all": "@>"}.get(tags_match, "&&")
    return f" AND tags {op} %s::text[]", [want]


def tags_clause(alias: str, wanted: Sequence[str], mode: str) -> tuple[str | None, list[Any]]:
    """One tag filter as SQL (None = no constraint), per the truth table of :mod:`mindbank.domain.tags`.

    Tags are stored sorted and de-duplicated, so ``exact`` is plain array equality (empty wanted = untagged only);
    ``&&`` (overlap) and ``@>`` (contains) are served by the GIN index on ``tags``.
    Raises ``ValueError`` for an unknown mode.
    """
    if mode not in TAGS_MATCH_MODES:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    want = tag_list(wanted)
    if mode == "exact":
        return f"{alias}.tags = %s::text[]", [want]
    if not want:
        return None, []
    hit = f"{alias}.tags && %s::text[]" if mode.startswith("any") else f"{alias}.tags @> %s::text[]"
    if mode.endswith("strict"):
        return f"({alias}.tags <> '{{}}' AND {hit})", [want]
    return f"({alias}.tags = '{{}}' OR {hit})", [want]


def in_list(column: str, values: list[Any]) -> tuple[str, list[Any]]:
    """``column = ANY(%s::text[])``: ``values`` bound as one array."""
    return f"{column} = ANY(%s::text[])", [values]


_WORD = re.compile(r"[^\W_]+")


def tsquery(terms: Sequence[str]) -> str | None:
    """A ``to_tsquery`` input that matches any of ``terms`` (None when no term has a word in it).

    Each term becomes a phrase of its words (``a <-> b``, like an FTS5 quoted phrase) and the phrases are OR-ed.
    Only letters and digits survive, so no tsquery operator, quote or backslash can reach the parser.
    """
    phrases = []
    for term in terms:
        words = _WORD.findall(term)
        if words:
            phrases.append("(" + " <-> ".join(words) + ")")
    return " | ".join(phrases) if phrases else None


def like_pattern(pattern: str) -> str:
    """A case-folded ``LIKE`` pattern (escape ``\\``) for a tag search: ``*`` is the only wildcard; no ``*`` means
    substring match. Mirrors the SQLite store's GLOB translation."""
    glob = pattern.lower() if "*" in pattern else f"*{pattern.lower()}*"
    escaped = glob.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


# PostgreSQL's spelling of the fragments the shared method bodies build (tags are an unnested text[])
DIALECT = Dialect(
    mark="%s",
    ilike="ILIKE",
    tag_filter=" AND lower(j.tag) LIKE %s ESCAPE '\\'",
    tag_pattern=like_pattern,
    model_tags=model_tags_clause,
    tags_clause=tags_clause,
    in_list=in_list,
    time=lambda at: at,  # psycopg binds an aware datetime as timestamptz
    true="TRUE",
    false="FALSE",
    duplicate=(psycopg.errors.UniqueViolation,),
    id_batch=None,
)
