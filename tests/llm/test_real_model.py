"""The LLM path against a real model: llama.cpp's OpenAI-compatible server running SmolLM2-135M-Instruct
(``llama_server.py``), reached through the real OpenAI SDK via a recording proxy on 127.0.0.1 (which caps each reply
at ``REPLY_TOKENS`` so a 135M model under a grammar cannot write until its context is full).

A 135M model writes weak text; these tests judge the invariants, not the prose: structured output parses against
its JSON schema (llama.cpp constrains decoding to it); a refresh publishes a document only when every block cites
memories of the bank, else it fails cleanly with the document and watermark kept; no request ends in a 5xx; spend is
recorded; each path sent the schema or the tools it should. What the model produced per path is in docs/llm.md
("Compatibility with a small local model"). The embedding tests batch texts per request, and move a bank from the
bundled MiniLM (384) to the server's SmolLM2 embeddings (576) with a kill -9 mid-way, on both stores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from fake_servers import FakeServer, forwarding
from fastapi.testclient import TestClient
from llama_server import CHAT_MODEL, EMBED_DIMENSION, EMBED_MODEL, llama_server
from llm_helpers import QUERY, TAG, retain, untouched
from sample_texts import BOAT
from test_reembed_kill import Server, fill, kill_mid_reembedding

from mindbank.config import Settings
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.domain.scope import MemoryFilter
from mindbank.domain.timeutil import utcnow
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.providers.embeddings.openai_compatible import OpenAIEmbedder
from mindbank.providers.llm.base import ManagedLLM, system, user
from mindbank.providers.llm.openai_provider import OpenAIProvider
from mindbank.server import create_app
from mindbank.service.facade import MindBank
from mindbank.store.base import Store
from mindbank.store.open import open_store

REPLY_TOKENS = 128
EMBED_BATCH = 64  # texts per embeddings request (the launcher's sequences per context)
REEMBED_MEMORIES = 2000  # the bank moved to the real model with a kill -9 mid-way, on each store
REEMBED_PART = 64  # memories per part of that re-embedding (one request each)
# The real model's cost is per token (SmolLM2 reads every token through all its layers), so the bank's memories are
# as short as memories come: two words each, 2-3 tokens, where a sentence such as "Ana moored boat 12 at pier 12."
# is 16 (each digit is a token). 2,000 of them cost about what 300 sentences did.
WORDS = (
    "red blue green black white gold silver pink brown grey apple bread cake corn fish milk rice salt soup tea boat "
    "bike car ship train road park farm lake hill river beach field garden house door roof wall chair table lamp "
    "book map pen cup"
).split()


def short_note(i: int) -> str:
    """The text of the re-embedded bank's memory ``i`` (< ``len(WORDS) ** 2``): two words, each pair once."""
    return f"{WORDS[i // len(WORDS)].capitalize()} {WORDS[i % len(WORDS)]}"


DIALOGUE = "Dana: Hi!\n\nAssistant: I booked the boat yard for Saturday.\n\nDana: Great, my brother comes too."


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server's base URL (one process for the module)."""
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


@pytest.fixture
def proxy(llama: str) -> Iterator[FakeServer]:
    """A recording proxy in front of the server: ``proxy.seen`` lists what the server received."""
    server = FakeServer(forwarding(llama, max_tokens=REPLY_TOKENS)).start()
    yield server
    server.stop()


@pytest.fixture
def llm(proxy: FakeServer) -> ManagedLLM:
    return ManagedLLM(
        OpenAIProvider(
            model=CHAT_MODEL,
            api_key=None,
            base_url=proxy.url + "/v1",
            timeout=300.0,
            structured_output="json_object",  # llama-cpp-python's server refuses "json_schema"
        ),
        max_retries=1,
    )


def chat_bodies(proxy: FakeServer) -> list[dict[str, Any]]:
    return [s.body for s in proxy.seen if s.path.endswith("/chat/completions")]


def schemas(proxy: FakeServer) -> list[dict[str, Any]]:
    """The JSON schemas the server was asked to constrain replies to."""
    return [b["response_format"]["schema"] for b in chat_bodies(proxy) if "response_format" in b]


def tool_names(proxy: FakeServer) -> set[str]:
    return {t["function"]["name"] for b in chat_bodies(proxy) for t in b.get("tools", [])}


def prompt_chars(proxy: FakeServer) -> list[int]:
    return [len(json.dumps(b["messages"])) for b in chat_bodies(proxy)]


def blocks(document: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not document:
        return []
    return [b for section in document.get("sections", []) for b in section.get("blocks", [])]


def test_structured_output_is_constrained_to_the_schema(llm: ManagedLLM, proxy: FakeServer) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["city", "year"],
    }
    messages = [system("Answer in JSON."), user("Dana moved to Lisbon in 2019. Where and when did she move?")]
    result = llm.chat(messages, response_schema=schema, schema_name="move", max_tokens=64)
    assert isinstance(result.parsed, dict), result.text
    assert isinstance(result.parsed["city"], str) and isinstance(result.parsed["year"], int)
    (body,) = chat_bodies(proxy)
    assert body["response_format"] == {"type": "json_object", "schema": schema}
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


