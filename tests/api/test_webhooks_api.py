"""Webhooks over HTTP: CRUD, refused targets (422), and a receiver on 127.0.0.1 (loopback allowed by
configuration here) getting a correctly signed ``mental_model.refreshed`` after a refresh, retried when it
answers 500, with the attempts in the delivery log."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mindbank.config import Settings
from mindbank.server import create_app
from mindbank.service.facade import MindBank

BASE = "/v1/default/banks/b"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Loopback webhook targets allowed, fast retries."""
    return replace(settings, webhook_allow_private_targets=True, webhook_retry_backoff_seconds=0.05)


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1 answering ``statuses`` in turn (then 200)."""

    statuses: list[int]
    seen: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    def wait_for(self, count: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.seen) < count:
            assert time.monotonic() < deadline, f"only {len(self.seen)} deliveries arrived"
            time.sleep(0.02)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(statuses=[500])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.seen.append(({k.lower(): v for k, v in self.headers.items()}, body))
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"try again")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/mindbank?x=1"
    yield state
    server.shutdown()
    server.server_close()


def test_signed_refresh_event_with_retries(client: TestClient, mindbank: MindBank, receiver: Receiver) -> None:
    secret = "s3cret"
    created = client.post(f"{BASE}/webhooks", json={
        "url": receiver.url, "secret": secret, "event_types": ["mental_model.refreshed"],
        "http_config": {"headers": {"X-Team": "memory"}},
    })  # fmt: skip
    assert created.status_code == 201, created.text
    hook = created.json()
    assert hook["secret"] == "********" and hook["enabled"] is True and hook["http_config"]["method"] == "POST"
    client.post(f"{BASE}/memories", json={"items": [{"content": "Alice: I started training for the Berlin marathon.",
                                                     "tags": ["user:alice"]}]})  # fmt: skip
    model = client.post(f"{BASE}/mental-models", json={"name": "Alice", "source_query": "What is Alice doing?",
                                                       "tags": ["user:alice"], "id": "alice"}).json()  # fmt: skip
    assert mindbank.wait_for("b", model["operation_id"], timeout=30).status == "completed"
    receiver.wait_for(2)  # the first attempt got a 500; the retry got a 200
    first, second = receiver.seen
    assert first[1] == second[1]  # the same event, resent
    headers, body = second
    assert headers["x-hindsight-signature"] == "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    stamp, _, timed = headers["x-hindsight-signature-v2"].partition(",v1=")
    expected = hmac.new(secret.encode(), stamp.removeprefix("t=").encode() + b"." + body, hashlib.sha256).hexdigest()
    assert timed == expected
    assert headers["x-hindsight-event"] == "mental_model.refreshed" and headers["x-team"] == "memory"
    event = json.loads(body)
    assert event["event"] == "mental_model.refreshed" and event["bank_id"] == "b" and event["status"] == "completed"
    assert event["operation_id"] == model["operation_id"]
    data = event["data"]
    assert data["mental_model_id"] == "alice" and data["outcome"] == "content_written"
    assert data["history_entry"] is not None and "previous_content" in data["history_entry"]
    deadline = time.monotonic() + 10
    while (log := client.get(f"{BASE}/webhooks/{hook['id']}/deliveries").json())["items"][0]["status"] != "delivered":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    delivery = log["items"][0]
    assert delivery["attempts"] == 2 and delivery["last_response_status"] == 200 and delivery["last_error"] is None
    assert delivery["event_type"] == "mental_model.refreshed" and log["next_cursor"] is None
    op = next(o for o in mindbank.list_operations("b", operation_type="webhook_delivery")[0])
    assert op.status == "completed"


def test_refresh_failure_event_and_disabled_webhook(client: TestClient, mindbank: MindBank,
                                                    receiver: Receiver) -> None:  # fmt: skip
    receiver.statuses.clear()
    hook = client.post(f"{BASE}/webhooks", json={"url": receiver.url, "event_types": [
        "mental_model.refresh_failed", "retain.completed"]}).json()  # fmt: skip
    client.post(f"{BASE}/memories", json={"items": [{"content": "Alice: I started training for the Berlin marathon.",
                                                     "document_id": "d1"}]})  # fmt: skip
    schema = {"type": "object", "properties": {"sport": {"type": "string"}}}
    model = client.post(f"{BASE}/mental-models", json={"name": "A", "source_query": "What is Alice doing?",
                                                       "trigger": {"response_schema": schema}}).json()  # fmt: skip
    assert mindbank.wait_for("b", model["operation_id"], timeout=30).status == "failed"
    receiver.wait_for(2)
    events = {json.loads(body)["event"]: json.loads(body) for _, body in receiver.seen}
    assert "x-hindsight-signature" not in receiver.seen[0][0]  # no secret, no signature
    assert events["retain.completed"]["data"]["document_id"] == "d1"
    failed = events["mental_model.refresh_failed"]
    assert failed["status"] == "failed" and failed["data"]["failure_reason"] == "structured_output_failed"
    assert failed["data"]["outcome"] == "refresh_failed_structured_output"
    assert failed["data"]["history_entry"]["kind"] == "refresh_failed"
    r = client.patch(f"{BASE}/webhooks/{hook['id']}", json={"enabled": False, "secret": "new"})
    assert r.json()["enabled"] is False and r.json()["secret"] == "********"
    client.post(f"{BASE}/memories", json={"items": [{"content": "Bob bakes bread."}]})
    time.sleep(0.3)
    assert len(receiver.seen) == 2  # a disabled webhook gets nothing
    assert client.patch(f"{BASE}/webhooks/{hook['id']}", json={"secret": None}).json()["secret"] is None


def test_webhook_crud_and_validation(client: TestClient) -> None:
    hook = client.post(f"{BASE}/webhooks", json={"url": "http://127.0.0.1:9/hook"}).json()
    assert hook["event_types"] == ["consolidation.completed"] and hook["secret"] is None
    listed = client.get(f"{BASE}/webhooks").json()
    assert listed["total"] == 1 and listed["items"][0]["id"] == hook["id"]
    for bad, name in (
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "http://127.0.0.1:9/h", "event_types": ["nope"]}, "event_types[0]"),
        ({"url": "http://127.0.0.1:9/h", "event_types": []}, "event_types"),
        ({"url": "http://127.0.0.1:9/h", "http_config": {"method": "GET"}}, "http_config.method"),
        ({"url": "http://127.0.0.1:9/h", "http_config": {"timeout_seconds": 600}}, "http_config.timeout_seconds"),
        ({"url": "http://127.0.0.1:9/h", "http_config": {"headers": {"X-Hindsight-Signature": "x"}}},
         "http_config.headers.X-Hindsight-Signature"),
    ):  # fmt: skip
        r = client.post(f"{BASE}/webhooks", json=bad)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == name, (bad, r.text)
    assert client.patch(f"{BASE}/webhooks/{hook['id']}", json={"url": "gopher://x"}).status_code == 422
    assert client.get(f"{BASE}/webhooks/{hook['id']}/deliveries", params={"cursor": "yesterday"}).status_code == 422
    assert client.delete(f"{BASE}/webhooks/{hook['id']}").status_code == 200
    assert client.delete(f"{BASE}/webhooks/{hook['id']}").status_code == 404
    assert client.get(f"{BASE}/webhooks/{hook['id']}/deliveries").status_code == 404


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/hook", "http://192.168.1.5/hook",
     "http://169.254.169.254/latest/meta-data", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/hook",
     "http://0.0.0.0/hook", "https://no-such-host.invalid/hook"],
)  # fmt: skip
def test_private_targets_are_refused_by_default(url: str, mindbank: MindBank, settings: Settings) -> None:
    strict = MindBank(store=mindbank.store, embedder=mindbank.embedder,
                      settings=replace(settings, webhook_allow_private_targets=False))  # fmt: skip
    with TestClient(create_app(strict, run_worker=False), base_url="http://localhost") as c:
        r = c.post(f"{BASE}/webhooks", json={"url": url})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "url", r.text
        assert c.get(f"{BASE}/webhooks").json()["total"] == 0
