"""The recall response's hot path keeps the wire format: the field-by-field ``recall_result`` equals the generic
projection (same keys, same order, same values) and the orjson-rendered response means the same JSON as
Starlette's encoder."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from fastapi.responses import JSONResponse

from mindbank.api.fast_json import FastJSONResponse
from mindbank.domain.entities import extract_entities
from mindbank.domain.projection import MEMORY_RENAMES, plain, project
from mindbank.domain.records import MemoryUnit, ScoredMemory
from mindbank.domain.timeutil import to_iso
from mindbank.wire.shapes import recall_result

T0 = datetime(2023, 5, 8, 13, 56, 7, 250, tzinfo=UTC)


def projected(hit: ScoredMemory, *, entities: bool) -> dict[str, Any]:
    """The recall result as the generic projection writes it (the rule every other shape follows)."""
    m = hit.memory
    keys = ("context", "occurred_start", "occurred_end", "mentioned_at", "document_id", "metadata", "chunk_id", "tags")
    return {
        **project(m, ("id", "text", "type"), MEMORY_RENAMES),
        "entities": list(extract_entities(m.text)) if entities else None,
        **project(m, keys),
        "source_fact_ids": plain(m.source_memory_ids),
        "scores": {"final": hit.final, "reranker": None, "semantic": hit.semantic, "keyword": hit.keyword},
        "attachments": None,
        "mention_count": m.mention_count,
        "last_mentioned_at": to_iso(m.last_mentioned_at or m.mentioned_at),
    }


FULL = MemoryUnit(
    id="m1", bank_id="b", text="Caroline: I went to the LGBTQ support group in Boston yesterday.", fact_type="world",
    tags=("team:a", "user:c"), context="chat 3", metadata={"speaker": "Caroline", "turn": "4"}, document_id="d1",
    chunk_id="c1", occurred_start=T0, occurred_end=T0 + timedelta(minutes=1), mentioned_at=T0, created_at=T0,
    updated_at=T0, source_memory_ids=None, proof_count=None, mention_count=3,
    last_mentioned_at=T0 + timedelta(days=2),
)  # fmt: skip
SPARSE = MemoryUnit(
    id="m2", bank_id="b", text="plain fact", fact_type="experience", tags=(), context=None, metadata={},
    document_id=None, chunk_id=None, occurred_start=None, occurred_end=None, mentioned_at=None, created_at=T0,
    updated_at=T0,
)  # fmt: skip
OBSERVATION = MemoryUnit(
    id="o1", bank_id="b", text="Caroline goes to a support group.", fact_type="observation", tags=("team:a",),
    context=None, metadata={}, document_id=None, chunk_id=None, occurred_start=None, occurred_end=None,
    # a time in another zone is written in UTC, as the projection writes it
    mentioned_at=datetime(2023, 5, 8, 15, 56, tzinfo=timezone(timedelta(hours=2))), created_at=T0, updated_at=T0,
    source_memory_ids=("m1", "m3"), proof_count=2,
)  # fmt: skip


@pytest.mark.parametrize("memory", [FULL, SPARSE, OBSERVATION], ids=["full", "sparse", "observation"])
@pytest.mark.parametrize("entities", [True, False])
def test_recall_result_is_the_projection(memory: MemoryUnit, entities: bool) -> None:
    hit = ScoredMemory(memory, 0.731, semantic=0.52, keyword=None)
    written = recall_result(hit, entities=entities)
    assert list(written.items()) == list(projected(hit, entities=entities).items())
    assert written["occurred_start"] in (None, "2023-05-08T13:56:07.000250+00:00")


def test_fast_json_means_what_starlette_writes() -> None:
    body = {
        "results": [recall_result(ScoredMemory(m, 1e-05, 0.1, 12.5), entities=True) for m in (FULL, SPARSE)],
        "trace": None,
        "entities": {"Caroline": {"entity_id": "e", "canonical_name": "Caroline", "observations": []}},
        "text": "naïve café \u2028 ☃",
        "big": 2**63 - 1,
        "source_facts_truncated": False,
    }
    fast = FastJSONResponse(body)
    assert json.loads(fast.body) == json.loads(JSONResponse(body).body) == body
    assert "café".encode() in fast.body  # UTF-8, not \u escapes
    assert fast.headers["content-type"] == "application/json"
    assert int(fast.headers["content-length"]) == len(fast.body)


def test_fast_json_takes_what_only_the_stdlib_encodes() -> None:
    body = {"huge": 2**70, "list": [1, 2]}
    assert json.loads(FastJSONResponse(body).body) == body  # orjson refuses integers beyond 64 bits
    assert json.loads(FastJSONResponse({"score": float("nan")}).body) == {"score": None}
