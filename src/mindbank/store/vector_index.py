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

_TYPE_CODE = {t: i for i, t in enumerate(FACT_TYPES)}


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the index keeps of one memory. ``updated`` is ``updated_at`` as POSIX seconds."""

    id: str
    vector: npt.NDArray[np.float32]
    fact_type: str
    tags: tuple[str, ...]
    updated: float


@dataclass(frozen=True)
class VectorIndex:
    """Immutable snapshot of a bank's vectors. Rows removed by :meth:`without` are masked, not compacted."""

    dimension: int
    ids: tuple[str, ...] = ()
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    types: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))
    updated: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    tag_keys: npt.NDArray[np.object_] = field(default_factory=lambda: np.zeros(0, object))
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, bool))
    tag_rows: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, dimension: int, rows: Sequence[IndexRow]) -> VectorIndex:
        """An index over ``rows``."""
        return cls(dimension=dimension, matrix=np.zeros((0, dimension), np.float32)).with_rows(rows)

    def __len__(self) -> int:
        return int(self.alive.sum())

    def with_rows(self, rows: Sequence[IndexRow]) -> VectorIndex:
        """A new index with ``rows`` appended (a row whose id exists replaces it)."""
        if not rows:
            return self
        replaced = [r.id for r in rows if r.id in self.positions]
        base = self.without(replaced) if replaced else self
        start = len(base.ids)
        matrix = np.vstack([base.matrix.reshape(-1, self.dimension), np.stack([r.vector for r in rows])])
        tag_rows = dict(base.tag_rows)
        new_tag_rows: dict[str, list[int]] = {}
        for offset, row in enumerate(rows):
            for tag in row.tags:
                new_tag_rows.setdefault(tag, []).append(start + offset)
        for tag, idx in new_tag_rows.items():
            tag_rows[tag] = np.concatenate([tag_rows.get(tag, np.zeros(0, np.int64)), np.array(idx, np.int64)])
        positions = dict(base.positions)
        positions.update({r.id: start + i for i, r in enumerate(rows)})
        return VectorIndex(
            dimension=self.dimension,
            ids=base.ids + tuple(r.id for r in rows),
            matrix=matrix.astype(np.float32, copy=False),
            types=np.concatenate([base.types, np.array([_TYPE_CODE[r.fact_type] for r in rows], np.int8)]),
            updated=np.concatenate([base.updated, np.array([r.updated for r in rows], np.float64)]),
            tag_keys=np.concatenate([base.tag_keys, np.array(["\x1f".join(r.tags) for r in rows], object)]),
            alive=np.concatenate([base.alive, np.ones(len(rows), bool)]),
            tag_rows=tag_rows,
            positions=positions,
        )

    def without(self, ids: Sequence[str]) -> VectorIndex:
        """A new index with ``ids`` masked out (unknown ids are ignored)."""
        idx = [self.positions[i] for i in ids if i in self.positions]
        if not idx:
            return self
        alive = self.alive.copy()
        alive[idx] = False
        positions = {k: v for k, v in self.positions.items() if alive[v]}
        return VectorIndex(
            dimension=self.dimension,
            ids=self.ids,
            matrix=self.matrix,
            types=self.types,
            updated=self.updated,
            tag_keys=self.tag_keys,
            alive=alive,
            tag_rows=self.tag_rows,
            positions=positions,
        )

    def restamped(self, ids: Sequence[str], updated: float) -> VectorIndex:
        """A new index whose rows ``ids`` carry the new ``updated_at`` (POSIX seconds)."""
        idx = [self.positions[i] for i in ids if i in self.positions]
        if not idx:
            return self
        stamps = self.updated.copy()
        stamps[idx] = updated
        return VectorIndex(
            dimension=self.dimension,
            ids=self.ids,
            matrix=self.matrix,
            types=self.types,
            updated=stamps,
            tag_keys=self.tag_keys,
            alive=self.alive,
            tag_rows=self.tag_rows,
            positions=self.positions,
        )

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
        if fact_types is not None:
            m &= np.isin(self.types, [_TYPE_CODE[t] for t in fact_types])
        if updated_before is not None:
            m &= self.updated <= updated_before
        if updated_after is not None:
            m &= self.updated > updated_after
        m &= self._tag_mask(tags, tags_match)
        for group in tag_groups:
            m &= self._group_mask(group)
        return m

    def _tag_mask(self, tags: Sequence[str], tags_match: str) -> npt.NDArray[np.bool_]:
        if tags_match not in TAGS_MATCH_MODES:
            raise ValueError(f"unknown tags_match mode: {tags_match!r}")
        want = sorted(set(tags))
        if tags_match == "exact":
            return self.tag_keys == "\x1f".join(want)
        if not want:
            return np.ones(len(self.ids), bool)
        untagged = self.tag_keys == ""
        if tags_match.startswith("any"):
            hit = np.zeros(len(self.ids), bool)
            for tag in want:
                hit[self.tag_rows.get(tag, np.zeros(0, np.int64))] = True
        else:
            counts = np.zeros(len(self.ids), np.int32)
            for tag in want:
                counts[self.tag_rows.get(tag, np.zeros(0, np.int64))] += 1
            hit = counts == len(want)
        return hit & ~untagged if tags_match.endswith("strict") else hit | untagged

    def _group_mask(self, group: dict[str, Any]) -> npt.NDArray[np.bool_]:
        if "and" in group:
            return np.logical_and.reduce([self._group_mask(g) for g in group["and"]])
        if "or" in group:
            return np.logical_or.reduce([self._group_mask(g) for g in group["or"]])
        if "not" in group:
            return ~self._group_mask(group["not"])
        return self._tag_mask(group["tags"], group["match"])

    def search(self, query: npt.NDArray[np.float32], k: int, mask: npt.NDArray[np.bool_]) -> list[tuple[str, float]]:
        """Top ``k`` (id, cosine) among rows in ``mask``, best first."""
        candidates = np.flatnonzero(mask)
        if len(candidates) == 0 or k <= 0:
            return []
        scores = self.matrix[candidates] @ query.astype(np.float32)
        k = min(k, len(candidates))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[candidates[i]], float(scores[i])) for i in top]