def test_fact_extraction(open_bank: Any, llm: ManagedLLM, proxy: FakeServer) -> None:
    mb = open_bank(retain=llm)
    ids = mb.retain("b", [RetainItem(content=DIALOGUE, context="chat")]).memory_ids
    assert ids, "extraction (or its splitter fallback) keeps facts"
    assert all(m.text.strip() for m in mb.store.get_memories("b", ids))
    assert schemas(proxy), "extraction asks for JSON-schema output"
    print("extraction prompt chars", prompt_chars(proxy), [m.text for m in mb.store.get_memories("b", ids)])


def test_consolidation(open_bank: Any, llm: ManagedLLM, proxy: FakeServer) -> None:
    mb = open_bank(consolidation=llm)
    ids = set(retain(mb, *BOAT))
    op_id, _ = mb.consolidate("b")
    mb.run_pending()
    op = mb.store.get_operation("b", op_id)
    assert op is not None and op.status == "completed", op and op.error
    observations = mb.store.list_observations("b")
    for observation in observations:
        assert set(observation.source_memory_ids) <= ids
    assert schemas(proxy), "consolidation asks for JSON-schema output"
    print("consolidation prompt chars", prompt_chars(proxy), "observations", [o.text for o in observations])


def _memory_ids(mb: MindBank) -> set[str]:
    memories, _ = mb.store.list_memories("b", MemoryFilter(), query=None, limit=10_000, offset=0)
    return {m.id for m in memories}


def _refresh_outcome(mb: MindBank, model_id: str, before: MentalModel | None) -> str:
    """Check the refresh invariants and name the outcome: ``published`` (every block of the document cites memories
    of the bank), ``failed`` (a failure recorded, the document and watermark as they were) or ``content_unchanged``
    (a refresh that succeeded without changing the document) or ``unchanged`` (a transient failure: nothing recorded,
    nothing changed)."""
    after = mb.get_mental_model("b", model_id)
    failed_before = None if before is None else before.last_refresh_failed_at
    if after.last_refresh_failed_at is not None and after.last_refresh_failed_at != failed_before:
        if before is not None:
            untouched(before, after)
        return "failed"
    stored = _memory_ids(mb)
    published = blocks(after.structured_document)
    refreshed = (
        before is not None and before.structured_document and after.last_refreshed_at != before.last_refreshed_at
    )
    if refreshed and before is not None and after.structured_document == before.structured_document:
        # a successful refresh whose answer changed nothing (no delta operation applied): the document stays,
        # the watermark moves to what it read
        assert after.content == before.content
        return "content_unchanged"
    if not published or (before is not None and after.structured_document == before.structured_document):
        # a transient failure (the server timed out or answered 5xx): nothing recorded, nothing changed, and the
        # worker retries the operation later
        if before is not None:
            untouched(before, after)
        return "unchanged (transient, retried later)"
    for block in published:
        assert block["memory_ids"] and set(block["memory_ids"]) <= stored, block
    return "published"


def _spent(mb: MindBank, model_id: str) -> int:
    spend = mb.store.refresh_spend_by_model("b", [model_id], utcnow().date().isoformat())
    return spend[model_id].today.llm_calls if model_id in spend else 0


@pytest.mark.parametrize("mode", ["full", "delta"])
def test_refresh(open_bank: Any, llm: ManagedLLM, proxy: FakeServer, mode: str) -> None:
    mb = open_bank(refresh=llm, reflect=llm)
    retain(mb, *BOAT[:2])
    mb.create_mental_model("b", name="Dana", source_query=QUERY, tags=list(TAG), id="dana", trigger={"mode": mode})
    mb.run_pending()
    first = _refresh_outcome(mb, "dana", None)
    before = mb.get_mental_model("b", "dana")
    retain(mb, *BOAT[2:])
    sent = len(proxy.seen)
    mb.refresh_mental_model("b", "dana")
    mb.run_pending()
    second = _refresh_outcome(mb, "dana", before)
    if {"published", "failed", "content_unchanged"} & {first, second}:
        assert _spent(mb, "dana") > 0, "spend is recorded whatever the outcome"
    later = [s.body for s in proxy.seen[sent:] if s.path.endswith("/chat/completions")]
    if mode == "delta" and first == "published":
        assert any("response_format" in b for b in later), "delta operations ask for JSON-schema output"
    assert tool_names(proxy) or schemas(proxy), "the refresh sent its tools or its schema"
    print(
        f"refresh {mode}: first {first}, second {second}; prompt chars {prompt_chars(proxy)}; "
        f"tools {sorted(tool_names(proxy))}; schemas {schemas(proxy)}"
    )


