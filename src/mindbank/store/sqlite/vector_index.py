"""In-process exact vector index for one bank: a float32 matrix plus the columns that recall filters on.

Brute-force dot products over a contiguous matrix beat an ANN index at the sizes an embedded bank holds and give
exact results. Filters (fact types, tags in all five modes, ``updated_at`` bounds) are evaluated as numpy masks, so
a filtered query costs the same as an unfiltered one. Instances are immutable: writers build a new index with
:meth:`with_rows` / :meth:`without` and swap it in, so readers never see a half-applied write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from mindbank.domain.records import FACT_TYPES
from mindbank.domain.tags import TAGS_MATCH_MODES

_TYPE_CODE: dict[str, int] = {t: i for i, t in enumerate(FACT_TYPES)}


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the index keeps of one memory. ``updated`` is ``updated_at`` as POSIX seconds."""

    id: str
    vector: npt.NDArray[np.float32]
    fact_type: str
    tags: tuple[str, ...]
    updated: float


class _Columns:
    """Append-only column storage shared by successive snapshots of one bank's index.

    Buffers grow by doubling, so appending is amortised O(rows added). Only the newest snapshot appends (under the
    store's write lock); an older snapshot reads rows ``[:n]`` of the same buffers, which appends never touch.
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.capacity = 0
        self.matrix = np.zeros((0, dimension), np.float32)
        self.types = np.zeros(0, np.int8)
        self.updated = np.zeros(0, np.float64)
        self.tag_keys = np.zeros(0, object)
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}  # newest position of each id
        self.tag_lists: dict[str, list[int]] = {}
        self.tag_arrays: dict[str, npt.NDArray[np.int64]] = {}

    def reserve(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        capacity = max(needed, 2 * self.capacity, 1024)
        for name, dtype, shape in (
            ("matrix", np.float32, (capacity, self.dimension)),
            ("types", np.int8, (capacity,)),
            ("updated", np.float64, (capacity,)),
            ("tag_keys", object, (capacity,)),
        ):
            grown = np.zeros(shape, dtype)
            old = getattr(self, name)
            grown[: len(self.ids)] = old[: len(self.ids)]
            setattr(self, name, grown)
        self.capacity = capacity

    def tag_rows(self, tag: str, n: int) -> npt.NDArray[np.int64]:
        """Row indices below ``n`` carrying ``tag``."""
        rows = self.tag_lists.get(tag)
        if not rows:
            return np.zeros(0, np.int64)
        cached = self.tag_arrays.get(tag)
        if cached is None or len(cached) != len(rows):
            cached = self.tag_arrays[tag] = np.fromiter(rows, np.int64, len(rows))
        return cached if cached[-1] < n else cached[cached < n]


@dataclass(frozen=True)
class VectorIndex:
    """A snapshot of a bank's vectors: the first ``n`` rows of shared columns plus this snapshot's ``alive`` mask
    (rows removed by :meth:`without` are masked, not compacted)."""

    dimension: int
    columns: _Columns
    n: int = 0
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, bool))

    @classmethod
    def build(cls, dimension: int, rows: Sequence[IndexRow]) -> VectorIndex:
        """An index over ``rows``."""
        return cls(dimension=dimension, columns=_Columns(dimension)).with_rows(rows)

    def __len__(self) -> int:
        return int(self.alive.sum())

    @property
    def nbytes(self) -> int:
        """Memory of the vector buffer this snapshot shares (its capacity, not just its rows)."""
        return int(self.columns.matrix.nbytes)

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        return self.columns.matrix[: self.n]

    @property
    def ids(self) -> list[str]:
        return self.columns.ids

    @property
    def positions(self) -> dict[str, int]:
        """Live rows by id (newest snapshot only)."""
        return {i: p for i, p in self.columns.positions.items() if p < self.n and self.alive[p]}

    def position(self, memory_id: str) -> int | None:
        """The row of a live memory, or None."""
        p = self.columns.positions.get(memory_id)
        return p if p is not None and p < self.n and self.alive[p] else None

    def vector(self, memory_id: str) -> npt.NDArray[np.float32] | None:
        """A live memory's vector, or None."""
        p = self.position(memory_id)
        return None if p is None else self.columns.matrix[p]

    def with_rows(self, rows: Sequence[IndexRow]) -> VectorIndex:
        """A new index with ``rows`` appended (a row whose id exists replaces it). Call on the newest snapshot."""
        if not rows:
            return self
        base = self.without([r.id for r in rows])
        cols = base.columns
        start = base.n
        cols.reserve(start + len(rows))
        end = start + len(rows)
        cols.matrix[start:end] = np.stack([r.vector for r in rows])
        cols.types[start:end] = [_TYPE_CODE[r.fact_type] for r in rows]
        cols.updated[start:end] = [r.updated for r in rows]
        for offset, row in enumerate(rows):
            position = start + offset
            cols.tag_keys[position] = "\x1f".join(row.tags)
            cols.positions[row.id] = position
            for tag in row.tags:
                cols.tag_lists.setdefault(tag, []).append(position)
        del cols.ids[start:]
        cols.ids.extend(r.id for r in rows)
        alive = np.concatenate([base.alive, np.ones(len(rows), bool)])
        return VectorIndex(dimension=self.dimension, columns=cols, n=end, alive=alive)

    def without(self, ids: Sequence[str]) -> VectorIndex:
        """A new index with ``ids`` masked out (unknown ids are ignored)."""
        idx = [p for p in (self.position(i) for i in ids) if p is not None]
        if not idx:
            return self
        alive = self.alive.copy()
        alive[idx] = False
        return VectorIndex(dimension=self.dimension, columns=self.columns, n=self.n, alive=alive)

    def restamped(self, ids: Sequence[str], updated: float) -> VectorIndex:
        """The same index with rows ``ids`` carrying a new ``updated_at`` (POSIX seconds); stamps only grow, so
        an older snapshot seeing the newer stamp reads a bound that is still correct for it."""
        for p in (self.position(i) for i in ids):
            if p is not None:
                self.columns.updated[p] = updated
        return self

    def mask(
        self,
        *,
        fact_types: Sequence[str] | None,
        tags: Sequence[str],
        tags_match: str,
        updated_before: float | None,
        updated_after: float | None,
        tag_groups: Sequence[dict[str, Any]] = (),
    ) -> npt.NDArray[np.bool_]:
        """Rows passing the filter (same truth table as :func:`mindbank.domain.tags.matches`)."""
        m = self.alive.copy()
        cols, n = self.columns, self.n
        if fact_types is not None:
            m &= np.isin(cols.types[:n], [_TYPE_CODE[t] for t in fact_types])
        if updated_before is not None:
            m &= cols.updated[:n] <= updated_before
        if updated_after is not None:
            m &= cols.updated[:n] > updated_after
        m &= self._tag_mask(tags, tags_match)
        for group in tag_groups:
            m &= self._group_mask(group)
        return m

    def _tag_mask(self, tags: Sequence[str], tags_match: str) -> npt.NDArray[np.bool_]:
        if tags_match not in TAGS_MATCH_MODES:
            raise ValueError(f"unknown tags_match mode: {tags_match!r}")
        want = sorted(set(tags))
        n = self.n
        keys = self.columns.tag_keys[:n]
        if tags_match == "exact":
            exact: npt.NDArray[np.bool_] = keys == "\x1f".join(want)
            return exact
        if not want:
            return np.ones(n, bool)
        untagged = keys == ""
        if tags_match.startswith("any"):
            hit = np.zeros(n, bool)
            for tag in want:
                hit[self.columns.tag_rows(tag, n)] = True
        else:
            counts = np.zeros(n, np.int32)
            for tag in want:
                counts[self.columns.tag_rows(tag, n)] += 1
            hit = counts == len(want)
        mask: npt.NDArray[np.bool_] = hit & ~untagged if tags_match.endswith("strict") else hit | untagged
        return mask

    def _group_mask(self, group: dict[str, Any]) -> npt.NDArray[np.bool_]:
        if "and" in group:
            both: npt.NDArray[np.bool_] = np.logical_and.reduce([self._group_mask(g) for g in group["and"]])
            return both
        if "or" in group:
            either: npt.NDArray[np.bool_] = np.logical_or.reduce([self._group_mask(g) for g in group["or"]])
            return either
        if "not" in group:
            return ~self._group_mask(group["not"])
        return self._tag_mask(group["tags"], group["match"])

    def search(self, query: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_]) -> list[tuple[str, float]]:
        """Top ``k`` (id, cosine) among rows in ``mask``, best first.

        One matrix-vector product over the whole matrix, then masked rows are set to -inf: cheaper than gathering
        the selected rows into a copy first, and the same cost whatever the filter.
        """
        valid = int(mask.sum())
        if valid == 0 or k <= 0:
            return []
        scores = self.columns.matrix[: self.n] @ query.astype(np.float32, copy=False)
        if valid < len(scores):
            scores = np.where(mask, scores, -np.inf)
        k = min(k, valid)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = self.columns.ids
        return [(ids[i], float(scores[i])) for i in top]
