"""The refresh pipeline's promises: snapshot watermark, clocks, nothing lost on failure, history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from mindbank.config import Settings
from mindbank.domain.document import StructuredDocument, count_tokens, render_markdown
from mindbank.domain.records import RetainItem
from mindbank.engine.refresh import reading as refresh_module  # where a refresh calls recall
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank


class FlakyEmbedder:
    """Wraps the real embedder; raises while ``broken`` is set (a provider outage during a refresh)."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.name = "flaky"
        self.broken = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.broken:
            raise RuntimeError("embedding provider unavailable")
        return self.inner.embed(texts)


FACTS = [
    "Dana: I am restoring a 1970s sailing boat with my brother in the harbour.",
    "Dana: The sailing boat needs a new mast and fresh varnish on the deck before summer.",
    "Dana: I volunteer at the animal shelter on Saturdays walking the older dogs.",
]


@pytest.fixture
def flaky(embedder: MiniLMEmbedder) -> FlakyEmbedder:
    return FlakyEmbedder(embedder)


@pytest.fixture
def mb(settings: Settings, flaky: FlakyEmbedder) -> MindBank:
    # no consolidation: its observations are memory writes of their own, and these tests follow the facts' stamps
    bank = MindBank.open(replace(settings, enable_auto_consolidation=False), embedder=flaky)  # type: ignore[arg-type]
    yield bank  # type: ignore[misc]
    bank.close()


def retain(mb: MindBank, *texts: str, tags: tuple[str, ...] = ("user:dana",)) -> None:
    mb.retain("b", [RetainItem(content=t, tags=tags) for t in texts])


def test_document_is_structured_cited_and_within_budget(mb: MindBank) -> None:
    retain(mb, *FACTS)
    model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What is Dana working on?", max_tokens=256)
    mb.run_pending()
    model = mb.get_mental_model("b", model_id)
    doc = StructuredDocument.from_dict(model.structured_document)  # type: ignore[arg-type]
    assert render_markdown(doc) == model.content
    assert count_tokens(model.content) <= 256
    cited = list(doc.memory_ids())
    assert cited and len(mb.store.get_memories("b", cited)) == len(cited)
    based_on = [f["id"] for f in model.reflect_response["based_on"]["world"]]  # type: ignore[index]
    assert sorted(based_on) == sorted(cited)


def test_watermark_is_newest_seen_memory_not_now_and_never_moves_back(mb: MindBank) -> None:
    retain(mb, *FACTS)
    stamp = mb.last_memory_write_at("b")
    model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What is Dana doing?", tags=["user:dana"])
    mb.run_pending()
    model = mb.get_mental_model("b", model_id)
    assert model.last_memory_seen_at == stamp
    assert model.last_refreshed_at > stamp  # type: ignore[operator]
    first_refresh = model.last_refreshed_at
    retain(mb, "Unrelated note about the weather.", tags=("other",))
    mb.refresh_mental_model("b", model_id)
    mb.run_pending()
    again = mb.get_mental_model("b", model_id)
    assert again.last_memory_seen_at == stamp  # scope unchanged: watermark stands still
    assert again.last_refreshed_at > first_refresh  # the wall clock still advances
    assert again.reflect_response["outcome"] == "content_unchanged"  # type: ignore[index]


def test_failed_refresh_keeps_document_watermark_and_clock(mb: MindBank, flaky: FlakyEmbedder) -> None:
    retain(mb, *FACTS)
    model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What is Dana doing?")
    mb.run_pending()
    before = mb.get_mental_model("b", model_id)
    retain(mb, "Dana: I finished varnishing the deck of the sailing boat.")
    flaky.broken = True
    op_id = mb.refresh_mental_model("b", model_id)
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    assert op.status == "failed"
    assert op.result is not None
    assert (op.result["outcome"], op.result["failure_reason"]) == ("refresh_failed_error", "retrieval_failed")
    after = mb.get_mental_model("b", model_id)
    assert after.content == before.content
    assert after.structured_document == before.structured_document
    assert after.last_memory_seen_at == before.last_memory_seen_at
    assert after.last_refreshed_at == before.last_refreshed_at
    assert after.last_refresh_failed_at is not None
    assert after.is_stale is True
    history = mb.mental_model_history("b", model_id)
    assert history[0]["kind"] == "refresh_failed" and history[0]["failure_reason"] == "retrieval_failed"
    flaky.broken = False
    mb.refresh_mental_model("b", model_id)
    mb.run_pending()
    healed = mb.get_mental_model("b", model_id)
    assert "varnishing" in healed.content and healed.last_refresh_failed_at is None and healed.is_stale is False


def test_a_write_landing_mid_refresh_stays_newer_than_the_watermark(mb: MindBank, monkeypatch) -> None:
    retain(mb, *FACTS)
    model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What is Dana doing?")
    real_recall = refresh_module.recall

    def recall_then_write(*args, **kwargs):  # type: ignore[no-untyped-def]
        hits = real_recall(*args, **kwargs)
        retain(mb, "Dana: The new mast arrived this morning.")  # commits after the snapshot was taken
        return hits

    monkeypatch.setattr(refresh_module, "recall", recall_then_write)
    mb.run_pending()
    model = mb.get_mental_model("b", model_id)
    assert "mast arrived" not in model.content
    assert model.is_stale is True  # the straddling write is picked up by the next round
    monkeypatch.setattr(refresh_module, "recall", real_recall)
    mb.refresh_mental_model("b", model_id)
    mb.run_pending()
    assert "mast arrived" in mb.get_mental_model("b", model_id).content


def test_history_can_be_disabled(settings: Settings, embedder: MiniLMEmbedder) -> None:
    mb = MindBank.open(replace(settings, enable_mental_model_history=False), embedder=embedder)
    try:
        retain(mb, *FACTS)
        model_id, _ = mb.create_mental_model("b", name="Dana", source_query="What is Dana doing?")
        mb.run_pending()
        assert mb.get_mental_model("b", model_id).content
        assert mb.mental_model_history("b", model_id) == []
    finally:
        mb.close()
