"""Soak: a delta-mode model refreshed after every session of a 32-session LoCoMo conversation (issue 5, point 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindbank.config import Settings
from mindbank.domain.document import StructuredDocument, parse_markdown, render_markdown
from mindbank.importers import load_locomo, locomo_items
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank

CONV41 = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "conv-41.json"


@pytest.mark.skipif(not CONV41.exists(), reason="shared LoCoMo data not available")
def test_delta_rounds_keep_untouched_sections_and_provenance(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    conv = load_locomo(CONV41)
    assert len(conv.sessions) == 32
    speaker = conv.speakers[0]
    mb = MindBank.open(Settings(database_url=str(tmp_path / "soak.db")), embedder=embedder)
    try:
        mb.retain("soak", locomo_items(conv, [conv.sessions[0].number]))
        mb.create_mental_model(
            "soak", id="soak", name=speaker, source_query=f"What matters to {speaker} and what is {speaker} working on?",
            tags=[f"speaker:{speaker.lower()}"], trigger={"mode": "delta"},
        )  # fmt: skip
        mb.run_pending()
        previous = StructuredDocument.from_dict(mb.get_mental_model("soak", "soak").structured_document)  # type: ignore[arg-type]
        rounds_with_ops = 0
        for session in conv.sessions[1:]:
            mb.retain("soak", locomo_items(conv, [session.number]))
            op = mb.refresh_mental_model("soak", "soak")
            mb.run_pending()
            assert mb.get_operation("soak", op).status == "completed"
            model = mb.get_mental_model("soak", "soak")
            assert model.is_stale is False
            doc = StructuredDocument.from_dict(model.structured_document)  # type: ignore[arg-type]
            assert render_markdown(doc) == model.content
            assert parse_markdown(model.content).to_dict() == doc.to_dict()
            applied = (model.reflect_response or {}).get("delta_operations_applied") or []
            rounds_with_ops += bool(applied)
            touched = {op["section_id"] for op in applied if "section_id" in op}
            touched |= {op.get("new_id") for op in applied if op["op"] == "add_section"}
            for section in previous.sections:
                if section.id not in touched:
                    assert doc.section(section.id) == section, f"session {session.number}: {section.id} drifted"
            for section in doc.sections:
                for block in section.blocks:
                    if section.heading:
                        assert block.memory_ids, f"session {session.number}: block {block.id} has no provenance"
                    old = previous.find_block(block.id)
                    if old is not None:
                        assert old[1].memory_ids == block.memory_ids
            cited = list(doc.memory_ids())
            assert len(mb.store.get_memories("soak", cited)) == len(cited)
            previous = doc
        assert rounds_with_ops >= (len(conv.sessions) - 1) / 2, rounds_with_ops
    finally:
        mb.close()
