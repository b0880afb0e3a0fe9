"""docs/api.md's reference coverage table: every operation of the reference's OpenAPI document once, each ✓ served by
mindbank at the reference's method and path, each ✗ with the reason mindbank does not have it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mindbank.server import create_app
from mindbank.service.facade import MindBank

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT.parent / "shared" / "reference" / "hindsight-wire" / "openapi.json"
_ROW = re.compile(r"^\| `(GET|POST|PUT|PATCH|DELETE) (/[^`]*)` \| `([a-z0-9_]+)` \| (✓|✗ .+) \|$", re.M)


def _table() -> list[tuple[str, str, str, str]]:
    text = (ROOT / "docs" / "api.md").read_text()
    return _ROW.findall(text.split("## Reference coverage", 1)[1])


def test_every_reference_operation_is_listed_once() -> None:
    if not OPENAPI.exists():
        pytest.skip("the reference's OpenAPI document is not available")
    spec = json.loads(OPENAPI.read_text())
    operations = {(m.upper(), p, o["operationId"]) for p, ops in spec["paths"].items() for m, o in ops.items()}
    rows = _table()
    assert len(operations) == 101 and len(rows) == len(operations)
    assert {(m, p, oid) for m, p, oid, _ in rows} == operations


def test_covered_rows_are_served_and_the_others_say_why(mindbank: MindBank) -> None:
    # the OpenAPI document lists every route, also those of included routers (not all of them are in app.routes)
    paths = create_app(mindbank, run_worker=False).openapi()["paths"]
    routes = {(method.upper(), re.sub(r"\{[^}]*\}", "{}", path)) for path, ops in paths.items() for method in ops}
    served = [(m, p) for m, p, _, status in _table() if status == "✓"]
    assert len(served) >= 67  # 59, and the eight knowledge-base operations
    assert [(m, p) for m, p in served if (m, re.sub(r"\{[^}]*\}", "{}", p)) not in routes] == []
    assert all(len(status) > 10 for _, _, _, status in _table() if status != "✓")
