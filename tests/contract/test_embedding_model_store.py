"""Contract: the embedding model a bank's vectors were made with is recorded once, read back, kept against a later
record of another model, and forgotten with the bank."""

from __future__ import annotations

from mindbank.store.base import Store


def test_record_read_keep_first_and_forget_with_the_bank(store: Store) -> None:
    assert store.record_bank_embedding_model("nope", "m", 4) is None  # no bank, nothing recorded
    store.upsert_bank("b1", name=None, mission=None, disposition=None)
    assert store.bank_embedding_model("b1") is None
    assert store.record_bank_embedding_model("b1", "model-a", 4) == ("model-a", 4)
    assert store.record_bank_embedding_model("b1", "model-b", 4) == ("model-a", 4)
    assert store.bank_embedding_model("b1") == ("model-a", 4)
    assert store.delete_bank("b1") == 0
    store.upsert_bank("b1", name=None, mission=None, disposition=None)
    assert store.bank_embedding_model("b1") is None
