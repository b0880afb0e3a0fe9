"""The curation rules on documents (``domain/document/curation.py``) and the layer around synthesis
(``engine/refresh/curation.py``): what a refresh may and may not do to fixed content (docs/curation.md)."""

from __future__ import annotations

import pytest

from mindbank.domain.document import (
    AppendBlock,
    DocumentError,
    RemoveBlock,
    RemoveSection,
    RenameSection,
    ReplaceBlock,
    StructuredDocument,
    apply_operations,
    parse_markdown,
    render_markdown,
)
from mindbank.domain.document.curation import (
    add_block,
    edit_block,
    fixed_block_ids,
    guard_operations,
    has_fixed,
    remove_block,
    restore_fixed,
    retract_quotes,
    set_pin,
)
from mindbank.domain.records import RetainItem
from mindbank.engine.refresh.guards import trim_to_budget
from mindbank.service.facade import MindBank

DOC = parse_markdown(
    "Intro [mem:a]\n\n## Work\n\nShe is a nurse [mem:b]. She works nights [mem:c].\n\nShe likes it [mem:d]\n\n"
    "## Home\n\nShe has a cat [mem:e]\n"
)


def _curated() -> tuple[StructuredDocument, str, str]:
    work, home = DOC.sections[1], DOC.sections[2]
    edited = edit_block(DOC, work.blocks[1].id, "She loves the ward.", author="ops", at="2026-01-01T00:00:00Z")
    return set_pin(edited, pinned=True, section_id=home.id), work.blocks[1].id, home.blocks[0].id


def test_marks_round_trip_and_a_plain_document_has_none() -> None:
    doc, edited, pinned = _curated()
    assert StructuredDocument.from_dict(doc.to_dict()) == doc
    block = doc.to_dict()["sections"][1]["blocks"][1]
    assert block["origin"] == "person" and block["author"] == "ops" and block["edited_at"] == "2026-01-01T00:00:00Z"
    assert doc.to_dict()["sections"][2]["pinned"] is True and fixed_block_ids(doc) == [edited, pinned]
    assert not has_fixed(DOC) and all(set(b) == {"id", "text", "memory_ids"}
                                      for s in DOC.to_dict()["sections"] for b in s["blocks"])  # fmt: skip
    bad = DOC.to_dict()
    bad["sections"][0]["blocks"][0]["pinned"] = "yes"
    with pytest.raises(DocumentError, match=r"blocks\[0\]\.pinned must be a boolean"):
        StructuredDocument.from_dict(bad)


def test_guard_refuses_operations_on_fixed_content_and_reports_contradictions() -> None:
    doc, edited, pinned = _curated()
    ops = [
        ReplaceBlock("work", edited, "She quit [mem:x]"),
        RemoveBlock("home", pinned),
        AppendBlock("home", "A dog [mem:y]"),
        RenameSection("home", "House"),
        RemoveSection("work"),
        AppendBlock("work", "New shift [mem:z]"),
    ]
    verdict = guard_operations(doc, ops)
    assert verdict.allowed == [ops[-1]] and len(verdict.refused) == 5
    assert all(r["fixed"] is True and r["reason"] for r in verdict.refused)
    assert verdict.warnings == [f"person-written block {edited} may be out of date: She quit [mem:x]"]


def test_restore_puts_fixed_content_back_byte_identical() -> None:
    doc = _curated()[0]
    candidate = parse_markdown(
        "## Work\n\nShe loves the ward.\n\nShe moved to days [mem:f]\n\n## Hobbies\n\nChess [mem:g]\n"
    )
    restored = restore_fixed(doc, candidate)
    assert [s.id for s in restored.sections] == ["work", "home", "hobbies"]
    work = restored.section("work")
    assert work is not None and [b.text for b in work.blocks] == ["She moved to days [mem:f]", "She loves the ward."]
    assert restored.section("home") == doc.section("home")  # the pinned section whole
    assert restore_fixed(DOC, candidate) is candidate  # nothing fixed: untouched


