"""Every SQL statement of the SQLite store, by name, plus the compiler of :class:`MemoryFilter` predicates.

The statements live with their feature (``bank_queries``, ``memory_queries``, ``search_queries``, ``model_queries``,
``spend_queries``, ``knowledge_queries``, ``operation_queries``, ``access_queries``, ``resource_queries``,
``transfer_queries``, ``consolidation_queries``); this module merges them into ``Q`` and keeps the connection's own
statements and the SQL helpers.

Statements use sqlite3's positional ``?`` placeholders. A statement that does the same job as one of the PostgreSQL
store's carries the same key as in :mod:`mindbank.store.postgres.queries` (``tests/unit/test_store_queries.py``
holds the two key sets together). A few carry slots that the store's query mixins fill with ``str.format`` before
execution: ``{where}`` (a compiled filter, itself parameterised), ``{marks}`` (the ``?,?,…`` of an ``IN`` list, where
PostgreSQL binds one array), ``{table}``, ``{columns}``, ``{kind}`` and ``{key}``; nothing user-supplied is ever
formatted into SQL text, only fixed fragments built here. Schema migrations keep their own SQL (``migrate.py`` and
``migrations/``), as in the PostgreSQL store.

Times are fixed-width ISO-8601 strings (``to_iso``) and sort as text; tags are a sorted JSON array (``tags_json``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from mindbank.domain.timeutil import to_iso
from mindbank.store.dialect import Dialect, merge_statements
from mindbank.store.sqlite.access_queries import ACCESS_Q
from mindbank.store.sqlite.bank_queries import BANK_Q
from mindbank.store.sqlite.consolidation_queries import CONSOLIDATION_Q
from mindbank.store.sqlite.knowledge_queries import KNOWLEDGE_Q
from mindbank.store.sqlite.memory_queries import MEMORY_Q
from mindbank.store.sqlite.model_queries import MODEL_Q
from mindbank.store.sqlite.observation_queries import OBSERVATION_Q
from mindbank.store.sqlite.operation_queries import OPERATION_Q
from mindbank.store.sqlite.reembed_queries import REEMBED_Q
from mindbank.store.sqlite.resource_queries import RESOURCE_Q
from mindbank.store.sqlite.search_queries import SEARCH_Q
from mindbank.store.sqlite.spend_queries import SPEND_Q
from mindbank.store.sqlite.transfer_queries import TRANSFER_Q

# scope lookups per compound SELECT of staleness_reads: below SQLite's default SQLITE_MAX_COMPOUND_SELECT (500)
MAX_COMPOUND = 400
# ids per statement where a list is bound as ``IN (?,…)``: far below SQLite's bound-parameter limit
MAX_IDS = 500


_CONNECTION_Q: dict[str, str] = {
    "pragma_foreign_keys": "PRAGMA foreign_keys = ON",
    "pragma_busy_timeout": "PRAGMA busy_timeout = 30000",
    # file databases only: WAL lets the per-thread readers run beside the single writer
    "pragma_journal_wal": "PRAGMA journal_mode = WAL",
    "pragma_synchronous": "PRAGMA synchronous = NORMAL",
    # read connections (one per request thread, up to 40): a small private page cache each (the OS page cache,
    # outside the process, holds the file for all of them) instead of SQLite's default 2 MiB
    "pragma_reader_cache": "PRAGMA cache_size = -512",
    # IMMEDIATE takes the database write lock up front, so a transaction never fails to upgrade midway
    "begin": "BEGIN IMMEDIATE",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    # worker heartbeats are process liveness, not data: a running worker writes them whatever a request does
    "list_tables": (
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_fts%' "
        "AND name NOT LIKE 'sqlite_%' AND name != 'worker_heartbeats' ORDER BY name"
    ),
    # {table} is a name list_tables returned
    "dump_table": "SELECT * FROM {table} ORDER BY 1",
}
# every statement by name: the connection's own and each feature's (<feature>_queries.py; resource_queries.py holds
# documents, directives, webhooks, operation administration, the bank's LLM request log and heartbeats)
Q = merge_statements(
    _CONNECTION_Q, BANK_Q, MEMORY_Q, SEARCH_Q, MODEL_Q, SPEND_Q, KNOWLEDGE_Q, OPERATION_Q, ACCESS_Q, RESOURCE_Q,
    TRANSFER_Q, CONSOLIDATION_Q, REEMBED_Q, OBSERVATION_Q,
)  # fmt: skip


def marks(count: int) -> str:
    """The ``?,?,…`` of an ``IN`` list of ``count`` values (the ``{marks}`` slot)."""
    return ",".join("?" * count)


def stale_compound(selects: Sequence[str]) -> str:
    """Up to ``MAX_COMPOUND`` ``stale_scope`` branches as one subquery, so the whole staleness statement stays below
    SQLite's compound-SELECT limit however many scopes a page has."""
    return "SELECT * FROM (" + " UNION ALL ".join(selects) + ")"


