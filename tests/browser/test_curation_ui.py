"""Curation in the control plane, in headless Chromium against a live server (docs/curation.md): edit a block in
place (it shows as person-written on hover and survives a refresh), pin a section, a review-mode model's draft
banner with its diff, Approve publishing exactly the draft, and the note a revert's hold shows. One screenshot per step under tests/browser/artifacts/
(prefix ``curation-``); no request may leave the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser.test_control_plane import BANK, Page, api, retain, settle

from mindbank.service.facade import MindBank


@pytest.fixture
def curation_ui(browser: Any, server: str, artifacts: Path) -> Iterator[Page]:
    page = Page(browser, server, artifacts, prefix="curation-")
    yield page
    page.page.screenshot(path=str(artifacts / "curation-last.png"), full_page=True)
    page.close()


def test_edit_pin_and_approve_in_the_control_plane(curation_ui: Page, server: str, mindbank: MindBank) -> None:
    ui, page, client = curation_ui, curation_ui.page, api(server)
    retain(client, "Alice: I started training for the Berlin marathon.", "Alice: I adopted a cat named Miso.")
    body = {"id": "alice", "name": "Alice", "source_query": "What is Alice doing?", "tags": ["user:alice"],
            "trigger": {"tags_match": "any"}}  # fmt: skip
    assert client.post("/mental-models", json=body).status_code == 200
    settle(client)
    page.goto(f"{server}/ui#/b/{BANK}/m/alice")
    page.get_by_role("heading", name="Curate").wait_for()
    # the Curate panel is collapsed until opened: the content shows the blocks once
    assert page.locator("details.curate").get_attribute("open") is None and page.locator(".cblock").count() == 0
    page.locator("details.curate > summary").click()
    page.locator(".cblock").first.wait_for()
    ui.shot("blocks")

    # edit a block in place
    block = page.locator(".cblock").last
    block_id = block.get_attribute("data-block")
    assert block.get_attribute("title") == "Written by a refresh"
    block.get_by_role("button", name=f"Edit block {block_id}").click()
    page.get_by_label(f"Text of block {block_id}").fill("Alice runs with her sister every Sunday.")
    ui.shot("editing")
    block.get_by_role("button", name="Save").click()
    page.get_by_text("Block saved: refreshes keep it as you wrote it.").wait_for()
    edited = page.locator(f'.cblock[data-block="{block_id}"]')
    assert edited.get_attribute("data-origin") == "person"
    assert (edited.get_attribute("title") or "").startswith("Written by admin at ")
    assert "Alice runs with her sister every Sunday." in page.locator("article.doc").inner_text()
    rendered = page.locator("article.doc .curated").first  # the content's block: its origin on hover
    assert (rendered.get_attribute("title") or "").startswith("written by admin at ")
    assert "curated:" not in page.locator("article.doc").inner_text()
    ui.shot("edited")

    # pin a section
    section = page.locator(".csection").first
    section_id = section.get_attribute("data-section")
    section.get_by_role("button", name="Pin section").click()
    unpin = page.locator(f'.csection[data-section="{section_id}"]').get_by_role("button", name="Unpin section")
    unpin.wait_for()  # the curation section loads after the view re-renders, and stays open
    ui.shot("pinned")

    # a refresh keeps both
    retain(client, "Alice: Miso learned to open the fridge.")
    page.get_by_role("button", name="Refresh", exact=True).click()
    page.get_by_text("Refresh: done").wait_for()
    assert "Alice runs with her sister every Sunday." in page.locator("article.doc").inner_text()
    blocks = client.get("/mental-models/alice/blocks").json()
    assert block_id in blocks["fixed_block_ids"]
    assert next(s for s in blocks["sections"] if s["id"] == section_id)["pinned"] is True

    # review before publish: the draft banner, its diff, Approve
    assert client.patch("/mental-models/alice", json={"trigger": {"review": True}}).status_code == 200
    retain(client, "Alice: I ran a half marathon in Porto.")
    assert client.post("/mental-models/alice/refresh").status_code == 200
    settle(client)  # the refresh, after the consolidation the retain queued
    draft = client.get("/mental-models/alice/draft").json()
    page.reload()
    page.get_by_role("heading", name="A refresh is waiting for review").wait_for()
    assert "Porto" in page.locator(".panel.draft").inner_text()  # the diff shows what the draft adds
    assert "Porto" not in page.locator("article.doc").inner_text()  # not published yet
    ui.shot("draft")
    page.locator(".panel.draft").get_by_role("button", name="Approve").click()
    page.get_by_text("Draft approved and published.").wait_for()
    assert "Porto" in page.locator("article.doc").inner_text()
    assert client.get("/mental-models/alice").json()["content"] == draft["content"]
    ui.shot("approved")

    # a revert holds: the page says why automatic refreshes wait
    version = client.get("/mental-models/alice/history").json()[0]
    assert client.post("/mental-models/alice/revert", json={"history_id": version["id"]}).status_code == 200
    page.reload()
    page.locator('p.hold[data-hold="reverted"]').wait_for()
    ui.shot("reverted")
    assert ui.outside == [] and ui.errors == []
