"""The store contract suite runs against every backend: add a backend to ``BACKENDS`` and it is covered."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mindbank.store.base import Store, open_store

DIM = 4


def _sqlite(tmp_path: Path) -> Store:
    return open_store(str(tmp_path / "contract.db"), dimension=DIM)


BACKENDS: dict[str, Callable[[Path], Store]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = BACKENDS[request.param](tmp_path)
    yield s
    s.close()