def test_the_deletion_rule_removes_quoting_sentences_from_fixed_blocks() -> None:
    doc = edit_block(DOC, DOC.sections[1].blocks[0].id, "Known. Said so [mem:b]. Also [mem:c].", author="a", at="t")
    retracted, report = retract_quotes(doc, {"b"})
    assert retracted.sections[1].blocks[0].text == "Known. Also [mem:c]."
    assert report == [{"block_id": doc.sections[1].blocks[0].id, "section_id": "work", "memory_ids": ["b"],
                       "removed": False}]  # fmt: skip
    gone, report = retract_quotes(retracted, {"c"})
    assert gone.sections[1].blocks[0].text == "Known." and report[0]["removed"] is False
    only, report = retract_quotes(edit_block(DOC, DOC.sections[2].blocks[0].id, "[mem:e]", author="a", at="t"), {"e"})
    assert only.section("home") is None and report[0]["removed"] is True


def test_hand_edits_name_the_field() -> None:
    with pytest.raises(DocumentError, match=r"^block_id: "):
        edit_block(DOC, "nope", "x", author="a", at="t")
    with pytest.raises(DocumentError, match=r"^text: "):
        edit_block(DOC, DOC.sections[1].blocks[0].id, "one\n\ntwo", author="a", at="t")
    with pytest.raises(DocumentError, match=r"^section_id: "):
        add_block(DOC, "x", author="a", at="t")
    with pytest.raises(DocumentError, match=r"^after_block_id: "):
        add_block(DOC, "x", author="a", at="t", section_id="work", after_block_id="nope")
    doc, block_id = add_block(
        DOC, "Fresh.", author="a", at="t", section_id="work", after_block_id=DOC.sections[1].blocks[0].id
    )
    assert doc.sections[1].blocks[1].id == block_id and doc.sections[1].blocks[1].origin == "person"
    assert remove_block(DOC, DOC.sections[2].blocks[0].id).section("home") is None
    pinned = set_pin(DOC, pinned=True, section_id="home")
    assert remove_block(pinned, DOC.sections[2].blocks[0].id).section("home") is not None


def test_the_budget_cap_never_trims_fixed_blocks() -> None:
    doc, edited, pinned = _curated()
    trimmed, removed = trim_to_budget(doc, 12, lambda texts: [0.0] * len(texts), keep=fixed_block_ids(doc))
    assert edited not in removed and pinned not in removed and removed
    assert set(fixed_block_ids(doc)) <= set(trimmed.block_ids())


def test_apply_operations_keeps_a_sections_pin() -> None:
    doc = _curated()[0]
    result = apply_operations(doc, [AppendBlock("home", "x [mem:q]")])
    assert result.document.section("home").pinned is True  # type: ignore[union-attr]


def test_an_edit_made_while_a_refresh_ran_is_kept(mindbank: MindBank) -> None:
    mindbank.retain("b", [RetainItem(content=t, tags=("user:a",)) for t in ("A runs.", "A swims.", "A bakes.")])
    mindbank.create_mental_model("b", name="A", source_query="What does A do?", id="a", tags=["user:a"],
                                 trigger={"tags_match": "any"})  # fmt: skip
    mindbank.run_pending()
    mindbank.retain("b", [RetainItem(content="A paints.", tags=("user:a",))])
    settings = mindbank.jobs.refresh_settings("b")
    plan = mindbank.refresher.plan(mindbank.get_mental_model("b", "a"), settings)
    block = mindbank.mental_model_blocks("b", "a")["sections"][-1]["blocks"][0]["id"]
    mindbank.edit_mental_model_block("b", "a", block, text="A is my neighbour.")  # meanwhile
    mindbank.refresher.persist(plan, settings)
    model = mindbank.get_mental_model("b", "a")
    assert "A is my neighbour." in model.content and "A paints." in model.content
    assert render_markdown(StructuredDocument.from_dict(model.structured_document or {})) == model.content
