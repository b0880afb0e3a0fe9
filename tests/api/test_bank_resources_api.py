"""Directives, bank config reset and profile, files/retain and operation administration over HTTP."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.testing_files import text_pdf

BASE = "/v1/default/banks/b"


def test_directives_crud_and_listing(client: TestClient) -> None:
    r = client.post(f"{BASE}/directives", json={"name": "tone", "content": "Answer in one sentence.", "priority": 1})
    assert r.status_code == 200
    tone = r.json()
    assert tone["bank_id"] == "b" and tone["is_active"] is True and tone["tags"] == [] and tone["created_at"]
    alice = client.post(f"{BASE}/directives", json={"name": "alice", "content": "Call her Ali.", "priority": 5,
                                                    "tags": ["user:alice"]}).json()  # fmt: skip
    off = client.post(f"{BASE}/directives", json={"name": "off", "content": "x", "is_active": False}).json()
    listed = client.get(f"{BASE}/directives").json()
    assert [d["name"] for d in listed["items"]] == ["alice", "tone"] and listed["total"] == 2  # active, by priority
    assert client.get(f"{BASE}/directives", params={"active_only": False}).json()["total"] == 3
    scoped = client.get(f"{BASE}/directives", params={"tags": ["user:bob"]}).json()
    assert [d["name"] for d in scoped["items"]] == ["tone"]  # global ones always; tagged ones when they match
    r = client.patch(f"{BASE}/directives/{off['id']}", json={"is_active": True, "content": "now on"})
    assert r.json()["is_active"] is True and r.json()["content"] == "now on" and r.json()["name"] == "off"
    assert client.get(f"{BASE}/directives/{alice['id']}").json()["priority"] == 5
    assert client.delete(f"{BASE}/directives/{alice['id']}").status_code == 200
    assert client.get(f"{BASE}/directives/{alice['id']}").status_code == 404
    for bad in ({"name": " ", "content": "x"}, {"name": "n", "content": ""}, {"content": "x"}):
        assert client.post(f"{BASE}/directives", json=bad).status_code == 422
    assert client.patch(f"{BASE}/directives/nope", json={"name": "x"}).status_code == 404


def test_reset_config_and_profile_fields(client: TestClient) -> None:
    client.put(BASE, json={"name": "B"})
    client.patch(f"{BASE}/config", json={"updates": {"recall_max_tokens": 512}})
    r = client.delete(f"{BASE}/config")
    assert r.status_code == 200 and r.json()["overrides"] == {} and r.json()["config"]["recall_max_tokens"] == 2048
    assert client.delete("/v1/default/banks/ghost/config").status_code == 404
    assert client.put(BASE, json={"reflect_mission": "Help the team ship."}).json()["mission"] == "Help the team ship."
    assert client.put(BASE, json={"background": "Old spelling."}).json()["mission"] == "Old spelling."
    r = client.put(BASE, json={"retain_mission": "extract less"})
    assert r.status_code == 422 and "retain_mission" in r.text
    assert client.get(f"{BASE}/profile").json()["mission"] == "Old spelling."
    traits = {"skepticism": 5, "literalism": 1, "empathy": 2}
    assert client.put(f"{BASE}/profile", json={"disposition": traits}).json()["disposition"] == traits
    assert client.put(f"{BASE}/profile", json={"disposition": {**traits, "empathy": 9}}).status_code == 422
    r = client.post(f"{BASE}/background", json={"content": "Born in Texas."})
    assert r.json()["mission"] == "Old spelling.\n\nBorn in Texas." and r.json()["disposition"] == traits
    assert client.get("/v1/default/banks/ghost/profile").status_code == 404


pdf = text_pdf


def test_files_retain_reads_text_markdown_html_and_pdf(client: TestClient, mindbank: MindBank) -> None:
    files = [
        ("files", ("notes.txt", b"Bob bakes sourdough every Sunday.", "text/plain")),
        ("files", ("plan.md", b"# Plan\n\nDana ships the release on Thursday.", "text/markdown")),
        ("files", ("page.html", b"<html><head><style>p{}</style><script>x()</script></head><body><h1>News</h1>"
                                b"<p>Carol <b>moved</b> to Lisbon.</p></body></html>", "text/html")),
        ("files", ("race.pdf", pdf("Alice finished the Berlin marathon."), "application/pdf")),
    ]  # fmt: skip
    meta = '{"files_metadata": [{"tags": ["t"]}, {}, {"document_id": "web"}, {"context": "race"}]}'
    r = client.post(f"{BASE}/files/retain", files=files, data={"request": meta})
    assert r.status_code == 200, r.text
    ops = r.json()["operation_ids"]
    assert len(ops) == 4
    for op in ops:
        assert mindbank.wait_for("b", op, timeout=30).status == "completed"
    texts = {m["document_id"]: m for m in client.get(f"{BASE}/memories/list").json()["items"]}
    assert texts["notes.txt"]["tags"] == ["t"] and texts["notes.txt"]["metadata"]["content_type"] == "text/plain"
    assert "Carol moved to Lisbon." in client.get(f"{BASE}/documents/web").json()["original_text"]
    assert "x()" not in client.get(f"{BASE}/documents/web").json()["original_text"]
    assert "Berlin marathon" in texts["race.pdf"]["text"] and texts["race.pdf"]["context"] == "race"
    assert texts["plan.md"]["metadata"]["filename"] == "plan.md"


def test_files_retain_refuses_what_it_cannot_read(client: TestClient, mindbank: MindBank) -> None:
    before = mindbank.store.dump()  # type: ignore[attr-defined]
    r = client.post(f"{BASE}/files/retain", files=[("files", ("a.txt", b"fine", "text/plain")),
                                                    ("files", ("photo.png", b"\x89PNG", "image/png"))])  # fmt: skip
    assert r.status_code == 415 and r.json()["media_type"] == "image/png" and "photo.png" in r.json()["detail"]
    r = client.post(f"{BASE}/files/retain", files=[("files", ("scan.pdf", b"not a pdf", "application/pdf"))])
    assert r.status_code == 415 and "PDF" in r.json()["detail"]
    r = client.post(f"{BASE}/files/retain", files=[("files", ("a.txt", b"x", "text/plain"))],
                    data={"request": '{"files_metadata": [{}, {}]}'})  # fmt: skip
    assert r.status_code == 422 and "files_metadata" in r.text
    assert client.post(f"{BASE}/files/retain", data={"request": "{}"}).status_code == 422
    assert mindbank.store.dump() == before  # type: ignore[attr-defined]


def test_files_retain_size_limit(mindbank: MindBank, settings: Settings) -> None:
    small = MindBank(store=mindbank.store, embedder=mindbank.embedder,
                     settings=replace(settings, file_retain_max_bytes=10))  # fmt: skip
    with TestClient(create_app(small, run_worker=False), base_url="http://localhost") as c:
        r = c.post(f"{BASE}/files/retain", files=[("files", ("a.txt", b"x" * 11, "text/plain"))])
    assert r.status_code == 413 and r.json()["detail"][0]["loc"] == ["body", "files[0]"]


def test_operation_retry_and_delete(client: TestClient, mindbank: MindBank) -> None:
    mindbank.stop_worker()
    created = client.post(f"{BASE}/mental-models", json={"name": "n", "source_query": "q", "id": "m"}).json()
    op_id = created["operation_id"]
    assert client.post(f"{BASE}/operations/{op_id}/retry").status_code == 409  # pending, not failed
    mindbank.store.claim_operation("w", 60)
    assert client.delete(f"{BASE}/operations/{op_id}/delete").status_code == 409  # a worker runs it
    mindbank.store.finish_operation(op_id, status="failed", result=None, error="boom")
    r = client.post(f"{BASE}/operations/{op_id}/retry")
    assert r.status_code == 200 and r.json() == {"success": True, "message": f"Operation {op_id} queued for retry",
                                                 "operation_id": op_id}  # fmt: skip
    assert client.get(f"{BASE}/operations/{op_id}").json()["status"] == "pending"
    mindbank.run_pending()
    assert client.get(f"{BASE}/operations/{op_id}").json()["status"] == "completed"
    r = client.delete(f"{BASE}/operations/{op_id}/delete")
    assert r.status_code == 200 and r.json()["operation_id"] == op_id
    assert client.get(f"{BASE}/operations/{op_id}").status_code == 404
    assert client.post(f"{BASE}/operations/nope/retry").status_code == 404
    assert client.delete(f"{BASE}/operations/nope/delete").status_code == 404
