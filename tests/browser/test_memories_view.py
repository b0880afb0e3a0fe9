"""The control plane as a memory product, in headless Chromium against a live server: a conversation imported with
the CLI → the memories view lists and filters them → search finds a memory by meaning (scores shown) → its page
names the model citing it → delete it (the confirmation names the model) → the model's page, open in another tab,
turns Stale with the reason without a reload → Refresh → Fresh; a new model's history after two refreshes reads
versions 1 and 2 with a numbered-citation diff, its Curate panel collapsed; at 1366 px no table is wider than its
container; a fact's page lists the observations built from it and its history, an observation's page tells how
consolidation changed it, and clearing a fact's observations from its page. Each step is
screenshotted at 1366 and 1920 px wide (``tests/browser/artifacts/mem-*``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from test_control_plane import Page, settle

from mindbank.cli import main as cli
from mindbank.importers import sample_conversation_path
from mindbank.service.facade import MindBank

BANK = "b"
WIDTHS = (1366, 1920)
# every table on the page fits the element that holds it (a clipped or scrolling table is a layout bug)
TABLES_FIT = """() => [...document.querySelectorAll('main table')].filter((t) => t.offsetParent !== null)
  .map((t) => [t.scrollWidth, t.parentElement.clientWidth, t.querySelector('caption')?.textContent || ''])"""


class WidePage(Page):
    """A page whose screenshots are taken at each of WIDTHS (then back to 1366)."""

    def shot(self, name: str) -> None:
        self.shots += 1
        for width in WIDTHS:
            self.page.set_viewport_size({"width": width, "height": 900})
            path = self.artifacts / f"{self.prefix}{self.shots:02d}-{name}-{width}.png"
            self.page.screenshot(path=str(path), full_page=True)
        self.page.set_viewport_size({"width": 1366, "height": 900})

    def tables_fit(self) -> None:
        for scroll, room, caption in self.page.evaluate(TABLES_FIT):
            widths = self.page.evaluate(
                "() => [...document.querySelectorAll('main table thead th')].map((t) => [t.textContent, t.offsetWidth, t.scrollWidth])"
            )
            assert scroll <= room, f"table {caption!r} is {scroll} px wide in {room} px {widths}"


def wait(check: Any, what: str, seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def manual_model(client: httpx.Client, name: str, question: str) -> str:
    """A model refreshed only when asked, after its first refresh: its id."""
    body = {"name": name, "source_query": question, "trigger": {"refresh_after_consolidation": False}}
    model_id = str(client.post("/mental-models", json=body).json()["mental_model_id"])
    settle(client)
    return model_id


def test_memories_view_scenario(browser: Any, server: str, mindbank: MindBank, artifacts: Path) -> None:
    client = httpx.Client(base_url=f"{server}/v1/default/banks/{BANK}", timeout=30)
    # a two-person conversation, imported with the CLI into the server's database
    assert (
        cli(["import", str(sample_conversation_path()), "-b", BANK, "--database", mindbank.settings.database_url]) == 0
    )
    settle(client)
    total = client.get("/memories/list", params={"limit": 1}).json()["total"]
    assert total > 50
    model_id = manual_model(client, "Priya's running", "What is Priya training for, and how is her running going?")

    ui = WidePage(browser, server, artifacts, prefix="mem-")
    page = ui.page
    page.set_default_timeout(30_000)  # two CPUs shared with other work: polling and refreshes get slow, not wrong
    try:
        # the memories view: paged, newest first, filtered by fact type and text
        page.goto(f"{server}/ui/#/b/{BANK}")
        page.get_by_role("link", name="Memories", exact=True).click()
        page.get_by_role("heading", name="Memories").wait_for()
        assert f"of {total} memories" in page.locator(".count").inner_text()
        assert page.locator("table.memories-table tbody tr").count() == 25
        ui.tables_fit()
        ui.shot("list")
        page.get_by_label("Fact type").select_option("world")
        page.get_by_label("Text contains").fill("marathon")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**q=marathon**")
        cells = page.locator("table.memories-table tbody td.text")
        # the list shown until the filtered one is ready is the unfiltered one: wait for the new rows
        texts = wait(
            lambda: (t := cells.all_inner_texts()) and all("marathon" in x.lower() for x in t) and t, "filtered"
        )
        assert 0 < len(texts) < 25
        ui.shot("filtered")

        # search by meaning: recall ranks the memories, scores shown; the model cites the best one about her race
        page.get_by_label("Search by meaning").fill("half marathon training")
        page.get_by_role("button", name="Search", exact=True).click()
        page.get_by_role("columnheader", name="Score").wait_for()
        rows = page.locator("table.memories-table tbody tr")
        ids = [rows.nth(i).get_attribute("data-memory") for i in range(rows.count())]
        cited = next(
            i for i in ids if client.get(f"/memories/{i}/cited-by").json()["mental_models"]
        )  # the first hit the model cites
        assert float(page.locator(f"tr[data-memory='{cited}'] td.num").inner_text()) > 0
        ui.tables_fit()
        ui.shot("search")
        text = client.get(f"/memories/{cited}").json()["text"]

        # the model's page in a second tab, Fresh
        other = ui.context.new_page()
        other.set_default_timeout(30_000)
        other.goto(f"{server}/ui/#/b/{BANK}/m/{model_id}")
        other.get_by_role("heading", name="Priya's running").wait_for()
        assert other.locator(".page-head .badge").first.inner_text() == "Fresh"

        # the memory's page names the model citing it; delete it, the confirmation saying what that does
        page.locator(f"tr[data-memory='{cited}'] td.text a").click()
        page.get_by_role("heading", name="Cited by").wait_for()
        assert page.locator(".memory-text").inner_text() == text
        page.locator(".citers").get_by_role("link", name="Priya's running").wait_for()
        # a fact's page also lists the observations built from it and its own recorded history
        page.get_by_role("heading", name="Observations built from this memory").wait_for()
        page.get_by_role("heading", name="History", exact=True).wait_for()
        assert "written" in page.locator("ol.changes").inner_text()
        ui.shot("memory")
        page.get_by_role("button", name="Delete").click()
        dialog = page.get_by_role("dialog")
        assert "“Priya's running”" in dialog.inner_text() and "stale" in dialog.inner_text()
        ui.shot("delete-confirm")
        dialog.get_by_role("button", name="Delete memory").click()
        page.get_by_role("heading", name="Memories").wait_for()
        assert client.get(f"/memories/{cited}").status_code == 404

        # the open model page turns Stale with the reason, without a reload
        badge = other.locator(".page-head .badge").first
        wait(lambda: badge.inner_text() == "Stale", "the model page shows Stale by itself", seconds=20)
        assert other.locator(".stale-reason").inner_text() == "1 cited memory deleted or out of its scope"
        page.goto(f"{server}/ui/#/b/{BANK}/m/{model_id}")  # the same page in the screenshot tab
        page.get_by_role("heading", name="Priya's running").wait_for()
        ui.shot("model-stale-reason")
        other.get_by_role("button", name="Refresh").click()
        other.get_by_text("Refresh: done").wait_for()
        assert other.locator(".page-head .badge").first.inner_text() == "Fresh"
        assert other.locator(".stale-reason").inner_text() == ""
        other.close()

        # a new model's history after two refreshes: versions 1 and 2, the diff with numbered citations
        second = manual_model(client, "Tomas", "What does Tomas do?")
        items = [{"content": "Tomas: I adopted a greyhound called Biscuit last week."}]
        assert client.post("/memories", json={"items": items}).status_code == 200
        assert client.post(f"/mental-models/{second}/refresh").status_code == 200
        settle(client)  # the refresh, after the consolidation the retain queued
        page.goto(f"{server}/ui/#/b/{BANK}/m/{second}")
        page.get_by_role("heading", name="Tomas", exact=True).wait_for()
        page.get_by_role("heading", name="History (2 versions)").wait_for()
        # the blocks show once, in the content: the Curate panel stays collapsed until opened
        assert page.locator("details.curate").get_attribute("open") is None and page.locator(".cblock").count() == 0
        ui.shot("model")
        history = page.locator("table.history-table tbody")
        assert history.locator("tr td:first-child").all_inner_texts() == ["Version 2 (current)", "Version 1"]
        diff = page.locator(".block-diff")
        # the new fact is an added block of its own; the refresh may also move a section (removed there, added here)
        added = diff.locator(".diff-block.add", has_text="I adopted a greyhound called Biscuit")
        assert added.count() == 1 and "Tomas" in added.inner_text() and "[mem:" not in diff.inner_text()
        number = diff.locator(".diff-block.add sup.cite").first
        assert number.inner_text().startswith("[") and number.inner_text()[1:-1].isdigit()
        page.locator(".footnotes li", has_text="greyhound called Biscuit").wait_for()  # listed under the diff
        titles = diff.locator(".diff-block.add sup.cite")
        wait(
            lambda: any("greyhound" in (t or "") for t in titles.evaluate_all("(els) => els.map((e) => e.title)")),
            "a number's tooltip is the memory it cites",
        )
        page.locator(".block-diff").scroll_into_view_if_needed()
        ui.tables_fit()
        ui.shot("history")

        # operations: the import's consolidations fold into one row; filter by type
        page.goto(f"{server}/ui/#/b/{BANK}/ops")
        group = page.locator("tr.group").first
        group.wait_for()
        assert "consolidation ×" in group.inner_text()
        ui.tables_fit()
        ui.shot("operations-grouped")
        page.get_by_label("Type").select_option("refresh_mental_model")
        page.wait_for_url("**type=refresh_mental_model**")
        types = page.locator("tbody tr td:first-child")
        wait(lambda: set(types.all_inner_texts()) == {"refresh_mental_model"}, "only refreshes listed")

        # the bank view at 1366 px: no table wider than its container
        page.goto(f"{server}/ui/#/b/{BANK}")
        page.get_by_role("heading", name="Mental models").wait_for()
        ui.tables_fit()
        ui.shot("bank")

        # an observation changed by consolidation: the fact's page links it, the observation's page tells the change
        for text in ("Xavier: I live in Paris with my partner.", "Xavier: I moved to Berlin with my partner."):
            assert client.post("/memories", json={"items": [{"content": text}]}).status_code == 200
            settle(client)
        paris = client.get("/memories/list", params={"q": "I live in Paris", "type": "world"}).json()["items"][0]
        (observation,) = client.get(f"/memories/{paris['id']}/observations").json()["items"]
        page.goto(f"{server}/ui/#/b/{BANK}/mem/{paris['id']}")
        page.get_by_role("heading", name="Observations built from this memory (1)").wait_for()
        page.locator("ul.derived").get_by_role("link", name=observation["text"]).click()
        page.locator("ol.changes li.change").first.wait_for()
        change = page.locator("ol.changes li.change").first
        assert "Xavier: I live in Paris with my partner." in change.locator(".was-now dd").first.inner_text()
        change.locator("ul.change-facts.added").get_by_role(
            "link", name="Xavier: I moved to Berlin with my partner."
        ).wait_for()
        assert page.get_by_role("button", name="Edit tags").count() == 0  # an observation's tags are its scope's
        ui.shot("observation-history")
        # clearing the fact's observations, from its page: confirmed, then consolidation builds them again
        page.goto(f"{server}/ui/#/b/{BANK}/mem/{paris['id']}")
        page.get_by_role("button", name="Clear these observations").click()
        dialog = page.get_by_role("dialog")
        assert "mental models citing it go stale" in dialog.inner_text()
        dialog.get_by_role("button", name="Clear observations").click()
        page.get_by_text("Observations cleared: 1 deleted").wait_for()
        assert client.get(f"/memories/{observation['id']}").status_code == 404
        ui.shot("observations-cleared")
        assert ui.outside == [] and ui.errors == []
    finally:
        page.screenshot(path=str(artifacts / "mem-last.png"), full_page=True)
        ui.close()
