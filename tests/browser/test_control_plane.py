"""The control plane at /ui, driven in headless Chromium against a live server: the acceptance scenario of issue 16
(create a model from the form → fresh → a memory retained in scope through the API → stale after reload → Refresh →
fresh, history + 1 → Revert → content restored; a dry run shows a diff and writes nothing; a block's provenance
lists the memory just retained; a folder with a page and the page's stale flag in the tree), then folder delete, a
parked refresh and its cancellation, and the API-key prompt. Every request the page makes is intercepted: none may
leave the server. One screenshot per step under tests/browser/artifacts/."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from mindbank.domain.governance import RefreshState
from mindbank.service.facade import MindBank

BANK = "b"
MARATHON = "Alice: I finished the Berlin marathon in 3:58."


class Page:
    """One browser page on the server, every request recorded; requests that would leave the server are aborted
    and remembered in ``outside``."""

    def __init__(self, browser: Any, server: str, artifacts: Path, prefix: str = "") -> None:
        self.server = server
        self.prefix = prefix
        self.artifacts = artifacts
        self.context = browser.new_context(viewport={"width": 1366, "height": 900})
        self.requests: list[str] = []
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.shots = 0

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(self.server + "/"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def shot(self, name: str) -> None:
        self.shots += 1
        self.page.screenshot(path=str(self.artifacts / f"{self.prefix}{self.shots:02d}-{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def ui(browser: Any, server: str, artifacts: Path) -> Iterator[Page]:
    page = Page(browser, server, artifacts)
    yield page
    page.page.screenshot(path=str(artifacts / "last.png"), full_page=True)  # where the test ended (or failed)
    page.close()


def api(server: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server}/v1/default/banks/{BANK}", timeout=30)


def settle(client: httpx.Client) -> None:
    """Wait until no operation is pending or running (consolidations after a retain)."""
    deadline = time.monotonic() + 30
    while any(client.get("/operations", params={"status": s}).json()["total"] for s in ("pending", "processing")):
        assert time.monotonic() < deadline, "operations did not settle"
        time.sleep(0.05)


def retain(client: httpx.Client, *texts: str, tags: tuple[str, ...] = ("user:alice",)) -> None:
    items = [{"content": t, "tags": list(tags)} for t in texts]
    assert client.post("/memories", json={"items": items}).status_code == 200


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 15
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_control_plane_scenario(ui: Page, server: str, mindbank: MindBank) -> None:
    page = ui.page
    client = api(server)
    retain(
        client, "Alice: I started training for the Berlin marathon.", "Alice: My coach says I should run 40 km a week."
    )
    retain(client, "Bob: I bake sourdough bread every Sunday.", tags=("user:bob",))
    settle(client)

    # banks with their stats, then the bank
    page.goto(f"{server}/ui")
    page.get_by_role("heading", name="Banks").wait_for()
    assert page.get_by_role("row", name="b").get_by_text("3 world · 0 experience · 2 observation").is_visible()
    ui.shot("banks")
    page.get_by_role("link", name=BANK, exact=True).click()
    page.get_by_role("heading", name="Mental models").wait_for()

    # create a model from the form; the scope preview counts its memories
    page.get_by_role("link", name="New mental model").click()
    page.get_by_label("Name", exact=True).fill("Alice")
    page.get_by_label("Source query").fill("What is Alice training for?")
    page.get_by_label("Tags", exact=True).fill("user:alice")
    page.get_by_text("Scope: 4 memories").wait_for()  # the two facts and the two observations consolidation formed
    page.get_by_label("Keep trace (record how each refresh ran)").check()
    # the form keeps a new model fresh by itself unless told otherwise, and says what each choice means
    assert page.get_by_label("Refreshes").input_value() == "consolidation"
    assert "Stays fresh by itself" in page.locator("#f-refresh-hint").inner_text()
    ui.shot("create-form")
    page.get_by_label("Refreshes").select_option("manual")  # this scenario watches staleness by hand
    assert "Never refreshes by itself" in page.locator("#f-refresh-hint").inner_text()
    page.get_by_role("button", name="Create mental model").click()
    page.get_by_text("First refresh: done (content_written)").wait_for()
    model_id = page.url.split("/m/")[1].split("?")[0]
    badge = page.locator(".page-head .badge").first
    assert badge.inner_text() == "Fresh"
    ui.shot("model-fresh")
    assert "today: nothing" in page.locator("dl.facts").first.inner_text()  # the extractive engine spends no tokens

    # the refresh governance in words: a model whose refreshes keep failing
    stored = mindbank.store.get_mental_model(BANK, model_id)
    assert stored is not None
    failing = RefreshState(failures=3, last_failure_reason="provider_unavailable", carried_over=("m1", "m2"))
    mindbank.store.save_refresh(replace(stored, refresh_state=failing), history=None, history_cap=50)
    page.reload()
    page.get_by_role("heading", name="Alice").wait_for()
    facts = page.locator("dl.facts").first.inner_text()
    assert "Breaker open" in facts and "3 failed refreshes in a row (last: provider unavailable)" in facts
    assert "2 new facts carried over to the next refresh" in facts
    ui.shot("model-breaker")
    mindbank.store.save_refresh(stored, history=None, history_cap=50)
    page.reload()
    page.get_by_role("heading", name="Alice").wait_for()
    original = client.get(f"/mental-models/{model_id}").json()
    versions = len(client.get(f"/mental-models/{model_id}/history").json())

    # a memory retained in the model's scope through the API: stale after a reload
    retain(client, MARATHON)
    settle(client)
    page.reload()
    page.get_by_role("heading", name="Alice").wait_for()
    assert badge.inner_text() == "Stale"
    ui.shot("model-stale")

    # a dry run shows the diff and writes nothing
    before = mindbank.store.dump()  # type: ignore[attr-defined]
    page.get_by_role("button", name="Dry run").click()
    panel = page.locator(".dry-run")
    panel.get_by_role("heading", name="Dry run — nothing was written").wait_for()
    assert "+- " in panel.locator("pre.diff").inner_text() and "3:58" in panel.locator("pre.diff").inner_text()
    assert "retrieved 3 world, 3 observation; used 2 world" in panel.inner_text()  # counts in fact-type order
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]
    ui.shot("dry-run")

    # Refresh: followed until done, fresh again, one more history version
    page.get_by_role("button", name="Refresh").click()
    page.get_by_text("Refresh: done (content_written)").wait_for()
    assert badge.inner_text() == "Fresh"
    refreshed = client.get(f"/mental-models/{model_id}").json()
    assert "3:58" in refreshed["content"] and refreshed["is_stale"] is False
    assert len(client.get(f"/mental-models/{model_id}/history").json()) == versions + 1
    assert page.get_by_role("heading", name=f"History ({versions + 1} versions)").is_visible()
    ui.shot("refreshed")

    # a block's provenance lists the memory just retained
    page.locator(".doc .block", has_text="3:58").click()
    provenance = page.locator(".provenance")
    provenance.get_by_text(MARATHON).wait_for()
    assert "user:alice" in provenance.inner_text()
    ui.shot("provenance")

    # history: the diff between versions, then Revert restores the previous content
    history_diff = page.locator("section[aria-labelledby=history-title] .block-diff")
    added = history_diff.locator(".diff-block.add").inner_text()
    assert "3:58" in added and "[mem:" not in history_diff.inner_text()  # newest version → current: the addition
    newest = client.get(f"/mental-models/{model_id}/history").json()[0]["version"]
    page.get_by_role("button", name=f"Revert to version {newest}").click()
    note = page.get_by_role("dialog").inner_text()
    assert f"Version {newest} becomes the current content" in note and "manual" in note
    ui.shot("revert-confirm")
    page.get_by_role("dialog").get_by_role("button", name=f"Revert to version {newest}").click()
    page.get_by_text(f"Reverted to version {newest}.").wait_for()
    assert client.get(f"/mental-models/{model_id}").json()["content"] == original["content"]
    assert "3:58" not in page.locator(".doc").inner_text()
    page.get_by_role("heading", name="Last trace").scroll_into_view_if_needed()
    ui.shot("reverted")

    # the knowledge base: a folder with a page; the page's stale flag in the tree
    page.get_by_role("link", name=BANK, exact=True).click()
    page.get_by_role("button", name="New folder").click()
    page.get_by_label("Folder name").fill("People")
    page.get_by_role("button", name="Create folder").click()
    page.get_by_role("button", name="New page in folder People").click()
    page.get_by_label("Name", exact=True).fill("Alice's running")
    page.get_by_label("Source query").fill("How is Alice's running going?")
    page.get_by_label("Tags", exact=True).fill("user:alice")
    # pages read observations by default: consolidation formed one from each of Alice's facts
    page.get_by_text("observation only").wait_for()
    ui.shot("page-form-observations")
    page.get_by_label("world").check()
    page.get_by_label("observation").uncheck()
    page.get_by_text("Scope: 3 memories").wait_for()
    page.get_by_label("Refreshes").select_option("manual")
    page.get_by_role("button", name="Create page").click()
    page.get_by_text("First refresh: done (content_written)").wait_for()
    assert page.locator(".page-head .badge", has_text="Knowledge page").is_visible()
    page.get_by_role("link", name=BANK, exact=True).click()
    tree = page.locator(".tree")
    tree.locator("li.page", has_text="Alice's running").get_by_text("Fresh", exact=True).wait_for()
    retain(client, "Alice: Next I want to run the Tokyo marathon.")
    settle(client)
    page.reload()
    tree.locator("li.page", has_text="Alice's running").get_by_text("Stale", exact=True).wait_for()
    nodes = client.get("/knowledge-base/tree").json()["roots"]
    assert nodes[0]["name"] == "People" and nodes[0]["children"][0]["is_stale"] is True
    ui.shot("tree-stale-page")

    # deleting the folder asks first and says how many pages go (their mental models with them)
    page.get_by_role("button", name="Delete folder People").click()
    dialog = page.get_by_role("dialog")
    assert "1 page(s)" in dialog.inner_text()
    ui.shot("delete-folder-confirm")
    dialog.get_by_role("button", name="Delete folder and 1 page(s)").click()
    page.get_by_text("No folders or pages yet").wait_for()
    assert client.get("/mental-models", params={"exclude_knowledge_pages": "false"}).json()["total"] == 1

    # an automatic refresh inside the model's minimum interval parks: shown on the model row and under Parked,
    # with when it may run; cancelling it from the operations view
    trigger = {"refresh_after_consolidation": True, "min_refresh_interval_seconds": 3600}
    assert client.patch(f"/mental-models/{model_id}", json={"trigger": trigger}).status_code == 200
    retain(client, "Alice: I ran 30 km on Sunday.")

    def parked() -> str | None:
        pending = client.get("/operations", params={"status": "pending"}).json()["operations"]
        return next((op["id"] for op in pending if op["next_retry_at"] and op["mental_model_id"] == model_id), None)

    until(lambda: parked() is not None, "the automatic refresh parks")
    queued = parked()
    page.reload()
    page.locator(f"tr[data-model='{model_id}']").get_by_text("Parked until").wait_for()
    assert "after each consolidation; at most every 1 h" in page.locator(f"tr[data-model='{model_id}']").inner_text()
    page.get_by_role("link", name="Operations").click()
    page.get_by_role("link", name="Parked").click()
    row = page.locator(f"tr[data-operation='{queued}']")
    row.get_by_text("parked until").wait_for()
    ui.shot("operations-parked")
    row.get_by_role("button", name=f"Cancel operation {queued}").click()
    page.get_by_text(f"Operation {queued} cancelled.").wait_for()
    assert client.get(f"/operations/{queued}").json()["status"] == "cancelled"
    page.get_by_role("link", name="All").click()
    page.locator(f"tr[data-operation='{queued}']").get_by_text("cancelled").wait_for()
    ui.shot("operations")

    # the same form edits a model; Clear empties it (its version kept in history)
    page.locator(f"tr[data-operation='{queued}']").get_by_role("link", name="Alice").click()
    page.get_by_role("link", name="Edit").click()
    page.get_by_label("Name", exact=True).fill("Alice (runner)")
    assert page.get_by_label("Refreshes").input_value() == "consolidation"  # the stored trigger, shown as it is
    page.get_by_role("button", name="Save changes").click()
    page.get_by_role("heading", name="Alice (runner)").wait_for()
    page.get_by_role("button", name="Clear").click()
    page.get_by_role("dialog").get_by_role("button", name="Clear content").click()
    page.get_by_text("Clear: done").wait_for()
    page.get_by_text("No content yet").wait_for()
    assert client.get(f"/mental-models/{model_id}").json()["content"] == ""
    ui.shot("edited-and-cleared")

    assert ui.outside == [], f"the page reached outside the server: {ui.outside}"
    assert all(u.startswith(server) for u in ui.requests) and any("/knowledge-base/tree" in u for u in ui.requests)
    assert ui.errors == []


def test_the_control_plane_asks_for_the_api_key(browser: Any, live: Any, mindbank: MindBank, artifacts: Path) -> None:
    """With MINDBANK_API_KEY set nothing in the API answers without the key; the page asks for it and sends it."""
    from dataclasses import replace

    mindbank.settings = replace(mindbank.settings, api_key="s3cret")
    with live(mindbank) as server:
        assert httpx.get(f"{server}/v1/default/banks").status_code == 401
        assert httpx.get(f"{server}/ui/").status_code == 200  # the page itself holds no data
        ui = Page(browser, server, artifacts, prefix="key-")
        try:
            ui.page.goto(f"{server}/ui")
            dialog = ui.page.get_by_role("dialog", name="API key required")
            dialog.get_by_label("API key").fill("wrong")
            dialog.get_by_role("button", name="Use this key").click()
            dialog = ui.page.get_by_role("dialog", name="API key required")
            dialog.get_by_text("did not accept that key").wait_for()
            ui.shot("api-key-prompt")
            dialog.get_by_label("API key").fill("s3cret")
            dialog.get_by_role("button", name="Use this key").click()
            ui.page.get_by_role("heading", name="Banks").wait_for()
            assert ui.outside == [] and ui.errors == []
        finally:
            ui.close()
