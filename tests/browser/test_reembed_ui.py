"""The bank page's embedding line in headless Chromium against a live server: a bank whose vectors another model
made shows that model, the server's, and a "Re-embed with …" button; clicking it runs the re-embedding with its
progress and the page then shows the bank on the server's model (recall answers again). No request leaves the
server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_control_plane import BANK, Page, api, settle

from mindbank.service.facade import MindBank

MINILM = "all-MiniLM-L6-v2-int8"


@pytest.fixture
def ui(browser: Any, server: str, artifacts: Path) -> Iterator[Page]:
    page = Page(browser, server, artifacts, prefix="reembed-")
    yield page
    page.close()


def _bank_on_another_model(mindbank: MindBank) -> None:
    """Record the bank as made by ``legacy-embed``: its vectors staged and switched under that name."""
    store = mindbank.store
    pending = store.reembed_pending(BANK, "legacy-embed", 100)
    vectors = store.memory_vectors(BANK, [m for m, _ in pending])
    store.reembed_stage(BANK, "legacy-embed", [(m, t, vectors[m]) for m, t in pending])
    assert store.commit_reembed(BANK, "legacy-embed", 384)


def test_the_bank_page_re_embeds_a_bank_of_another_model(ui: Page, server: str, mindbank: MindBank) -> None:
    with api(server) as client:
        for text in ("Alice: I finished the Berlin marathon.", "Bob: I moved to Lisbon in May."):
            assert client.post("/memories", json={"items": [{"content": text}]}).status_code == 200
        settle(client)
        _bank_on_another_model(mindbank)
        assert client.post("/memories/recall", json={"query": "marathon"}).status_code == 409
        page = ui.page
        page.goto(f"{server}/ui#/b/{BANK}")
        line = page.locator("p.embedding")
        line.get_by_text("Embedding model: legacy-embed (384 dimensions)").wait_for()
        assert f"the server embeds with {MINILM} (384 dimensions)" in line.inner_text()
        ui.shot("other-model")
        page.get_by_role("button", name=f"Re-embed with {MINILM}").click()
        page.locator("p.embedding[data-embedding='matches']").wait_for()
        assert f"Embedding model: {MINILM} (384 dimensions)" in page.locator("p.embedding").inner_text()
        ui.shot("re-embedded")
        recalled = client.post("/memories/recall", json={"query": "marathon"})
        assert recalled.status_code == 200 and "marathon" in recalled.json()["results"][0]["text"]
        ops = client.get("/operations", params={"type": "reembed"}).json()["operations"]
        assert [o["status"] for o in ops] == ["completed"]
        op = client.get(f"/operations/{ops[0]['id']}").json()
        assert op["result_metadata"]["switched"] is True and op["result_metadata"]["from_model"] == "legacy-embed"
    assert ui.outside == [] and ui.errors == []
    assert httpx.get(f"{server}/health").status_code == 200
