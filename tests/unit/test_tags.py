"""The five tag match modes (reference facts §4.1), and their strict variants."""

from __future__ import annotations

import pytest

from mindbank.domain.tags import matches, normalize_tags, strict

CASES = [
    # row tags, wanted, mode, expected
    (("a",), ("a",), "any", True),
    ((), ("a",), "any", True),
    (("b",), ("a",), "any", False),
    ((), ("a",), "any_strict", False),
    (("a", "b"), ("a",), "any_strict", True),
    (("a",), ("a", "b"), "all", False),
    ((), ("a", "b"), "all", True),
    (("a", "b", "c"), ("a", "b"), "all_strict", True),
    ((), ("a", "b"), "all_strict", False),
    (("a", "b"), ("b", "a"), "exact", True),
    (("a", "b", "c"), ("a", "b"), "exact", False),
    ((), (), "exact", True),
    (("a",), (), "exact", False),
    (("a",), (), "any_strict", True),
    ((), (), "all_strict", True),
]


@pytest.mark.parametrize(("row", "wanted", "mode", "expected"), CASES)
def test_truth_table(row: tuple[str, ...], wanted: tuple[str, ...], mode: str, expected: bool) -> None:
    assert matches(row, wanted, mode) is expected  # type: ignore[arg-type]


def test_unknown_mode_fails_loudly() -> None:
    with pytest.raises(ValueError, match="unknown tags_match"):
        matches(("a",), ("a",), "some")  # type: ignore[arg-type]


def test_strict_and_normalize() -> None:
    assert strict("any") == "any_strict" and strict("all") == "all_strict" and strict("exact") == "exact"
    assert normalize_tags([" b", "a", "b", ""]) == ("a", "b")
    assert normalize_tags(None) == ()
