"""The knowledge-base endpoints, on both stores: tree, folders, pages, page, node patch and delete, hybrid search,
export, and the mental-model list's ``exclude_knowledge_pages``. The worker is off: tests drain it with
``run_pending`` so every step is deterministic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from postgres_testing import DatabaseFactory, require_postgres_url

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store

B = "/v1/default/banks/b"
KB = f"{B}/knowledge-base"


@pytest.fixture(scope="module")
def postgres() -> Iterator[DatabaseFactory]:
    factory = DatabaseFactory(require_postgres_url())
    yield factory
    factory.close()


@pytest.fixture(params=["sqlite", "postgres"])
def mb(request: pytest.FixtureRequest, tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[MindBank]:
    """A MindBank on each backend, worker not started."""
    if request.param == "sqlite":
        url = str(tmp_path / "kb.db")
    else:
        factory: DatabaseFactory = request.getfixturevalue("postgres")
        url = factory.create(embedder.dimension)
        request.addfinalizer(lambda: factory.drop(url))
    settings = Settings(database_url=url)
    bank = MindBank(store=open_store(url, dimension=embedder.dimension), embedder=embedder, settings=settings)
    yield bank
    bank.close()


@pytest.fixture
def c(mb: MindBank) -> Iterator[TestClient]:
    with TestClient(create_app(mb, run_worker=False), base_url="http://localhost") as client:
        yield client


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def retain(c: TestClient, *texts: str, tags: list[str] | None = None) -> None:
    ok(c.post(f"{B}/memories", json={"items": [{"content": t, "tags": tags or ["user:alice"]} for t in texts]}))


def folder(c: TestClient, name: str, parent: str | None = None) -> str:
    return ok(c.post(f"{KB}/folders", json={"name": name, "parent_id": parent}), 201)["id"]


def page(c: TestClient, name: str, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    body = {"name": name, "source_query": f"What about {name}?", "parent_id": parent, **extra}
    return ok(c.post(f"{KB}/pages", json=body), 201)


ALL_TYPES = {"fact_types": ["world", "experience", "observation"], "refresh_after_consolidation": False}


def test_a_page_reading_only_observations_says_its_facts_are_there(c: TestClient) -> None:
    retain(c, "Alice: I started training for the Berlin marathon.")  # a fact, no observation yet
    (warning,) = page(c, "Alice", tags=["user:alice"])["warnings"]
    assert "only ['observation'] memories" in warning and "1 world" in warning and "trigger.fact_types" in warning
    assert page(c, "Alice all", tags=["user:alice"], trigger=ALL_TYPES)["warnings"] == []


def test_pages_are_mental_models_with_the_page_defaults(c: TestClient, mb: MindBank) -> None:
    assert ok(c.get(f"{KB}/tree"), 404) == {"detail": "Bank 'b' not found"}
    people = folder(c, "People")
    created = page(c, "Alice", people, tags=["user:alice"])
    assert set(created) == {"page_id", "mental_model_id", "operation_id", "warnings"}
    assert created["warnings"] and "matches no memories" in created["warnings"][0]  # observations only, none yet
    model = ok(c.get(f"{B}/mental-models/{created['mental_model_id']}"))
    assert model["is_knowledge_page"] is True and model["max_tokens"] == 4096 and model["tags"] == ["user:alice"]
    trigger = model["trigger"]
    assert (trigger["mode"], trigger["fact_types"], trigger["exclude_mental_models"]) == (
        "delta",
        ["observation"],
        True,
    )
    assert trigger["refresh_after_consolidation"] is True and trigger["refresh_cron"] is None
    # a supplied trigger is a patch over the page default: the fields it leaves out keep their defaults
    patched = page(c, "Bob", trigger={"refresh_cron": "0 3 * * *", "keep_trace": True}, max_tokens=1024)
    t2 = ok(c.get(f"{B}/mental-models/{patched['mental_model_id']}"))["trigger"]
    assert t2["refresh_cron"] == "0 3 * * *" and t2["refresh_after_consolidation"] is False  # exclusive: dropped
    assert t2["mode"] == "delta" and t2["keep_trace"] is True and t2["fact_types"] == ["observation"]
    # the first refresh is queued like any model's
    op = ok(c.get(f"{B}/operations/{created['operation_id']}"))
    assert op["operation_type"] == "refresh_mental_model" and op["mental_model_id"] == created["mental_model_id"]


def test_a_bank_overrides_the_page_default_trigger(c: TestClient) -> None:
    folder(c, "x")
    override = {"mode": "full", "fact_types": ["world"]}
    config = ok(c.patch(f"{B}/config", json={"updates": {"knowledge_page_default_trigger": override}}))
    resolved = config["config"]["knowledge_page_default_trigger"]
    assert (
        resolved["mode"] == "full"
        and resolved["fact_types"] == ["world"]
        and resolved["refresh_after_consolidation"] is False
    )
    made = page(c, "P", trigger={"keep_trace": True})
    trigger = ok(c.get(f"{B}/mental-models/{made['mental_model_id']}"))["trigger"]
    assert (trigger["mode"], trigger["fact_types"], trigger["keep_trace"]) == ("full", ["world"], True)
    bad = ok(c.patch(f"{B}/config", json={"updates": {"knowledge_page_default_trigger": {"mode": "weekly"}}}), 422)
    assert bad["detail"][0]["loc"] == ["body", "updates.knowledge_page_default_trigger"]
    assert ok(c.patch(f"{B}/config", json={"updates": {"knowledge_page_default_trigger": None}}))["overrides"] == {}


def test_the_tree_nests_and_flags_stale_pages_by_the_one_rule(c: TestClient, mb: MindBank) -> None:
    retain(c, "Alice: I started training for the Berlin marathon.")
    people = folder(c, "People")
    runners = folder(c, "Runners", people)
    alice = page(c, "Alice", runners, tags=["user:alice"], trigger=ALL_TYPES)
    bob = page(c, "Bob", people, tags=["user:bob"], trigger=ALL_TYPES)
    page(c, "Loose")
    mb.run_pending()
    roots = ok(c.get(f"{KB}/tree"))["roots"]
    assert [n["name"] for n in roots] == ["People", "Loose"]  # folders first, then by name
    people_node = roots[0]
    assert [n["name"] for n in people_node["children"]] == ["Runners", "Bob"]
    alice_node = people_node["children"][0]["children"][0]
    assert alice_node["kind"] == "page" and alice_node["mental_model_id"] == alice["mental_model_id"]
    assert alice_node["description"] == "What about Alice?" and alice_node["tags"] == ["user:alice"]
    assert alice_node["is_stale"] is False and alice_node["trigger"]["mode"] == "delta"
    assert people_node["is_stale"] is None and people_node["trigger"] is None and people_node["description"] is None

    retain(c, "Alice: I finished the marathon in 3:58.")  # in Alice's scope only
    flags = {n["name"]: n["is_stale"] for n in _pages(ok(c.get(f"{KB}/tree"))["roots"])}
    assert flags == {"Alice": True, "Bob": False, "Loose": False}  # Loose reads observations only (page default)
    for name, model_id in (("Alice", alice["mental_model_id"]), ("Bob", bob["mental_model_id"])):
        assert ok(c.get(f"{B}/mental-models/{model_id}"))["is_stale"] is flags[name]  # the same rule

    by_tag = ok(c.get(f"{KB}/tree", params={"tags": ["user:bob"], "tags_match": "all_strict"}))["roots"]
    assert [n["name"] for n in by_tag] == ["People"] and [n["name"] for n in by_tag[0]["children"]] == ["Bob"]
    groups = '[{"or": [{"tags": ["user:alice"], "match": "all_strict"}]}]'
    by_group = ok(c.get(f"{KB}/tree", params={"tag_groups": groups}))["roots"]
    assert [p["name"] for p in _pages(by_group)] == ["Alice"]
    for bad in ("{not json", '{"tags": []}', '[{"tags": ["x"], "match": "sometimes"}]'):
        detail = ok(c.get(f"{KB}/tree", params={"tag_groups": bad}), 422)["detail"]
        assert "tag_groups" in detail[0]["loc"]


def _pages(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for n in nodes:
        out.extend([n] if n["kind"] == "page" else _pages(n["children"]))
    return out


def test_the_tree_is_one_batched_staleness_read_whatever_its_size(mb: MindBank) -> None:
    from mindbank.domain.records import RetainItem

    mb.retain("b", [RetainItem(content="Alice: I run.", tags=("user:alice",))])

    def statements(pages: int) -> int:
        for i in range(len(mb.store.list_knowledge_nodes("b")), pages):
            mb.create_knowledge_page("b", name=f"p{i}", source_query="q", tags=[f"t{i % 7}"])
        with mb.store.statement_log() as log:  # type: ignore[attr-defined]
            tree = mb.knowledge_tree("b")
        assert len(tree.models) == pages and all(m.is_stale is not None for m in tree.models.values())
        return len(log)

    assert statements(3) == statements(30)


def test_get_page_renders_markdown_with_frontmatter(c: TestClient, mb: MindBank) -> None:
    retain(c, "Alice: I started training for the Berlin marathon.")
    # a type:<x> tag names the page's type and still scopes it: tags_match any lets user:alice memories in
    made = page(c, "Alice's plan: 2026", tags=["user:alice", "type:runner"], trigger={**ALL_TYPES, "tags_match": "any"})
    empty = ok(c.get(f"{KB}/pages/{made['page_id']}"))
    assert empty["body"] == "" and empty["markdown"].endswith("No content yet.\n")
    assert empty["type"] == "runner" and empty["description"] == "What about Alice's plan: 2026?"
    mb.run_pending()
    got = ok(c.get(f"{KB}/pages/{made['page_id']}"))
    assert "Berlin marathon" in got["body"] and got["markdown"].endswith(got["body"])
    front = got["markdown"].split("---\n")[1]
    assert 'name: "Alice\'s plan: 2026"' in front and 'tags: ["type:runner", "user:alice"]' in front
    assert ok(c.get(f"{KB}/pages/nope"), 404)["detail"].startswith("Knowledge page 'nope' not found")
    folder_id = folder(c, "F")
    ok(c.get(f"{KB}/pages/{folder_id}"), 404)  # a folder is not a page


def test_patch_renames_moves_and_changes_page_settings(c: TestClient, mb: MindBank) -> None:
    a, b = folder(c, "A"), folder(c, "B")
    inner = folder(c, "Inner", a)
    made = page(c, "P", a, tags=["x"])
    mb.run_pending()
    renamed = ok(c.patch(f"{KB}/nodes/{made['page_id']}", json={"name": "Renamed", "parent_id": b}))
    assert renamed["name"] == "Renamed" and renamed["parent_id"] == b and renamed["kind"] == "page"
    assert renamed["is_stale"] is not None
    assert (
        ok(c.get(f"{B}/mental-models/{made['mental_model_id']}"))["name"] == "Renamed"
    )  # a page's name is its model's
    to_root = ok(c.patch(f"{KB}/nodes/{inner}", json={"parent_id": None}))
    assert to_root["parent_id"] is None
    kept = ok(c.patch(f"{KB}/nodes/{inner}", json={"name": "Inner 2"}))
    assert kept["parent_id"] is None  # parent_id absent: the node stays where it is

    settings = {"tags": [], "max_tokens": 2048, "trigger": {"mode": "full"}}
    ok(c.patch(f"{KB}/nodes/{made['page_id']}", json=settings))
    model = ok(c.get(f"{B}/mental-models/{made['mental_model_id']}"))
    assert model["tags"] == [] and model["max_tokens"] == 2048
    assert model["trigger"]["mode"] == "full" and model["trigger"]["fact_types"] == ["observation"]  # merged
    refreshes = lambda: ok(c.get(f"{B}/operations", params={"type": "refresh_mental_model"}))["total"]  # noqa: E731
    before = refreshes()
    ok(c.patch(f"{KB}/nodes/{made['page_id']}", json={"source_query": "A new question?"}))
    assert refreshes() == before + 1  # a new question rebuilds the page


def test_patch_refuses_bad_moves_and_settings_and_writes_nothing(c: TestClient, mb: MindBank) -> None:
    a = folder(c, "A")
    child = folder(c, "Child", a)
    folder(c, "Taken")
    made = page(c, "P")
    before = mb.store.dump()  # type: ignore[attr-defined]
    cases = [
        (a, {"parent_id": child}, 422, "parent_id"),  # into its own subtree
        (a, {"parent_id": a}, 422, "parent_id"),  # under itself
        (a, {"parent_id": made["page_id"]}, 422, "parent_id"),  # under a page
        (a, {"parent_id": "missing"}, 404, None),
        (a, {"name": "   "}, 422, "name"),
        (a, {"source_query": "pages only"}, 422, "source_query"),
        (a, {"tags": ["x"]}, 422, "tags"),
        (made["page_id"], {"trigger": {"mode": "sometimes"}}, 422, "mode"),
        (made["page_id"], {"max_tokens": 10}, 422, "max_tokens"),
        (made["page_id"], {"trigger": {"refresh_cron": "0 3 * * *", "refresh_after_consolidation": True}}, 422, None),
        (a, {"unknown": 1}, 422, "unknown"),
        ("missing", {"name": "x"}, 404, None),
    ]
    for node_id, body, status, field in cases:
        answer = ok(c.patch(f"{KB}/nodes/{node_id}", json=body), status)
        if field:
            assert field in str(answer["detail"][0]["loc"]), (body, answer)
    assert ok(c.patch(f"{KB}/nodes/{a}", json={"name": "Taken"}), 409)["detail"].endswith(
        "already exists in that folder"
    )
    assert mb.store.dump() == before  # type: ignore[attr-defined]


def test_create_refuses_bad_input(c: TestClient, mb: MindBank) -> None:
    made = page(c, "P")
    before = mb.store.dump()  # type: ignore[attr-defined]
    ok(c.post(f"{KB}/folders", json={"name": "x", "parent_id": "missing"}), 404)
    ok(c.post(f"{KB}/folders", json={"name": "x", "parent_id": made["page_id"]}), 422)
    ok(c.post(f"{KB}/folders", json={"name": " "}), 422)
    ok(c.post(f"{KB}/folders", json={"name": "x" * 300}), 422)
    ok(c.post(f"{KB}/folders", json={"name": "P"}), 409)
    ok(c.post(f"{KB}/pages", json={"name": "Q", "source_query": " "}), 422)
    ok(c.post(f"{KB}/pages", json={"name": "Q", "source_query": "q", "max_tokens": 100000}), 422)
    ok(c.post(f"{KB}/pages", json={"name": "Q", "source_query": "q", "trigger": {"fact_types": []}}), 422)
    ok(c.post(f"{KB}/pages", json={"name": "Q", "source_query": "q", "parent_id": "missing"}), 404)
    assert mb.store.dump() == before  # type: ignore[attr-defined]


def test_delete_takes_the_subtree_and_its_pages_models(c: TestClient) -> None:
    a = folder(c, "A")
    sub = folder(c, "Sub", a)
    p1, p2, solo = page(c, "P1", a), page(c, "P2", sub), page(c, "Solo")
    assert ok(c.delete(f"{KB}/nodes/{a}")) == {"status": "deleted", "node_id": a, "deleted_folders": 2,
                                                "deleted_pages": 2}  # fmt: skip
    for gone in (p1, p2):
        ok(c.get(f"{B}/mental-models/{gone['mental_model_id']}"), 404)
    assert [n["name"] for n in ok(c.get(f"{KB}/tree"))["roots"]] == ["Solo"]
    ok(c.delete(f"{KB}/nodes/{a}"), 404)
    ok(c.delete(f"{B}/mental-models/{solo['mental_model_id']}"))  # deleting a page's model removes the page
    assert ok(c.get(f"{KB}/tree"))["roots"] == []


def test_list_can_exclude_knowledge_pages(c: TestClient) -> None:
    ok(c.post(f"{B}/mental-models", json={"name": "Solo", "source_query": "q"}))
    page(c, "Page")
    every = ok(c.get(f"{B}/mental-models"))
    assert every["total"] == 2 and {m["name"]: m["is_knowledge_page"] for m in every["items"]} == {
        "Solo": False,
        "Page": True,
    }
    solo = ok(c.get(f"{B}/mental-models", params={"exclude_knowledge_pages": "true"}))
    assert solo["total"] == 1 and [m["name"] for m in solo["items"]] == ["Solo"]


def test_search_is_hybrid_over_pages(c: TestClient, mb: MindBank) -> None:
    retain(c, "Alice: I started training for the Berlin marathon.", "Alice: My long runs are on Sundays.")
    retain(c, "Bob: I bake sourdough bread every weekend.", tags=["user:bob"])
    running = page(c, "Running", tags=["user:alice"], trigger=ALL_TYPES)
    baking = page(c, "Kitchen", tags=["user:bob"], trigger=ALL_TYPES)
    empty = page(c, "Empty page", tags=["nobody"])
    mb.run_pending()
    hits = ok(c.get(f"{KB}/search", params={"q": "marathon"}))
    assert hits["results"][0]["id"] == running["page_id"] and hits["results"][0]["score"] == 1.0
    assert hits["results"][0]["mental_model_id"] == running["mental_model_id"]
    assert "[mem:" not in hits["results"][0]["snippet"] and "marathon" in hits["results"][0]["snippet"]
    assert all(0 < r["score"] <= 1 for r in hits["results"])
    # meaning without a shared word: only the vector arm can find it
    loaf = ok(c.get(f"{KB}/search", params={"q": "baking a loaf"}))["results"]
    assert loaf and loaf[0]["id"] == baking["page_id"]
    tagged = ok(c.get(f"{KB}/search", params={"q": "bread marathon", "tags": ["user:bob"], "tags_match": "all_strict"}))
    assert [r["id"] for r in tagged["results"]] == [baking["page_id"]]
    limited = ok(c.get(f"{KB}/search", params={"q": "page running kitchen", "limit": 1}))
    assert len(limited["results"]) == 1 and limited["total"] >= 2
    blank = ok(c.get(f"{KB}/search", params={"q": "empty page"}))["results"]
    assert any(r["id"] == empty["page_id"] and r["snippet"] == "No content yet." for r in blank)
    ok(c.get(f"{KB}/search", params={"q": ""}), 422)
    ok(c.get(f"{KB}/search", params={"q": "x", "limit": 51}), 422)
    ok(c.get("/v1/default/banks/nobody/knowledge-base/search", params={"q": "x"}), 404)
    # the vectors are stored and reused; a page whose text changed is embedded again
    stored = mb.store.page_vectors("b")
    assert set(stored) >= {running["mental_model_id"], baking["mental_model_id"]}
    ok(c.patch(f"{KB}/nodes/{baking['page_id']}", json={"name": "Bakery"}))
    ok(c.get(f"{KB}/search", params={"q": "bakery"}))
    assert mb.store.page_vectors("b")[baking["mental_model_id"]][0] != stored[baking["mental_model_id"]][0]
    assert mb.store.page_vectors("b")[running["mental_model_id"]][0] == stored[running["mental_model_id"]][0]


def test_export_is_a_markdown_bundle(c: TestClient, mb: MindBank) -> None:
    retain(c, "Alice: I started training for the Berlin marathon.")
    people = folder(c, "People & Friends")
    alice = page(c, "Alice", people, tags=["user:alice"], trigger=ALL_TYPES)
    page(c, "alice!", people, tags=["nobody"])  # the same slug in the same folder
    page(c, "Top", tags=["nobody"])
    mb.run_pending()
    files = {f["path"]: f["content"] for f in ok(c.get(f"{KB}/export"))["files"]}
    assert set(files) == {"index.md", "people-friends/alice.md", "people-friends/alice-2.md", "top.md", "log.md"}
    assert "- People & Friends/" in files["index.md"] and "  - [Alice](people-friends/alice.md)" in files["index.md"]
    assert f'id: "{alice["page_id"]}"' in files["people-friends/alice.md"]
    assert "Berlin marathon" in files["people-friends/alice.md"]
    assert files["top.md"].endswith("---\n\n")  # an empty page stays a bare document in the bundle
    assert files["log.md"].count(": updated") == 1 and " Alice: updated" in files["log.md"]  # empty pages wrote none
    ok(c.get("/v1/default/banks/nobody/knowledge-base/export"), 404)
