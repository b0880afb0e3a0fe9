"""The committed duplication counter (`scripts/duplication.py`, `make duplication`) sees copies by shape."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "duplication.py"


@pytest.fixture(scope="module")
def counter():
    spec = importlib.util.spec_from_file_location("duplication_counter", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


BODY = '''
def {name}(self, {arg}: str, limit: int = 10) -> list[str]:
    """{doc}"""
    rows = self.{conn}.execute("SELECT {col} FROM t WHERE x = ?", ({arg},)).fetchall()
    found = [row[0] for row in rows if row[1] > {number}]
    found.sort(key=lambda item: (item.lower(), len(item)))
    return found[:limit]
'''


def count(counter, tmp_path, sources: dict[str, str]) -> tuple[int, int]:
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    files = [counter.shaped_lines(p.read_text()) for p in counter.python_files([tmp_path])]
    found = list(counter.runs(files, 6, 8, 2))
    return len(found), max((r.length for r in found), default=0)


def test_same_shape_with_other_names_strings_and_numbers_is_one_pair(counter, tmp_path):
    a = BODY.format(name="list_a", arg="bank", doc="One.", conn="db", col="a", number=1)
    b = BODY.format(name="fetch_b", arg="scope", doc="Two, longer.", conn="pool", col="b", number=99)
    assert count(counter, tmp_path, {"a.py": a, "b.py": b}) == (1, 6)  # overlapping windows merged into one run


def test_a_different_shape_is_no_pair(counter, tmp_path):
    a = BODY.format(name="list_a", arg="bank", doc="One.", conn="db", col="a", number=1)
    b = a.replace("if row[1] >", "if row[1] is not None and row[1] >")
    assert count(counter, tmp_path, {"a.py": a, "b.py": b}) == (0, 0)


def test_keyword_argument_lists_are_thin_and_not_a_copy(counter, tmp_path):
    call = "f(\n" + "".join(f"    {n}={n},\n" for n in ("a", "b", "c", "d", "e", "g", "h")) + ")\n"
    assert count(counter, tmp_path, {"a.py": call, "b.py": call.replace("f(", "other(")}) == (0, 0)


def test_main_prints_pairs_lines_and_rate(counter, tmp_path, capsys):
    a = BODY.format(name="list_a", arg="bank", doc="One.", conn="db", col="a", number=1)
    (tmp_path / "a.py").write_text(a)
    (tmp_path / "b.py").write_text(a)
    assert counter.main([str(tmp_path)]) == 0
    lines = len(a.splitlines()) * 2
    assert capsys.readouterr().out.splitlines()[0] == (
        f"duplication: 1 pairs, {lines} lines of src, {1000 / lines:.1f} pairs per 1,000 lines"
    )
