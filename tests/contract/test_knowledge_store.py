"""The knowledge-base store family on every backend: the tree, its rules checked inside the write transaction,
subtree deletion with the pages' mental models, ``is_knowledge_page`` / ``exclude_knowledge_pages`` on model reads,
page-search vectors and the history log."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_store import model, vec

from mindbank.domain.knowledge import UNSET, KnowledgeNode
from mindbank.domain.timeutil import utcnow
from mindbank.errors import InvalidInputError, NotFoundError
from mindbank.store.base import AlreadyExists, Store


def node(node_id: str, *, parent: str | None = None, page: str | None = None, name: str | None = None) -> KnowledgeNode:
    now = utcnow()
    return KnowledgeNode(
        id=node_id, bank_id="b", kind="page" if page else "folder", name=name or node_id, parent_id=parent,
        mental_model_id=page, created_at=now, updated_at=now,
    )  # fmt: skip


@pytest.fixture
def tree(store: Store) -> Store:
    """root folders a (with a/b and page p1 under a) and c; page p2 at the root."""
    store.insert_knowledge_node(node("a"))
    store.insert_knowledge_node(node("a-b", parent="a"))
    store.insert_knowledge_node(node("c"))
    store.insert_knowledge_node(node("p1", parent="a-b", page="m1"), model=model(model_id="m1"))
    store.insert_knowledge_node(node("p2", page="m2"), model=model(model_id="m2"))
    return store


def test_nodes_round_trip_and_pages_create_their_models(tree: Store) -> None:
    nodes = {n.id: n for n in tree.list_knowledge_nodes("b")}
    assert set(nodes) == {"a", "a-b", "c", "p1", "p2"}
    assert nodes["p1"].kind == "page" and nodes["p1"].mental_model_id == "m1" and nodes["p1"].parent_id == "a-b"
    assert nodes["a"].kind == "folder" and nodes["a"].mental_model_id is None and nodes["a"].parent_id is None
    assert tree.get_knowledge_node("b", "p1") == nodes["p1"] and tree.get_knowledge_node("b", "nope") is None
    assert tree.list_knowledge_nodes("other") == []
    assert {m.id for m in tree.knowledge_page_models("b", detail="metadata")} == {"m1", "m2"}


def test_model_reads_say_which_models_are_pages(tree: Store) -> None:
    tree.insert_mental_model(model(model_id="solo"))
    got = tree.get_mental_model("b", "m1")
    assert got is not None and got.is_knowledge_page is True
    solo = tree.get_mental_model("b", "solo")
    assert solo is not None and solo.is_knowledge_page is False
    for detail in ("metadata", "content", "full"):
        models, total = tree.list_mental_models("b", tags=(), tags_match="any", limit=10, offset=0, detail=detail)
        assert total == 3 and {m.id: m.is_knowledge_page for m in models} == {"m1": True, "m2": True, "solo": False}
    models, total = tree.list_mental_models(
        "b", tags=(), tags_match="any", limit=10, offset=0, exclude_knowledge_pages=True
    )
    assert total == 1 and [m.id for m in models] == ["solo"]


def test_insert_checks_the_parent_and_sibling_names(tree: Store) -> None:
    before = tree.dump()  # type: ignore[attr-defined]
    with pytest.raises(NotFoundError):
        tree.insert_knowledge_node(node("x", parent="missing"))
    with pytest.raises(InvalidInputError) as exc:
        tree.insert_knowledge_node(node("x", parent="p1"))
    assert exc.value.field == "parent_id"
    with pytest.raises(AlreadyExists):
        tree.insert_knowledge_node(node("x", parent="a", name="a-b"))
    with pytest.raises(AlreadyExists):  # names are unique at the root too (parent NULL)
        tree.insert_knowledge_node(node("x", name="c"))
    with pytest.raises(AlreadyExists):  # a failed page insert leaves no mental model behind
        tree.insert_knowledge_node(node("x", name="p2", page="m9"), model=model(model_id="m9"))
    assert tree.dump() == before  # type: ignore[attr-defined]
    tree.insert_knowledge_node(node("x", parent="c", name="a-b"))  # the same name in another folder is fine


def test_update_renames_moves_and_writes_page_settings(tree: Store) -> None:
    moved = tree.update_knowledge_node(node("a-b"), name="renamed", parent_id="c")
    assert moved is not None and moved.parent_id == "c" and moved.name == "renamed"
    assert tree.update_knowledge_node(node("a-b"), name="renamed", parent_id=None).parent_id is None  # type: ignore[union-attr]
    stays = tree.update_knowledge_node(node("a-b"), name="again")
    assert stays is not None and stays.parent_id is None and stays.name == "again"
    current = tree.get_mental_model("b", "m1")
    assert current is not None
    settings = replace(current, name="Page one", source_query="new q", tags=("t",), max_tokens=4096,
                       trigger={**current.trigger, "mode": "delta"}, content="must not be written")  # fmt: skip
    tree.update_knowledge_node(node("p1"), name="Page one", parent_id=UNSET, model=settings)
    stored = tree.get_mental_model("b", "m1")
    assert stored is not None and (stored.name, stored.source_query, stored.tags, stored.max_tokens) == (
        "Page one", "new q", ("t",), 4096,
    )  # fmt: skip
    assert stored.trigger["mode"] == "delta" and stored.content == ""  # settings only: never the content
    assert tree.update_knowledge_node(node("gone"), name="x") is None


def test_update_refuses_cycles_pages_as_parents_unknown_parents_and_taken_names(tree: Store) -> None:
    before = tree.dump()  # type: ignore[attr-defined]
    for parent in ("a", "a-b"):  # itself, or its own descendant
        with pytest.raises(InvalidInputError, match="itself or one of its own descendants"):
            tree.update_knowledge_node(node("a"), name="a", parent_id=parent)
    with pytest.raises(InvalidInputError, match="is a page"):
        tree.update_knowledge_node(node("c"), name="c", parent_id="p2")
    with pytest.raises(NotFoundError):
        tree.update_knowledge_node(node("c"), name="c", parent_id="missing")
    with pytest.raises(AlreadyExists):
        tree.update_knowledge_node(node("c"), name="a")
    assert tree.dump() == before  # type: ignore[attr-defined]


def test_delete_takes_the_whole_subtree_with_the_pages_models(tree: Store) -> None:
    tree.insert_mental_model(model(model_id="solo"))
    removed = tree.delete_knowledge_node("b", "a")
    assert removed is not None and (removed.folders, removed.pages) == (2, 1)
    assert {n.id for n in tree.list_knowledge_nodes("b")} == {"c", "p2"}
    assert tree.get_mental_model("b", "m1") is None and tree.list_history("b", "m1") == []
    assert tree.get_mental_model("b", "solo") is not None and tree.get_mental_model("b", "m2") is not None
    assert tree.delete_knowledge_node("b", "a") is None
    page = tree.delete_knowledge_node("b", "p2")
    assert page is not None and (page.folders, page.pages) == (0, 1) and tree.get_mental_model("b", "m2") is None


def test_deleting_a_pages_model_or_the_bank_removes_its_nodes(tree: Store) -> None:
    assert tree.delete_mental_model("b", "m2")
    assert "p2" not in {n.id for n in tree.list_knowledge_nodes("b")}
    assert tree.delete_bank("b") >= 0
    assert tree.list_knowledge_nodes("b") == []


def test_page_vectors_are_kept_per_page_and_replaced(tree: Store) -> None:
    tree.save_page_vectors(
        "b", [("m1", "h1", vec(1, 0, 0, 0)), ("m2", "h2", vec(0, 1, 0, 0)), ("gone", "h", vec(1, 1, 0, 0))]
    )
    stored = tree.page_vectors("b")
    assert set(stored) == {"m1", "m2"}  # a page deleted meanwhile gets no vector
    assert stored["m1"][0] == "h1" and np.allclose(stored["m1"][1], vec(1, 0, 0, 0))
    tree.save_page_vectors("b", [("m1", "h3", vec(0, 0, 1, 0))])
    assert tree.page_vectors("b")["m1"][0] == "h3" and np.allclose(tree.page_vectors("b")["m1"][1], vec(0, 0, 1, 0))
    tree.delete_knowledge_node("b", "p2")
    assert set(tree.page_vectors("b")) == {"m1"}


def test_history_log_lists_pages_versions_and_failures(tree: Store) -> None:
    m1 = tree.get_mental_model("b", "m1")
    solo = model(model_id="solo")
    tree.insert_mental_model(solo)
    assert m1 is not None
    tree.save_refresh(m1, history={"previous_content": ""}, history_cap=0)
    tree.save_refresh(m1, history={"kind": "refresh_failed", "outcome": "refresh_failed", "failure_reason": "no_answer",
                                   "error_message": "x"}, history_cap=0)  # fmt: skip
    tree.save_refresh(solo, history={"previous_content": ""}, history_cap=0)  # not a page: not in the log
    log = sorted(tree.knowledge_history_log("b"), key=lambda e: e.failed)
    assert [(e.mental_model_id, e.failed, e.failure_reason) for e in log] == [
        ("m1", False, None),
        ("m1", True, "no_answer"),
    ]
