"""The Python client's knowledge-base family against a live server (sync), and the async client on one call."""

from __future__ import annotations

import asyncio

import pytest

from mindbank.client import AsyncClient, Client, MindBankHTTPError


def test_knowledge_base_methods(server: str) -> None:
    with Client(server) as c:
        c.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        people = c.create_knowledge_folder("b", "People")
        made = c.create_knowledge_page("b", "Alice", "What is Alice training for?", parent_id=people.id,
                                       tags=["user:alice"], trigger={"fact_types": ["world"]})  # fmt: skip
        assert c.wait("b", made.operation_id or "").status == "completed"
        tree = c.get_knowledge_base_tree("b")
        page = tree.roots[0].children[0]
        assert page.id == made.page_id and page.is_stale is False and page.trigger and page.trigger["mode"] == "delta"
        assert c.get_knowledge_base_tree("b", tags=["user:bob"], tags_match="all_strict").roots == []
        groups = [{"tags": ["user:alice"], "match": "all_strict"}]
        assert c.get_knowledge_base_tree("b", tag_groups=groups).roots[0].id == people.id
        assert "Berlin marathon" in (c.get_knowledge_page("b", made.page_id).body or "")
        found = c.search_knowledge_base("b", "marathon", limit=3, tags=["user:alice"])
        assert found.results[0].id == made.page_id and found.total == 1
        moved = c.update_knowledge_node("b", made.page_id, name="Alice B", move_to_root=True, tags=[])
        assert moved.parent_id is None and moved.name == "Alice B" and moved.tags == []
        with pytest.raises(MindBankHTTPError) as exc:
            c.update_knowledge_node("b", people.id, parent_id=made.page_id)
        assert exc.value.status_code == 422 and "is a page" in exc.value.message
        with pytest.raises(ValueError, match="not both"):
            c.update_knowledge_node("b", people.id, parent_id="x", move_to_root=True)
        assert [f.path for f in c.export_knowledge_base("b").files] == ["index.md", "alice-b.md", "log.md"]
        assert [m.name for m in c.list_mental_models("b", exclude_knowledge_pages=True).items] == []
        removed = c.delete_knowledge_node("b", made.page_id)
        assert (removed.deleted_pages, removed.deleted_folders) == (1, 0)

    async def run() -> None:
        async with AsyncClient(server) as ac:
            assert [n.name for n in (await ac.get_knowledge_base_tree("b")).roots] == ["People"]

    asyncio.run(run())