def tags_json(tags: Sequence[str]) -> str:
    """The stored form of a tag list: a sorted, de-duplicated JSON array (so ``exact`` is string equality)."""
    return json.dumps(sorted(set(tags)), separators=(",", ":"))


def model_tags_clause(tags: Sequence[str], tags_match: str) -> tuple[str, list[Any]]:
    """The ``{where}`` of ``list_mental_models``/``count_mental_models`` for a tag filter on models (empty string:
    no filter): ``exact`` = equal, ``all`` = superset, anything else = overlaps."""
    want = sorted(set(tags))
    if not want:
        return "", []
    if tags_match == "exact":
        return " AND tags = ?", [tags_json(want)]
    if tags_match == "all":
        return f" AND (SELECT COUNT(*) FROM json_each(tags) WHERE value IN ({marks(len(want))})) = {len(want)}", want
    return f" AND EXISTS (SELECT 1 FROM json_each(tags) WHERE value IN ({marks(len(want))}))", want


def tags_clause(alias: str, wanted: Sequence[str], mode: str) -> tuple[str | None, list[Any]]:
    """One tag filter as SQL (None = no constraint), per the truth table of ``domain.tags``."""
    want = sorted(set(wanted))
    if mode == "exact":
        return f"{alias}.tags = ?", [tags_json(want)]
    if not want:
        return None, []
    if mode in ("any", "any_strict"):
        hit = f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value IN ({marks(len(want))}))"
    elif mode in ("all", "all_strict"):
        hit = f"(SELECT COUNT(*) FROM json_each({alias}.tags) WHERE value IN ({marks(len(want))})) = {len(want)}"
    else:
        raise ValueError(f"unknown tags_match mode: {mode!r}")
    if mode.endswith("strict"):
        return f"({alias}.tags != '[]' AND {hit})", want
    return f"({alias}.tags = '[]' OR {hit})", want


def in_list(column: str, values: list[Any]) -> tuple[str, list[Any]]:
    """``column IN (?,…)`` over ``values``, one parameter each."""
    return f"{column} IN ({marks(len(values))})", values


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 ``MATCH`` expression that matches any of ``terms``, each a quoted phrase (quotes inside a term are
    dropped, so no FTS5 operator can reach the parser)."""
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


def glob_pattern(pattern: str) -> str:
    """A case-folded ``GLOB`` pattern for a tag search: ``*`` is the only wildcard (``[`` and ``?`` match
    themselves); no ``*`` means substring match."""
    glob = pattern.lower() if "*" in pattern else f"*{pattern.lower()}*"
    return glob.replace("[", "[[]").replace("?", "[?]")


# SQLite's spelling of the fragments the shared method bodies build (LIKE ignores ASCII case; tags are json_each)
DIALECT = Dialect(
    mark="?",
    ilike="LIKE",
    tag_filter=" AND lower(j.value) GLOB ?",
    tag_pattern=glob_pattern,
    model_tags=model_tags_clause,
    tags_clause=tags_clause,
    in_list=in_list,
    time=to_iso,
    true="1=1",
    false="1=0",
    duplicate=(sqlite3.IntegrityError,),
    id_batch=MAX_IDS,
)
