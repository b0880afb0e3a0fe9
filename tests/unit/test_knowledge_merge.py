"""Placing an imported knowledge tree into a bank's (domain.knowledge.merge): an empty bank takes it as it is; a bank
with a tree keeps every node it has, and the tree's rules hold (unique sibling names, unique ids)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mindbank.domain.knowledge import MAX_NAME_LENGTH, KnowledgeNode, free_name, merge_tree

T = datetime(2026, 3, 1, tzinfo=UTC)


def node(node_id: str, kind: str, name: str, parent: str | None = None, model: str | None = None) -> KnowledgeNode:
    return KnowledgeNode(node_id, "b", kind, name, parent, model, T, T)  # type: ignore[arg-type]


def test_an_empty_bank_takes_the_tree_as_it_is() -> None:
    incoming = [node("f", "folder", "F"), node("g", "folder", "G", "f"), node("p", "page", "P", "g", "m")]
    merged = merge_tree([], incoming)
    assert merged.nodes == incoming and merged.renamed_pages == {}
    assert (merged.folders_merged, merged.nodes_renamed, merged.ids_replaced) == (0, 0, 0)


def test_clashes_merge_folders_and_rename_the_rest() -> None:
    bank = [
        node("a", "folder", "Runners"),
        node("x", "page", "Bakers", None, "m0"),
        node("p", "page", "Alice", "a", "m1"),
    ]
    incoming = [
        node("r", "folder", "Runners"),
        node("p", "page", "Alice", "r", "m2"),  # a sibling's name and a bank's id
        node("q", "page", "Alice", "r", "m3"),  # and again: the next free name
        node("b", "folder", "Bakers"),  # the bank has a page of that name: not the same folder
        node("c", "page", "Cake", "b", "m4"),
    ]
    merged = merge_tree(bank, incoming, new_id=iter(["fresh"]).__next__)
    placed = {(n.parent_id, n.name): n for n in merged.nodes}
    assert set(placed) == {("a", "Alice (2)"), ("a", "Alice (3)"), (None, "Bakers (2)"), ("b", "Cake")}
    assert placed[("a", "Alice (2)")].id == "fresh" and placed[("a", "Alice (3)")].id == "q"
    assert merged.renamed_pages == {"m2": "Alice (2)", "m3": "Alice (3)"}
    assert (merged.folders_merged, merged.nodes_renamed, merged.ids_replaced) == (1, 3, 1)


def test_a_folder_the_bank_has_by_id_takes_the_contents_where_the_bank_keeps_it() -> None:
    bank = [node("f", "folder", "Renamed here"), node("g", "folder", "Other")]
    merged = merge_tree(bank, [node("f", "folder", "Original", None), node("p", "page", "P", "f", "m")])
    assert [(n.id, n.parent_id) for n in merged.nodes] == [("p", "f")] and merged.folders_merged == 1


def test_a_renamed_name_stays_within_the_limit_and_a_parent_must_come_first() -> None:
    long = "x" * MAX_NAME_LENGTH
    assert free_name(long, {long}) == "x" * (MAX_NAME_LENGTH - 4) + " (2)"
    with pytest.raises(ValueError, match="is not an earlier folder"):
        merge_tree([], [node("p", "page", "P", "f", "m"), node("f", "folder", "F")])
