"""Helpers the store contract tests share."""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.engine.refresh.staleness import stale_kinds
from mindbank.store.base import StalenessProbe, Store


def stale_flags(store: Store, bank_id: str, probes: Sequence[StalenessProbe]) -> dict[str, bool]:
    """``{model id: stale}`` for a page of staleness probes: what a model listing marks (``stale_kinds``, any kind)."""
    return {model_id: kind is not None for model_id, kind in stale_kinds(store, bank_id, probes).items()}
