"""Store methods that both backends run the same way: one named statement, rows mapped by the backend's columns.

Each backend keys its SQL alike (``store/sqlite/queries.py``, ``store/postgres/queries.py``) and maps rows through
one :class:`~mindbank.store.columns.Columns`, so a method that is "run ``Q[name]``, map the rows" is written once
here. :class:`SharedQueries` is the root of both backends' ``…Base`` classes, which supply the statements
(``_q``), the row mapping (``_columns``), the SQL spelling of the fragments a body builds itself (``_dialect``:
:class:`~mindbank.store.dialect.Dialect`) and the connection handling (``_read``, ``_tx``, ``_ensure_bank``).
A method whose SQL, locking or clock differs between the backends stays in the backend's own mixin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, closing
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from mindbank.domain.history import history_numbering
from mindbank.domain.records import Bank, HistoryEntry, LLMRequestRecord, MemoryUnit, MentalModel, NewMemory, Operation
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import TagsMatch
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import AlreadyExists, Spend, SpendRecord, SpendTotals, StalenessProbe, cited_ids
from mindbank.store.columns import Columns, Row, mental_model_columns
from mindbank.store.dialect import Dialect
from mindbank.store.fence import LeaseLost, current_fence
from mindbank.store.filter_sql import compile_filter

Anchors = Sequence[tuple[str, datetime]]  # (context, moment) pairs: where recall's neighbour expansion looks
FilterSQL = tuple[str, list[Any]]  # a compiled MemoryFilter: the predicate and its parameters
NEIGHBOURS_PER_SIDE = 8  # rows a neighbour lookup reads per side: the pieces of one long turn share a moment
IDS_PER_STATEMENT = 500  # ids bound per statement where a list is looked up (SQLite binds one parameter each)

_T = TypeVar("_T")


def oldest_since(probes: Sequence[StalenessProbe]) -> dict[MemoryFilter, datetime]:
    """The distinct scopes of a page of staleness probes (first appearance first), each with the oldest ``since``
    among its probes: one scope lookup bounded below by that watermark serves every probe of the scope. Probes
    without a watermark (never refreshed) need no lookup and are left out."""
    oldest: dict[MemoryFilter, datetime] = {}
    for p in probes:
        if p.since is not None:
            oldest[p.scope] = p.since if p.scope not in oldest else min(oldest[p.scope], p.since)
    return oldest


def fold_spend(rows: Sequence[Any]) -> Spend:
    """Rows of ``refresh_spend_models``/``refresh_spend_bank`` (one per ``today`` group) folded into a
    :class:`Spend`."""
    today, other = SpendTotals(), SpendTotals()
    for r in rows:
        totals = SpendTotals(
            int(r["refreshes"] or 0), int(r["llm_calls"] or 0), int(r["input_tokens"] or 0),
            int(r["output_tokens"] or 0),
        )  # fmt: skip
        if r["today"]:
            today = today + totals
        else:
            other = other + totals
    return Spend(today=today, total=today + other)


class SharedQueries:
    """The backend-neutral half of a store; see the module docstring."""

    _q: ClassVar[Mapping[str, str]]
    _columns: ClassVar[Columns]
    _dialect: ClassVar[Dialect]
    _history_kind: ClassVar[Mapping[bool, str]]  # trim_history's {kind}: a failed refresh's rows (True) or not

    # ---------------------------------------------------------------- supplied by the backend

    def _read(self) -> AbstractContextManager[Any]:
        """A connection for reads (the backend's)."""
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[Any]:
        """A connection inside one write transaction (the backend's)."""
        raise NotImplementedError

    def _ensure_bank(self, conn: Any, bank_id: str) -> None:
        """Create the bank in the open transaction if it does not exist (the backend's)."""
        raise NotImplementedError

    def _filter_sql(self, flt: MemoryFilter, alias: str) -> tuple[str, list[Any]]:
        """``flt`` as the backend's SQL predicate over ``alias``, and its parameters."""
        return compile_filter(flt, alias, self._dialect)

    def _id_batches(self, ids: Sequence[str]) -> Iterator[Sequence[str]]:
        """``ids`` in as few lookups as the backend binds: one (an array) or slices of ``Dialect.id_batch``."""
        size = self._dialect.id_batch or max(1, len(ids))
        for start in range(0, len(ids), size):
            yield ids[start : start + size]

    def _bind_ids(self, statement: str, ids: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """A statement taking a list of ids, ready to run, and the parameters standing for the list (the backend's:
        one placeholder per id in SQLite, one array parameter in PostgreSQL)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- one named statement

    def _one(self, statement: str, params: tuple[Any, ...], to: Callable[[Row], _T]) -> _T | None:
        """The first row of the read ``statement`` (one of ``_q``) mapped by ``to``, or None when it has none."""
        with self._read() as conn:
            row = conn.execute(statement, params).fetchone()
        return None if row is None else to(row)

    def _all(self, statement: str, params: tuple[Any, ...], to: Callable[[Row], _T]) -> list[_T]:
        """Every row of the read ``statement`` (one of ``_q``) mapped by ``to``, in the statement's order."""
        with self._read() as conn:
            rows = conn.execute(statement, params).fetchall()
        return [to(r) for r in rows]

    def _changed(self, statement: str, params: tuple[Any, ...]) -> int:
        """How many rows the write ``statement`` (one of ``_q``) changed, run in a transaction of its own."""
        with self._tx() as conn:
            return int(conn.execute(statement, params).rowcount)

    # ---------------------------------------------------------------- memory reads

    def memories_in_window(self, bank_id: str, start: datetime, end: datetime, k: int, flt: MemoryFilter) -> list[str]:
        """Ids of at most ``k`` memories passing ``flt`` whose ``occurred_start``, ``occurred_end`` or
        ``mentioned_at`` lies in ``[start, end]``, latest first (recall's temporal arm)."""
        where, params = self._filter_sql(flt, "m")
        lo, hi = self._columns.time(start), self._columns.time(end)
        with self._read() as conn:
            rows = conn.execute(
                self._q["memories_in_window"].format(where=where), (bank_id, *params, lo, hi, lo, hi, lo, hi, k)
            ).fetchall()
        return [r["id"] for r in rows]

    def memory_neighbours(
        self, bank_id: str, anchors: Sequence[tuple[str, datetime]], window_s: float, flt: MemoryFilter
    ) -> list[MemoryUnit]:
        """The memories passing ``flt`` said at the nearest moment before and the nearest moment after each
        anchor ``(context, moment)``, in the same context and at most ``window_s`` seconds away; each memory once,
        in anchor order (before, then after).

        A memory's moment is ``occurred_start``, else ``mentioned_at`` (memories with neither have none). The
        pieces of one long turn share a moment, so a side returns every memory at its nearest moment, up to
        ``NEIGHBOURS_PER_SIDE``. One statement for all anchors, returning ids (each backend spells it:
        :meth:`_neighbour_rows`; an empty list asks nothing), then :meth:`get_memories`, which reads only the rows
        it has not kept since the bank's last write: recall asks for the same turns query after query.
        """
        if not anchors:
            return []
        rows = self._neighbour_rows(
            bank_id, anchors, timedelta(seconds=window_s), self._filter_sql(flt, "m"), self._filter_sql(flt, "x")
        )
        # a memory reached from two anchors comes back twice
        return self.get_memories(bank_id, list(dict.fromkeys(r["id"] for r in rows)))

    def get_memories(self, bank_id: str, ids: Sequence[str]) -> list[MemoryUnit]:
        """The memories with ``ids`` that exist in the bank, in the order of ``ids`` (the backend's reads)."""
        raise NotImplementedError

    def _neighbour_rows(
        self, bank_id: str, anchors: Anchors, window: timedelta, outer: FilterSQL, inner: FilterSQL
    ) -> list[Row]:
        """The rows of :meth:`memory_neighbours`, before then after per anchor, given the filter compiled over the
        outer alias ``m`` and the inner alias ``x`` (the backend's)."""
        raise NotImplementedError

    def scope_watermark(self, bank_id: str, flt: MemoryFilter) -> datetime | None:
        """Newest ``updated_at`` among memories passing ``flt`` (None when none do)."""
        where, params = self._filter_sql(flt, "m")
        with self._read() as conn:
            row = conn.execute(self._q["scope_watermark"].format(where=where), (bank_id, *params)).fetchone()
        return None if row is None or row["updated_at"] is None else self._columns.load_time(row["updated_at"])

    # ---------------------------------------------------------------- banks

    def ensure_bank(self, bank_id: str) -> None:
        """Create the bank if it does not exist."""
        with self._tx() as conn:
            self._ensure_bank(conn, bank_id)

    def bank_exists(self, bank_id: str) -> bool:
        """Whether the bank exists."""
        with self._read() as conn:
            return conn.execute(self._q["bank_exists"], (bank_id,)).fetchone() is not None

    def get_bank(self, bank_id: str) -> Bank | None:
        """The bank's profile and bookkeeping, or None."""
        return self._one(self._q["get_bank"], (bank_id,), self._columns.bank_row)

    def list_banks(self) -> list[tuple[Bank, int]]:
        """Every bank with its memory count, ordered by id."""
        with self._read() as conn:
            rows = conn.execute(self._q["list_banks"]).fetchall()
        return [(self._columns.bank_row(r), int(r["n"])) for r in rows]

    def bank_stats(self, bank_id: str) -> dict[str, Any]:
        """Live counts: memories by fact type, documents, operations by status, pending consolidation, last write."""
        with self._read() as conn:
            by_type = {r["fact_type"]: int(r["n"]) for r in conn.execute(self._q["stats_by_type"], (bank_id,))}
            by_status = {r["status"]: int(r["n"]) for r in conn.execute(self._q["stats_by_status"], (bank_id,))}
            documents = conn.execute(self._q["stats_documents"], (bank_id,)).fetchone()
            pending = conn.execute(self._q["stats_pending_consolidation"], (bank_id,)).fetchone()
            consolidated = conn.execute(self._q["stats_last_consolidated"], (bank_id,)).fetchone()
            last = conn.execute(self._q["bank_last_write"], (bank_id,)).fetchone()
        return {
            "nodes_by_fact_type": by_type,
            "total_nodes": sum(by_type.values()),
            "total_documents": int(documents["n"]) if documents else 0,
            "operations_by_status": by_status,
            "pending_consolidation": int(pending["n"]) if pending else 0,
            "last_consolidated_at": self._maybe_time(consolidated["at"] if consolidated else None),
            "last_memory_write_at": self._maybe_time(last["last_memory_write_at"] if last else None),
        }

    def bank_embedding_model(self, bank_id: str) -> tuple[str, int] | None:
        """``(model name, dimension)`` the bank's vectors were made with; None before its first recorded vector."""
        with self._read() as conn:
            row = conn.execute(self._q["bank_embedding_model"], (bank_id,)).fetchone()
        return None if row is None else (str(row["model"]), int(row["dimension"]))

    def record_bank_embedding_model(self, bank_id: str, model: str, dimension: int) -> tuple[str, int] | None:
        """Record ``(model, dimension)`` for the bank unless one is recorded already; returns the bank's record
        afterwards (the earlier one when it differs; None when the bank does not exist)."""
        with self._tx() as conn:
            stamp = self._columns.time(utcnow())
            conn.execute(self._q["record_bank_embedding_model"], (model, dimension, stamp, bank_id))
            row = conn.execute(self._q["bank_embedding_model"], (bank_id,)).fetchone()
        return None if row is None else (str(row["model"]), int(row["dimension"]))

    def bank_last_memory_write_at(self, bank_id: str) -> datetime | None:
        """Stamp of the bank's newest memory write (insert, edit or delete); None before the first."""
        with self._read() as conn:
            row = conn.execute(self._q["bank_last_write"], (bank_id,)).fetchone()
        return None if row is None else self._maybe_time(row["last_memory_write_at"])

    def _maybe_time(self, value: Any) -> datetime | None:
        """A stored time column as an aware datetime; NULL stays None."""
        return None if value is None else self._columns.load_time(value)

    # ---------------------------------------------------------------- consolidation reads

    def unconsolidated_facts(self, bank_id: str, limit: int) -> list[MemoryUnit]:
        """Facts (world/experience) not yet consolidated, oldest first."""
        return self._all(self._q["unconsolidated_facts"], (bank_id, limit), self._columns.memory_row)

    def list_observations(self, bank_id: str) -> list[MemoryUnit]:
        """Every observation of the bank, oldest first."""
        return self._all(self._q["list_observations"], (bank_id,), self._columns.memory_row)

    def observations_losing_sources(self, bank_id: str, requeued: Sequence[str]) -> list[MemoryUnit]:
        """Observations citing a source fact that no longer exists, or one of ``requeued`` (facts an edit sent back
        to consolidation), oldest first: one query, however many observations the bank holds."""
        with self._read() as conn:
            rows = conn.execute(
                self._q["observations_losing_sources"], (bank_id, self._columns.text_list(list(requeued)))
            ).fetchall()
        return self._columns.memory_rows(rows)

    # ---------------------------------------------------------------- mental models

    def insert_mental_model(self, model: MentalModel) -> None:
        """Insert a new model (bank auto-created). Raises :class:`AlreadyExists` if the id is taken."""
        try:
            with self._tx() as conn:
                self._ensure_bank(conn, model.bank_id)
                conn.execute(self._q["insert_mental_model"], self._columns.model_params(model))
        except self._dialect.duplicate as exc:
            raise AlreadyExists(f"mental model {model.id!r} already exists") from exc

    def list_mental_models(
        self,
        bank_id: str,
        *,
        tags: Sequence[str],
        tags_match: TagsMatch,
        limit: int,
        offset: int,
        detail: str = "full",
        exclude_knowledge_pages: bool = False,
    ) -> tuple[list[MentalModel], int]:
        """A page of models ordered ``last_refreshed_at DESC, id DESC`` and the total matching; below ``full``
        detail the heavy columns are not read (``mental_model_columns``).

        Tag filter on models: ``any`` = overlaps, ``all`` = superset, ``exact`` = equal (empty tags: no filter).
        ``exclude_knowledge_pages`` leaves out the models that are knowledge pages.
        """
        where, params = self._dialect.model_tags(tags, tags_match)
        if exclude_knowledge_pages:
            where += self._q["exclude_knowledge_pages"]
        with self._read() as conn:
            rows = conn.execute(
                self._q["list_mental_models"].format(where=where, columns=mental_model_columns(detail)),
                (bank_id, *params, bank_id, *params, limit, offset),
            ).fetchall()
            if rows or not offset:  # the page carries the total (a scalar subquery); only past the end ask again
                total = int(rows[0]["total_rows"]) if rows else 0
            else:
                row = conn.execute(self._q["count_mental_models"].format(where=where), (bank_id, *params)).fetchone()
                total = 0 if row is None else int(row["n"])
        return [self._columns.model_row(r) for r in rows], total

    def get_mental_model(self, bank_id: str, model_id: str) -> MentalModel | None:
        """One model, or None."""
        return self._one(self._q["get_mental_model"], (bank_id, model_id), self._columns.model_row)

    def delete_mental_model(self, bank_id: str, model_id: str) -> bool:
        """Delete a model with its history and citations; False if it did not exist."""
        return self._changed(self._q["delete_mental_model"], (bank_id, model_id)) > 0

    def list_history(self, bank_id: str, model_id: str) -> list[HistoryEntry]:
        """History rows of a model, most recent first, each with the ``version`` number it was written with (None
        for a failure record)."""
        return self._all(self._q["list_history"], (bank_id, model_id), self._columns.history_row)

    def citing_models(self, bank_id: str, memory_id: str) -> list[str]:
        """Ids of the mental models whose current document cites ``memory_id`` (the citation index), sorted."""
        with self._read() as conn:
            rows = conn.execute(self._q["citing_models"], (bank_id, memory_id)).fetchall()
        return [r["mental_model_id"] for r in rows]

    def list_models_with_trigger(self, key: str, *, bank_id: str | None = None) -> list[MentalModel]:
        """Every mental model (of ``bank_id``, or of all banks) whose trigger has a truthy ``key``."""
        return self._all(self._q["list_models_with_trigger"], (key, key, bank_id, bank_id), self._columns.model_row)

    def save_refresh(
        self, model: MentalModel, *, history: dict[str, Any] | None, history_cap: int, spend: SpendRecord | None = None
    ) -> None:
        """Persist a model's refresh state, its citations, (optionally) one history row and the refresh's spend in
        one transaction.

        ``history_cap`` > 0 keeps only that many rows of the same kind per model (oldest trimmed).
        Raises ``LookupError`` if the model was deleted meanwhile.
        """
        with self._tx() as conn, closing(conn.cursor()) as cur:
            cur.execute(self._q["update_mental_model"], self._columns.model_update_params(model))
            if cur.rowcount == 0:
                raise LookupError(f"mental model {model.id!r} no longer exists")
            if spend is not None:
                cur.execute(self._q["add_refresh_spend"], spend.params())
            cur.execute(self._q["delete_citations"], (model.bank_id, model.id))
            cited = cited_ids(model.structured_document)
            if cited:
                cur.executemany(self._q["insert_citation"], [(model.bank_id, model.id, mid) for mid in cited])
            if history is not None:
                cur.execute(self._q["insert_history"], self._history_params(model, history))
                if history_cap > 0:
                    kind = self._history_kind[history.get("kind") == "refresh_failed"]
                    cur.execute(
                        self._q["trim_history"].format(kind=kind),
                        (model.bank_id, model.id, model.bank_id, model.id, history_cap),
                    )

    def _history_params(self, model: MentalModel, history: dict[str, Any]) -> tuple[Any, ...]:
        """The ``insert_history`` parameters of a model's new history row, stamped now."""
        return (model.bank_id, model.id, self._columns.json(history), self._columns.time(utcnow()),
                *history_numbering(model, history))  # fmt: skip

    # ---------------------------------------------------------------- refresh spend and governance

    def add_refresh_spend(self, spend: SpendRecord) -> None:
        """Add one refresh's spend to its model's row of the day (used when nothing else is written: a transient
        attempt; a recorded refresh adds its spend inside ``save_refresh``)."""
        with self._tx() as conn:
            self._ensure_bank(conn, spend.bank_id)
            conn.execute(self._q["add_refresh_spend"], spend.params())

    def refresh_spend_by_model(self, bank_id: str, model_ids: Sequence[str], day: str) -> dict[str, Spend]:
        """Each listed model's refresh spend on ``day`` (UTC ``YYYY-MM-DD``) and over all days (models that never
        spent are absent). One statement for the whole list (:meth:`refresh_status_reads`)."""
        return self.refresh_status_reads(bank_id, model_ids, day)[0]

    def refresh_status_reads(
        self, bank_id: str, model_ids: Sequence[str], day: str
    ) -> tuple[dict[str, Spend], dict[str, Any]]:
        """What the refresh status of a page of models needs, in ONE statement: each listed model's spend (as
        :meth:`refresh_spend_by_model`) and the bank's overrides (``{}`` when the bank has none or does not
        exist)."""
        ids = list(dict.fromkeys(model_ids)) or [""]
        statement, id_params = self._bind_ids(self._q["refresh_spend_models"], ids)
        statement = f"{statement} UNION ALL {self._q['bank_config_row']}"
        with self._read() as conn:
            rows = conn.execute(statement, (day, bank_id, *id_params, bank_id)).fetchall()
        by_model: dict[str, list[Any]] = {}
        config: dict[str, Any] = {}
        for r in rows:
            if r["mental_model_id"] is None:
                config = self._columns.load_json(r["bank_config"]) or {}
            else:
                by_model.setdefault(r["mental_model_id"], []).append(r)
        return {model_id: fold_spend(group) for model_id, group in by_model.items()}, config

    def bank_refresh_spend(self, bank_id: str, day: str) -> Spend:
        """The bank's refresh spend on ``day`` (UTC ``YYYY-MM-DD``) and over all days."""
        with self._read() as conn:
            rows = conn.execute(self._q["refresh_spend_bank"], (day, bank_id)).fetchall()
        return fold_spend(rows)

    def count_failing_models(self, bank_id: str) -> int:
        """How many of the bank's models have failed since their last completed refresh (``refresh_state``)."""
        with self._read() as conn:
            row = conn.execute(self._q["count_failing_models"], (bank_id,)).fetchone()
        return 0 if row is None else int(row["n"])

    # ---------------------------------------------------------------- operations and LLM tracing

    def submit_operation(self, op: Operation, *, ensure_bank: bool = True) -> None:
        """Insert a new operation (bank auto-created unless ``ensure_bank`` is false: a restore records its
        operation against the bank it is about to create)."""
        with self._tx() as conn:
            if ensure_bank:
                self._ensure_bank(conn, op.bank_id)
            conn.execute(self._q["insert_operation"], self._columns.operation_params(op))

    def submit_operation_once(self, op: Operation) -> tuple[Operation, bool]:
        """Insert ``op`` unless an operation with its id exists (bank auto-created): a client's retry of a request
        that names its operation id. Returns ``(the operation stored under that id, created)``; the caller decides
        whether a stored one is the same request. Raises ``KeyError`` when the id is taken in another bank."""
        with self._tx() as conn:
            self._ensure_bank(conn, op.bank_id)
            created = conn.execute(self._q["insert_operation_once"], self._columns.operation_params(op)).rowcount == 1
            row = conn.execute(self._q["get_operation"], (op.bank_id, op.id)).fetchone()
        if row is None:
            raise KeyError(op.id)
        return self._columns.operation_row(row), created

    def renew_lease(self, operation_id: str, token: str, lease_seconds: float, *, now: datetime | None = None) -> bool:
        """Extend a running operation's lease to ``now + lease_seconds`` while ``token`` still holds it (the
        worker's heartbeat); False when the claim is gone (another worker reclaimed it, or it finished)."""
        now = now or utcnow()
        until = now + timedelta(seconds=lease_seconds)
        with self._tx() as conn:
            cur = conn.execute(
                self._q["renew_lease"], (self._columns.time(until), self._columns.time(now), operation_id, token)
            )
            return int(cur.rowcount) == 1

    def _check_fence(self, conn: Any) -> None:
        """The claim fence (:mod:`mindbank.store.fence`): the last statement of a write transaction run by a worker's
        handler. Stores the fence's staged progress and raises :class:`~mindbank.store.fence.LeaseLost` (the caller
        rolls back) unless the operation is still processing under the fence's token. No fence: nothing."""
        fence = current_fence()
        if fence is None:
            return
        progress = fence.take_staged()
        params = (None if progress is None else self._columns.json(progress), fence.operation_id, fence.token)
        if int(conn.execute(self._q["fence_operation"], params).rowcount) != 1:
            fence.lost.set()
            raise LeaseLost(f"operation {fence.operation_id}: its claim is gone; this transaction was rolled back")

    def list_operations(
        self, bank_id: str, *, status: str | None, operation_type: str | None, limit: int, offset: int
    ) -> tuple[list[Operation], int]:
        """A page of the bank's operations, newest first, and the total."""
        where, params = "", []
        if status:
            where += " AND " + self._dialect.equals("status")
            params.append(status)
        if operation_type:
            where += " AND " + self._dialect.equals("operation_type")
            params.append(operation_type)
        with self._read() as conn:
            row = conn.execute(self._q["count_operations"].format(where=where), (bank_id, *params)).fetchone()
            statement = self._q["list_operations"].format(where=where)
            rows = conn.execute(statement, (bank_id, *params, limit, offset)).fetchall()
        return [self._columns.operation_row(r) for r in rows], 0 if row is None else int(row["n"])

    def get_operation(self, bank_id: str, operation_id: str) -> Operation | None:
        """One operation of the bank, or None."""
        return self._one(self._q["get_operation"], (bank_id, operation_id), self._columns.operation_row)

    def record_llm_request(self, record: LLMRequestRecord) -> None:
        """Store one traced LLM attempt."""
        with self._tx() as conn:
            conn.execute(self._q["insert_llm_request"], self._columns.llm_request_params(record))

    def list_llm_requests(self, bank_id: str, operation_id: str, *, limit: int) -> list[LLMRequestRecord]:
        """The traced attempts of one operation, oldest first (at most ``limit``)."""
        return self._all(self._q["list_llm_requests"], (bank_id, operation_id, limit), self._columns.llm_request_row)

    def purge_llm_requests(self, before: datetime) -> int:
        """Delete traced attempts created before ``before``; returns how many went."""
        return self._changed(self._q["purge_llm_requests"], (self._columns.time(before),))


def observation_mentions(
    ids: Sequence[str], creates: Sequence[NewMemory], updates: Sequence[tuple[str, tuple[str, ...], int]]
) -> list[tuple[str, tuple[str, ...], int]]:
    """The observations of a consolidation write whose mentions (``mention_count``, ``last_mentioned_at``: how many
    sources and the newest of their mentions) the store recomputes: every update ``(id, source ids, proof)`` and
    every new observation of several sources (``ids`` are the new rows' ids, in ``creates`` order)."""
    several = [(i, tuple(c.source_memory_ids or ()), c.proof_count or 1) for i, c in zip(ids, creates, strict=True)]
    return [*updates, *(s for s in several if len(s[1]) > 1)]
