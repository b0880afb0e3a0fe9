"""The knowledge base's pure parts: tree rules and filtering (domain), page documents, snippets and the export
bundle, and the hybrid page ranking (engine)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from mindbank.domain.knowledge import (
    EMPTY_NOTICE,
    KnowledgeNode,
    PageLogEntry,
    bundle,
    check_move,
    check_name,
    kept_nodes,
    page_default_trigger,
    page_markdown,
    page_type,
    snippet,
    vector_text,
    walk,
)
from mindbank.domain.records import MentalModel
from mindbank.domain.trigger import default_trigger
from mindbank.engine.knowledge_search import MIN_COSINE, bm25, nearest, rank_pages, tokens
from mindbank.errors import InvalidInputError, NotFoundError

T = datetime(2026, 3, 1, tzinfo=UTC)


def n(node_id: str, parent: str | None = None, page: str | None = None, name: str | None = None) -> KnowledgeNode:
    return KnowledgeNode(node_id, "b", "page" if page else "folder", name or node_id, parent, page, T, T)


def mm(model_id: str, content: str = "", tags: tuple[str, ...] = ()) -> MentalModel:
    return MentalModel(
        id=model_id, bank_id="b", name=model_id, source_query=f"What about {model_id}?", content=content, tags=tags,
        max_tokens=2048, trigger=default_trigger(), structured_document=None, reflect_response=None,
        last_refreshed_at=T, last_memory_seen_at=None, last_refreshed_source_query=None, last_refresh_failed_at=None,
        last_full_refreshed_at=None, created_at=T,
    )  # fmt: skip


def test_names_and_moves() -> None:
    assert check_name("  Notes ") == "Notes"
    for bad in ("", "   ", "x" * 257):
        with pytest.raises(InvalidInputError):
            check_name(bad)
    chain = [n("b", parent="a"), n("a")]  # parent b, then its ancestor a
    check_move("c", "b", chain)
    with pytest.raises(InvalidInputError, match="descendants"):
        check_move("a", "b", chain)
    with pytest.raises(InvalidInputError, match="is a page"):
        check_move("c", "p", [n("p", page="m")])
    with pytest.raises(NotFoundError):
        check_move("c", "missing", [])


def test_walk_orders_folders_first_then_names_and_filtering_keeps_paths() -> None:
    nodes = [n("z-page", page="m1", name="Zed"), n("b", name="beta"), n("a", name="Alpha"), n("p", "a", "m2", "page"),
             n("deep", "b"), n("q", "deep", "m3", "q")]  # fmt: skip
    assert [node.id for node, _ in walk(nodes)] == ["a", "p", "b", "deep", "q", "z-page"]
    assert [p.id for p in {node.id: path for node, path in walk(nodes)}["q"]] == ["b", "deep"]
    assert kept_nodes(nodes, None) == nodes
    assert {k.id for k in kept_nodes(nodes, {"q"})} == {"b", "deep", "q"}
    assert kept_nodes(nodes, set()) == []


def test_page_defaults_and_overrides() -> None:
    default = page_default_trigger(None)
    assert (default["mode"], default["fact_types"], default["refresh_after_consolidation"]) == (
        "delta",
        ["observation"],
        True,
    )
    assert default["exclude_mental_models"] is True and set(default) == set(default_trigger())
    own = page_default_trigger({"refresh_cron": "0 3 * * *"})
    assert own["mode"] == "full" and own["refresh_cron"] == "0 3 * * *"  # an override replaces the reference's default
    with pytest.raises(ValueError, match="refresh_after_consolidation and refresh_cron"):
        page_default_trigger({"refresh_cron": "0 3 * * *", "refresh_after_consolidation": True})


def test_page_markdown_snippet_and_type() -> None:
    assert page_type(["user:a", "type:person"]) == "person" and page_type(["type:"]) == "knowledge-page"
    body = "## Training\n\n- Alice: I run. [mem:abc-1]\n"
    doc = page_markdown(n("p", page="m", name='Say "hi": now'), mm("m", body, ("type:person",)), empty_notice=True)
    front, rest = doc.split("---\n")[1], doc.split("---\n", 2)[2]
    values = dict(line.split(": ", 1) for line in front.strip().splitlines())
    assert json.loads(values["name"]) == 'Say "hi": now' and json.loads(values["type"]) == "person"
    assert json.loads(values["tags"]) == ["type:person"] and rest.strip() == body.strip()
    assert page_markdown(n("p", page="m"), mm("m"), empty_notice=True).endswith(EMPTY_NOTICE + "\n")
    assert page_markdown(n("p", page="m"), mm("m"), empty_notice=False).endswith("---\n\n")
    assert snippet(body) == "Training - Alice: I run."
    assert snippet("") == EMPTY_NOTICE
    embedded = vector_text(n("p", page="m", name="Plan"), mm("m", "## Run\n\n" + "- Alice runs far. [mem:x]\n\n" * 100))
    assert embedded.startswith("Plan\nWhat about m?\nRun - Alice runs far.") and len(embedded) < 320
    assert vector_text(n("p", page="m", name="Plan"), mm("m")) == "Plan\nWhat about m?"
    long = snippet("word " * 200, limit=50)
    assert len(long) <= 51 and long.endswith("…")


def test_bundle_paths_are_unique_per_folder_and_the_log_names_pages() -> None:
    nodes = [n("f", name="My Folder!"), n("p1", "f", "m1", "Same"), n("p2", "f", "m2", "same"), n("p3", None, "m3", "Same"),
             n("orphan", None, "gone", "Orphan")]  # fmt: skip
    models = {m: mm(m, f"Body {m}") for m in ("m1", "m2", "m3")}
    log = [PageLogEntry("m1", T, False, None, None),
           PageLogEntry("m2", datetime(2026, 3, 2, tzinfo=UTC), True, "refresh_failed", "no_answer")]  # fmt: skip
    files = dict(bundle(nodes, models, log))
    assert list(files) == ["index.md", "my-folder/same.md", "my-folder/same-2.md", "same.md", "log.md"]
    assert (
        "- My Folder!/\n  - [Same](my-folder/same.md)\n  - [same](my-folder/same-2.md)\n- [Same](same.md)"
        in files["index.md"]
    )
    lines = files["log.md"].splitlines()
    assert lines[2].endswith("same: refresh failed (no_answer)") and lines[3].endswith("Same: updated")  # newest first
    assert dict(bundle([], {}, []))["index.md"].endswith("(empty)\n")


def test_bm25_weighs_rare_terms_and_length() -> None:
    docs = {
        "a": "marathon training plan",
        "b": "bread bread bread baking",
        "c": "training diary with many many words here",
    }
    assert tokens("Alice's marathon, the plan") == ["alice", "marathon", "plan"]
    assert [i for i, _ in bm25("marathon", docs)] == ["a"]
    assert [i for i, _ in bm25("training", docs)] == ["a", "c"]  # the shorter document first
    assert bm25("the and of", docs) == [] and bm25("x", {}) == []


def test_fusion_is_normalised_and_the_vector_arm_has_a_floor() -> None:
    vectors = {
        "a": np.array([1, 0], np.float32),
        "b": np.array([0.6, 0.8], np.float32),
        "c": np.array([0, 1], np.float32),
    }
    query = np.array([1, 0], np.float32)
    assert [i for i, _ in nearest(query, vectors)] == ["a", "b"]  # c: cosine 0 < MIN_COSINE
    assert MIN_COSINE > 0
    ranked = rank_pages("marathon", query, {"a": "marathon", "b": "bread", "c": "marathon marathon bread"}, vectors)
    scores = dict(ranked)
    assert ranked[0] == ("a", 1.0)  # first in both arms
    assert 0 < scores["c"] < 1 and 0 < scores["b"] < 1 and set(scores) == {"a", "b", "c"}


def test_the_page_default_trigger_setting_is_a_json_object() -> None:
    from mindbank.config import Settings

    env = "MINDBANK_KNOWLEDGE_PAGE_DEFAULT_TRIGGER"
    assert Settings.from_env({env: '{"mode": "full"}'}).knowledge_page_default_trigger == {"mode": "full"}
    assert Settings.from_env({}).knowledge_page_default_trigger is None
    for bad in ("{mode", '["mode"]'):
        with pytest.raises(ValueError, match=env):
            Settings.from_env({env: bad})
