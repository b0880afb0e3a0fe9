"""Store families added for issue 15, on both backends: scoped API keys (stored hashed, revocable) and recall's
temporal arm (memories dated inside a window)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np

from mindbank.domain.access import ApiKey, hash_token, new_token
from mindbank.domain.records import Chunk, NewMemory, RetainItem
from mindbank.domain.timeutil import utcnow
from mindbank.store.base import DocumentWrite, MemoryFilter, Store

T0 = datetime(2024, 6, 1, tzinfo=UTC)


def dated(text: str, *, occurred: datetime | None, mentioned: datetime, tags: tuple[str, ...] = ()) -> DocumentWrite:
    document_id = uuid.uuid4().hex
    chunk = Chunk(id=uuid.uuid4().hex, document_id=document_id, index=0, text=text)
    memory = NewMemory(
        text=text, fact_type="world", embedding=np.array([1, 0, 0, 0], np.float32), tags=tags, context=None,
        metadata={}, document_id=document_id, chunk_id=chunk.id, occurred_start=occurred, occurred_end=occurred,
        mentioned_at=mentioned,
    )  # fmt: skip
    item = RetainItem(content=text, tags=tags, document_id=document_id)
    return DocumentWrite(item=item, document_id=document_id, chunks=[chunk], memories=[memory])


def test_memories_in_window(store: Store) -> None:
    day = timedelta(days=1)
    ids = store.write_documents(
        "b",
        [
            dated("inside by event time", occurred=T0 + 2 * day, mentioned=T0 + 40 * day),
            dated("inside by mention", occurred=None, mentioned=T0 + 5 * day, tags=("x",)),
            dated("before", occurred=T0 - 3 * day, mentioned=T0 - 3 * day),
            dated("after", occurred=None, mentioned=T0 + 30 * day),
        ],
    )
    inside_event, inside_mention = ids[0][0], ids[1][0]
    window = (T0, T0 + 10 * day)
    assert store.memories_in_window("b", *window, 10, MemoryFilter()) == [inside_mention, inside_event]  # latest first
    assert store.memories_in_window("b", *window, 1, MemoryFilter()) == [inside_mention]
    assert store.memories_in_window("b", *window, 10, MemoryFilter(tags=("x",), tags_match="any_strict")) == [
        inside_mention
    ]
    assert store.memories_in_window("other", *window, 10, MemoryFilter()) == []


def test_api_keys_round_trip(store: Store) -> None:
    key_id, token = new_token()
    key = ApiKey(
        id=key_id, name="ci", banks=("team-*", "solo"), read_only=True, secret_hash=hash_token(token),
        created_at=utcnow().replace(microsecond=0), revoked_at=None,
    )  # fmt: skip
    store.insert_api_key(key)
    assert store.get_api_key(key_id) == key
    assert token not in repr(store.dump())  # type: ignore[attr-defined]  # only the digest is stored
    other_id, other_token = new_token()
    store.insert_api_key(replace(key, id=other_id, secret_hash=hash_token(other_token), read_only=False))
    assert [k.id for k in store.list_api_keys()] == sorted([key_id, other_id])  # same created_at: by id
    at = utcnow().replace(microsecond=0)
    assert store.revoke_api_key(key_id, at) is True
    assert store.revoke_api_key(key_id, at) is False  # already revoked
    assert store.revoke_api_key("missing", at) is False
    assert store.get_api_key(key_id).revoked_at == at  # type: ignore[union-attr]
    assert store.get_api_key(other_id).revoked_at is None  # type: ignore[union-attr]
    assert store.get_api_key("missing") is None
