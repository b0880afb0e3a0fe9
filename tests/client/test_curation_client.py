"""``mindbank.client`` over curation against a live server (docs/curation.md): the document by block, a hand edit,
an added block, a pin of a block and a section, removing a block, and review before publish (draft, reject,
approve); the async client sends the same requests."""

from __future__ import annotations

import asyncio

import pytest

from mindbank.client import AsyncClient, Client, MindBankHTTPError


def test_curation_through_the_client(server: str) -> None:
    with Client(server) as c:
        for text in ("Alice: I started training for the Berlin marathon.", "Alice: I adopted a cat named Miso."):
            c.retain("b", text, tags=["user:alice"])
        made = c.create_mental_model("b", "Alice", "What is Alice doing?", id="a", tags=["user:alice"],
                                     trigger={"tags_match": "any"})  # fmt: skip
        assert c.wait("b", made.operation_id).status == "completed"
        view = c.get_mental_model_blocks("b", "a")
        first = view.sections[-1].blocks[0]
        edited = c.edit_mental_model_block("b", "a", first.id, text="Alice runs with her sister.")
        block = next(b for s in edited.sections for b in s.blocks if b.id == first.id)
        assert block.origin == "person" and block.author == "admin" and edited.fixed_block_ids == [first.id]
        added = c.add_mental_model_block("b", "a", "Ask about the race.", heading="To do")
        section = next(s for s in added.sections if any(b.id == added.block_id for b in s.blocks))
        assert c.pin_mental_model_section("b", "a", section.id).sections[-1].pinned is True
        pinned = c.edit_mental_model_block("b", "a", first.id, pinned=True)
        assert next(b for s in pinned.sections for b in s.blocks if b.id == first.id).pinned is True
        assert added.block_id not in {
            b.id for s in c.delete_mental_model_block("b", "a", added.block_id).sections for b in s.blocks
        }
        with pytest.raises(MindBankHTTPError) as err:
            c.edit_mental_model_block("b", "a", "nope", text="x")
        assert err.value.status_code == 422 and "block_id" in str(err.value)
        # review before publish
        c.update_mental_model("b", "a", trigger={"review": True})
        published = c.get_mental_model("b", "a").content
        c.retain("b", "Alice: Miso learned to open the fridge.", tags=["user:alice"])
        assert c.wait("b", c.refresh_mental_model("b", "a").operation_id).status == "completed"
        draft = c.get_mental_model_draft("b", "a")
        assert draft.diff and c.get_mental_model("b", "a").content == published
        assert c.reject_mental_model_draft("b", "a", reason="later").content == published
        assert c.wait("b", c.refresh_mental_model("b", "a").operation_id).status == "completed"
        draft = c.get_mental_model_draft("b", "a")
        assert c.approve_mental_model_draft("b", "a", draft_id=draft.draft_id).content == draft.content
        fixed = c.get_mental_model_blocks("b", "a").fixed_block_ids

    async def run() -> None:
        async with AsyncClient(server) as ac:
            assert (await ac.get_mental_model_blocks("b", "a")).fixed_block_ids == fixed

    asyncio.run(run())