def test_reflect_over_http(open_bank: Any, llm: ManagedLLM, proxy: FakeServer) -> None:
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    with TestClient(
        create_app(mb, run_worker=False), base_url="http://localhost", raise_server_exceptions=False
    ) as http:
        response = http.post("/v1/default/banks/b/reflect", json={"query": QUERY})
    # 200, or the provider's failure mapped cleanly: 502 (refused), 503 (unavailable; llama-cpp-python answers its own
    # request validation errors, e.g. of an assistant tool-call message, with HTTP 500, which reads as transient)
    assert response.status_code in (200, 502, 503), response.text
    if response.status_code != 200:
        assert response.json()["detail"].startswith("LLM provider error")
    assert "recall" in tool_names(proxy) or tool_names(proxy), "reflect offers the agent its tools"
    print("reflect", response.status_code, response.text[:300], "prompt chars", prompt_chars(proxy))


def test_embeddings_from_the_real_server(llama: str, tmp_path: Path) -> None:
    # several texts per request: scripts/llama_server.py opens embedding models with room for 64 sequences
    embedder = OpenAIEmbedder(model=EMBED_MODEL, base_url=llama + "/v1", timeout=120.0, batch_size=EMBED_BATCH)
    assert embedder.dimension == EMBED_DIMENSION
    texts = ["Dana restores a sailing boat.", "Dana repairs an old boat.", "Taxes are due in May."]
    vectors = embedder.embed(texts)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    # a text's vector does not depend on the texts batched with it (each is its own sequence)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.all(np.sum(alone * vectors, axis=1) > 0.999)
    settings = Settings(database_url=str(tmp_path / "embed.db"), enable_auto_consolidation=False)
    mb = MindBank.open(settings, embedder=embedder)
    try:
        retain(mb, *BOAT)
        hits = mb.recall("b", "sailing boat restoration", retriever="dense")
        assert hits and mb.store.bank_embedding_model("b") == (EMBED_MODEL, EMBED_DIMENSION)
    finally:
        mb.close()


@pytest.fixture(scope="module")
def minilm_notes(embedder: MiniLMEmbedder) -> npt.NDArray[np.float32]:
    """The bundled MiniLM's vectors of the bank's notes (made once for both stores)."""
    return embedder.embed([short_note(i) for i in range(REEMBED_MEMORIES)])


def _vectors_of(store: Store) -> dict[str, npt.NDArray[np.float32]]:
    """Every memory of bank ``b``: its text and its stored vector."""
    memories, total = store.list_memories("b", MemoryFilter(), query=None, limit=100_000, offset=0)
    vectors = store.memory_vectors("b", [m.id for m in memories])
    assert total == len(memories) == len(vectors)
    return {m.text: vectors[m.id] for m in memories}


def test_a_killed_reembedding_to_the_real_model_leaves_one_model(
    embedding_database: str, proxy: FakeServer, embedder: MiniLMEmbedder, minilm_notes: npt.NDArray[np.float32]
) -> None:
    """kill -9 mid-way through moving a bank from the bundled MiniLM (384 wide) to the real server's SmolLM2
    embeddings (576 wide), both stores: the bank is wholly on one model after the kill and after the resumed
    operation commits, nothing lost or doubled, recall answers (test_reembed_kill.kill_mid_reembedding)."""
    minilm, real = (embedder.name, embedder.dimension), (EMBED_MODEL, EMBED_DIMENSION)
    store = open_store(embedding_database, dimension=embedder.dimension)
    try:
        fill(store, minilm_notes, minilm, short_note)
    finally:
        store.close()
    made = {short_note(i): minilm_notes[i] / np.linalg.norm(minilm_notes[i]) for i in range(REEMBED_MEMORIES)}

    def on_minilm(store: Store) -> None:
        for text, vector in _vectors_of(store).items():
            expected = made[text] if text in made else embedder.embed([text])[0]  # the retain that came mid-way
            assert np.allclose(vector, expected, atol=1e-3), text

    server_embedder = OpenAIEmbedder(model=EMBED_MODEL, base_url=proxy.url + "/v1", timeout=120.0)

    def on_real(store: Store) -> None:
        stored = _vectors_of(store)
        assert {vector.shape for vector in stored.values()} == {(EMBED_DIMENSION,)}
        sample = [text for i, text in enumerate(sorted(stored)) if i % 50 == 0 or text not in made]
        expected = server_embedder.embed(sample)  # the real server's vectors of those texts, batched otherwise
        assert all(float(stored[text] @ vector) > 0.999 for text, vector in zip(sample, expected, strict=True))

    server = Server(embedding_database, proxy, model=EMBED_MODEL, previous=None)
    server.env["MINDBANK_EMBEDDING_BATCH_SIZE"] = str(EMBED_BATCH)
    server.env["MINDBANK_EMBEDDING_TIMEOUT"] = "120"
    server.env["MINDBANK_REEMBED_PART_SIZE"] = str(REEMBED_PART)  # several parts, so the kill lands between two
    kill_mid_reembedding(
        embedding_database, server, proxy, memories=REEMBED_MEMORIES, old=minilm, new=real, on_old=on_minilm,
        on_new=on_real,
    )  # fmt: skip
