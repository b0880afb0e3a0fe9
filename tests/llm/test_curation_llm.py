"""Curation with the LLM engine, over HTTP, through the OpenAI SDK against the fake OpenAI-compatible server, on both
stores (docs/curation.md): a pinned block, an edited block and a pinned section survive full and delta refreshes
byte-identical while the rest changes; an LLM delta operation that targets a pinned block is refused for that
operation and recorded (result and trace: the block may be out of date), the rest applied; the delta prompt marks
fixed blocks and a full refresh is told the fixed content; under review the LLM's refresh waits as a draft and
approve publishes exactly it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_servers import Reply, Seen, openai_reply, serving
from fastapi.testclient import TestClient
from llm_helpers import UUID
from postgres_testing import DatabaseFactory, require_postgres_url

from mindbank.config import Settings
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.llm.base import ManagedLLM
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.store.open import open_store

BASE = "/v1/default/banks/b"
FACTS = [
    "Dana is restoring a 1970s sailing boat.",
    "Dana lives in a cottage by the harbour.",
    "Dana sands the hull every weekend.",
]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "curation.db")
        return
    factory = DatabaseFactory(require_postgres_url())
    url = factory.create(embedder.dimension)
    try:
        yield url
    finally:
        factory.drop(url)
        factory.close()


class Script:
    """The fake model's side: full refreshes write a document whose wording changes each time; delta refreshes reply
    with ``delta`` (a function of the request's new memory ids)."""

    def __init__(self) -> None:
        self.full_calls = 0
        self.delta: Callable[[list[str]], list[dict[str, Any]]] = lambda ids: []
        self.prompts: list[str] = []

    def __call__(self, seen: Seen) -> Reply:
        prompt = json.dumps(seen.body)
        self.prompts.append(prompt)
        if seen.body.get("response_format"):  # a delta: JSON operations
            request = json.loads(seen.body["messages"][-1]["content"])
            ids = [m["id"] for m in request["new_memories"]]
            return openai_reply(json.dumps({"operations": self.delta(ids)}))
        self.full_calls += 1
        ids = list(dict.fromkeys(UUID.findall(prompt)))
        blocks = [{"text": f"Draft {self.full_calls}: Dana works on a boat.", "memory_ids": [ids[0]]}]
        home = [{"text": f"Version {self.full_calls}: Dana lives by the sea.", "memory_ids": [ids[-1]]}]
        document = {"sections": [{"heading": "Projects", "blocks": blocks}, {"heading": "Home", "blocks": home}]}
        return openai_reply(tool_calls=[("done", {"document": document})])


def _open(database: str, embedder: MiniLMEmbedder, url: str) -> MindBank:
    settings = Settings(database_url=database, worker_poll_seconds=0.02, enable_auto_consolidation=False)
    llm = ManagedLLM(
        OpenAIProvider(model="fake-gpt", api_key="sk-fake", base_url=url + "/v1", timeout=5.0), backoff_seconds=0.01
    )
    store = open_store(settings.resolved_database_url, dimension=embedder.dimension)
    return MindBank(store=store, embedder=embedder, settings=settings, llms={"refresh": llm})


def _retain(http: TestClient, text: str) -> None:
    r = http.post(f"{BASE}/memories", json={"items": [{"content": text, "tags": ["user:dana"]}]})
    assert r.status_code == 200, r.text


def _view(http: TestClient) -> dict[str, Any]:
    return http.get(f"{BASE}/mental-models/dana/blocks").json()  # type: ignore[no-any-return]


def _block(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    return next(b for s in view["sections"] for b in s["blocks"] if b["id"] == block_id)


def test_llm_refreshes_keep_fixed_content_and_refuse_a_pinned_edit(database: str, embedder: MiniLMEmbedder) -> None:
    script = Script()
    with serving(script) as server:
        mb = _open(database, embedder, server.url)
        try:
            http = TestClient(create_app(mb, run_worker=False), base_url="http://localhost")
            for fact in FACTS:
                _retain(http, fact)
            body = {"id": "dana", "name": "Dana", "source_query": "What is Dana working on?", "tags": ["user:dana"],
                    "trigger": {"mode": "delta", "keep_trace": True}}  # fmt: skip
            assert http.post(f"{BASE}/mental-models", json=body).status_code == 200
            mb.run_pending()
            view = _view(http)
            projects, home = view["sections"]
            pinned_id, edited_id = projects["blocks"][0]["id"], home["blocks"][0]["id"]
            assert http.patch(f"{BASE}/mental-models/dana/blocks/{pinned_id}", json={"pinned": True}).status_code == 200
            r = http.patch(f"{BASE}/mental-models/dana/blocks/{edited_id}", json={"text": "Dana's cottage is blue."})
            assert r.status_code == 200
            r = http.patch(f"{BASE}/mental-models/dana/sections/home", json={"pinned": True})
            assert r.status_code == 200
            fixed = {i: _block(r.json(), i) for i in (pinned_id, edited_id)}
            home_before = next(s for s in r.json()["sections"] if s["id"] == "home")

            # a delta whose first operation rewrites the pinned block: refused and recorded, the append applied
            script.delta = lambda ids: [
                {"op": "replace_block", "section_id": "projects", "block_id": pinned_id,
                 "text": "Dana sold the boat.", "memory_ids": ids},
                {"op": "append_block", "section_id": "projects", "text": "Dana bought new sails.", "memory_ids": ids},
            ]  # fmt: skip
            _retain(http, "Dana bought new sails for the boat.")
            assert http.post(f"{BASE}/mental-models/dana/refresh").status_code == 200
            mb.run_pending()
            model = http.get(f"{BASE}/mental-models/dana").json()
            response = model["reflect_response"]
            assert response["effective_mode"] == "delta" and "Dana bought new sails." in model["content"]
            (refused,) = response["curation"]["refused"]
            assert refused["op"] == "replace_block" and refused["block_id"] == pinned_id and refused["fixed"] is True
            assert [o["op"] for o in response["delta_operations_applied"]] == ["append_block"]
            warning = f"pinned block {pinned_id} may be out of date: Dana sold the boat."
            assert any(w.startswith(warning) for w in response["trace"]["warnings"])
            assert response["trace"]["curation"]["refused"] == [refused]
            delta_prompt = next(p for p in reversed(script.prompts) if "response_format" in p)
            assert '\\"fixed\\": true' in delta_prompt and "written or pinned by a person" in delta_prompt

            # full and delta refreshes: the fixed blocks stay byte-identical while the rest changes
            contents = {model["content"]}
            for i, mode in enumerate(["full", "delta", "full", "delta"]):
                script.delta = lambda ids, i=i: [
                    {"op": "append_block", "section_id": "projects", "text": f"Note {i}.", "memory_ids": ids}
                ]
                _retain(http, f"Dana finished step {i} of the restoration.")
                assert http.post(f"{BASE}/mental-models/dana/refresh",
                                 json={"mode": "full"} if mode == "full" else {}).status_code == 200  # fmt: skip
                mb.run_pending()
                model = http.get(f"{BASE}/mental-models/dana").json()
                assert model["reflect_response"]["outcome"] == "content_written", model["reflect_response"]
                now = _view(http)
                assert {k: _block(now, k) for k in fixed} == fixed, f"refresh {i} ({mode}) touched fixed content"
                assert next(s for s in now["sections"] if s["id"] == "home") == home_before  # the pinned section
                contents.add(model["content"])
            assert len(contents) == 5
            full_prompt = next(p for p in reversed(script.prompts) if "response_format" not in p)
            assert "Fixed content" in full_prompt and "Dana's cottage is blue." in full_prompt
            assert "Draft 3:" in model["content"]  # the rest was rewritten

            # review before publish: the LLM's refresh waits as a draft until approved, then publishes exactly it
            assert http.patch(f"{BASE}/mental-models/dana", json={"trigger": {"review": True}}).status_code == 200
            published = model["content"]
            script.delta = lambda ids: [
                {"op": "append_block", "section_id": "projects", "text": "Reviewed note.", "memory_ids": ids}
            ]
            _retain(http, "Dana varnished the deck.")
            assert http.post(f"{BASE}/mental-models/dana/refresh").status_code == 200
            mb.run_pending()
            assert http.get(f"{BASE}/mental-models/dana").json()["content"] == published
            draft = http.get(f"{BASE}/mental-models/dana/draft").json()
            assert "+Reviewed note. [mem:" in draft["diff"] and "Reviewed note." not in published
            approved = http.post(f"{BASE}/mental-models/dana/draft/approve", json={"draft_id": draft["draft_id"]})
            assert approved.status_code == 200 and approved.json()["content"] == draft["content"]
            assert {k: _block(_view(http), k) for k in fixed} == fixed
        finally:
            mb.close()
