"""Every refresh outcome, fallback and failure path (issue 5), with the extractive engine and a scripted one.

Each test asserts content, watermark, last_refreshed_at, history and operation state.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from sample_texts import BOAT, LONG_TURN

from mindbank.config import Settings
from mindbank.domain.document import AppendBlock, ReplaceBlock, StructuredDocument, count_tokens
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.domain.scope import MemoryFilter
from mindbank.engine.synthesis.port import Synthesis, SynthesisError
from mindbank.errors import RefreshPreviewError
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedSynthesizer

TAG = ("user:dana",)


@pytest.fixture
def synth() -> ScriptedSynthesizer:
    return ScriptedSynthesizer()


@pytest.fixture
def mb(settings: Settings, embedder: MiniLMEmbedder, synth: ScriptedSynthesizer) -> Iterator[MindBank]:
    # refreshes over the facts themselves: no consolidation turns them into observations that would speak for them
    # (observations in a model's scope: tests/api/test_observations_api.py)
    bank = MindBank.open(replace(settings, enable_auto_consolidation=False), embedder=embedder, synthesizer=synth)
    yield bank
    bank.close()


def retain(mb: MindBank, *texts: str, tags: tuple[str, ...] = TAG) -> None:
    mb.retain("b", [RetainItem(content=t, tags=tags) for t in texts])


def ready(
    mb: MindBank, *, trigger: dict[str, Any] | None = None, query: str = "What is Dana working on?"
) -> MentalModel:
    retain(mb, *BOAT)
    model_id, op = mb.create_mental_model("b", name="Dana", source_query=query, tags=list(TAG), id="dana",
                                          trigger=trigger)  # fmt: skip
    mb.run_pending()
    assert mb.get_operation("b", op).status == "completed"
    return mb.get_mental_model("b", model_id)


def refresh(mb: MindBank, **kwargs: Any) -> tuple[str, dict[str, Any] | None, MentalModel]:
    op_id = mb.refresh_mental_model("b", "dana", **kwargs)
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    return op.status, op.result, mb.get_mental_model("b", "dana")


def assert_untouched(before: MentalModel, after: MentalModel) -> None:
    assert after.content == before.content
    assert after.structured_document == before.structured_document
    assert after.last_memory_seen_at == before.last_memory_seen_at
    assert after.last_refreshed_at == before.last_refreshed_at


def assert_failed(mb: MindBank, before: MentalModel, outcome: str, reason: str) -> MentalModel:
    status, result, after = refresh(mb)
    assert status == "failed"
    assert result is not None and (result["outcome"], result["failure_reason"]) == (outcome, reason)
    assert_untouched(before, after)
    assert after.last_refresh_failed_at is not None
    history = mb.mental_model_history("b", "dana")
    assert history[0]["kind"] == "refresh_failed" and history[0]["outcome"] == outcome
    assert history[0]["failure_reason"] == reason
    return after


# ---------------------------------------------------------------- full mode outcomes
def test_full_written_then_unchanged(mb: MindBank) -> None:
    model = ready(mb)
    assert model.reflect_response["outcome"] == "content_written"  # type: ignore[index]
    assert model.last_full_refreshed_at is not None
    status, result, again = refresh(mb)
    assert status == "completed" and result["outcome"] == "content_unchanged"  # type: ignore[index]
    assert again.content == model.content and again.last_refreshed_at > model.last_refreshed_at
    assert len(mb.mental_model_history("b", "dana")) == 1  # unchanged content writes no version


def test_empty_candidate_fails_and_keeps_the_document(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    synth.compose_script = ""
    assert_failed(mb, before, "refresh_failed_empty_candidate", "empty_candidate")


def test_provider_error_fails_and_keeps_the_document(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    synth.compose_script = SynthesisError("no_answer", "provider timed out")
    assert_failed(mb, before, "refresh_failed_error", "no_answer")


def test_unexpected_exception_is_a_recorded_failure(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    synth.compose_script = lambda facts: RuntimeError("bug")
    assert_failed(mb, before, "refresh_failed_error", "unexpected_error")


def test_structured_output_needs_a_capable_engine(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    schema = {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}
    before = ready(mb)
    mb.update_mental_model("b", "dana", trigger={"response_schema": schema})
    before = mb.get_mental_model("b", "dana")
    retain(mb, "Dana: The boat got a new mast today.")
    after = assert_failed(mb, before, "refresh_failed_structured_output", "structured_output_failed")
    assert "structured_output" not in (after.reflect_response or {})
    synth.structured_script = {"project": "sailing boat"}
    status, _result, fixed = refresh(mb)
    assert status == "completed" and fixed.reflect_response["structured_output"] == {"project": "sailing boat"}  # type: ignore[index]
    assert synth.calls[-1][1]["content"] == fixed.content  # extracted from the final stored content


def test_nothing_in_scope_preserves_and_keeps_watermark(mb: MindBank) -> None:
    model_id, _ = mb.create_mental_model("b", name="x", source_query="q?", tags=["nobody"], id="dana")
    mb.run_pending()
    model = mb.get_mental_model("b", model_id)
    assert model.reflect_response["outcome"] == "content_preserved_no_new_facts"  # type: ignore[index]
    assert model.last_memory_seen_at is None and model.content == ""


# ---------------------------------------------------------------- delta mode
def test_delta_falls_back_without_baseline_and_on_query_change(mb: MindBank) -> None:
    model = ready(mb, trigger={"mode": "delta"})
    assert model.reflect_response["effective_mode"] == "full"  # type: ignore[index]
    plan = mb.dry_run_refresh("b", "dana")
    assert plan["requested_mode"] == "delta" and plan["effective_mode"] == "delta"
    mb.update_mental_model("b", "dana", source_query="What does Dana do on weekends?")
    plan = mb.dry_run_refresh("b", "dana")
    assert plan["effective_mode"] == "full" and plan["mode_fallback_reason"] == "source_query_changed"
    mb.clear_mental_model("b", "dana")
    plan = mb.dry_run_refresh("b", "dana")
    assert plan["effective_mode"] == "full" and plan["mode_fallback_reason"] == "no_baseline_content"


def test_delta_reads_only_new_memories_and_keeps_untouched_sections(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    doc_before = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    retain(mb, "Dana: I sanded and varnished the sailing boat deck this weekend.")
    status, result, after = refresh(mb)
    assert status == "completed" and result["outcome"] == "content_written"  # type: ignore[index]
    edit_call = [kw for name, kw in synth.calls if name == "edit"][-1]
    assert [f.memory.text for f in edit_call["facts"]] == [
        "Dana: I sanded and varnished the sailing boat deck this weekend."
    ]
    doc_after = StructuredDocument.from_dict(after.structured_document)  # type: ignore[arg-type]
    touched = {op["section_id"] for op in after.reflect_response["delta_operations_applied"] if "section_id" in op}  # type: ignore[index]
    for section in doc_before.sections:
        if section.id not in touched:
            assert doc_after.section(section.id) == section
    assert "varnished" in after.content
    based = {e["id"] for e in after.reflect_response["based_on"]["world"]}  # type: ignore[index]
    assert {e["id"] for e in before.reflect_response["based_on"]["world"]} <= based  # type: ignore[index]
    assert after.last_memory_seen_at == mb.last_memory_write_at("b")
    assert len(mb.mental_model_history("b", "dana")) == 2


def test_delta_with_no_new_facts_preserves_and_advances_watermark(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    retain(mb, "Dana: Hi!")  # in scope, but says nothing worth quoting
    status, result, after = refresh(mb)
    assert status == "completed" and result["outcome"] == "content_preserved_no_new_facts"  # type: ignore[index]
    assert after.content == before.content and after.structured_document == before.structured_document
    assert after.last_memory_seen_at == mb.last_memory_write_at("b") > before.last_memory_seen_at  # type: ignore[operator]
    assert after.last_refreshed_at > before.last_refreshed_at
    assert len(mb.mental_model_history("b", "dana")) == 1


def test_delta_ops_failed_keeps_everything(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    retain(mb, "Dana: The boat got a new mast today.")
    synth.edit_script = SynthesisError("delta_ops_failed", "unreadable reply")
    assert_failed(mb, before, "refresh_failed_delta_not_applied", "delta_ops_failed")


def test_delta_all_ops_skipped_fails(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    retain(mb, "Dana: The boat got a new mast today.")
    synth.edit_script = [AppendBlock(section_id="no-such-section", text="x [mem:y]")]
    assert_failed(mb, before, "refresh_failed_delta_not_applied", "delta_ops_all_skipped")


def test_delta_partial_skip_applies_the_rest_and_records_it(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    doc = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    section = next(s for s in doc.sections if s.heading)
    retain(mb, "Dana: The boat got a new mast today.")
    synth.edit_script = [
        AppendBlock(section_id=section.id, text="- A new mast arrived."),
        ReplaceBlock(section_id=section.id, block_id="b-missing", text="x"),
    ]
    status, result, after = refresh(mb)
    assert status == "completed" and result["delta_ops_applied"] == 1 and result["delta_ops_skipped"] == 1  # type: ignore[index]
    skipped = after.reflect_response["delta_operations_skipped"]  # type: ignore[index]
    assert skipped[0]["reason"] == "unknown block_id: b-missing"
    assert "A new mast arrived." in after.content


def test_unreadable_structure_fails_delta(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    mb.store.save_refresh(replace(before, structured_document={"version": 1, "sections": "garbage"}), history=None,
                          history_cap=50)  # fmt: skip
    before = mb.get_mental_model("b", "dana")
    retain(mb, "Dana: The boat got a new mast today.")
    assert_failed(mb, before, "refresh_failed_delta_not_applied", "structured_doc_unreadable")


# ---------------------------------------------------------------- relevance gate
def test_automatic_refresh_of_irrelevant_memories_is_gated(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    before = ready(mb)
    retain(mb, "Dana: The quarterly tax form asks for the invoice numbers.")
    calls = len(synth.calls)
    status, result, after = refresh(mb, automatic=True)
    assert status == "completed" and result["outcome"] == "content_preserved_no_new_facts"  # type: ignore[index]
    assert after.reflect_response["refresh_skipped"] == "not_relevant"  # type: ignore[index]
    assert after.content == before.content and len(synth.calls) == calls  # no synthesis at all
    assert after.last_memory_seen_at > before.last_memory_seen_at  # type: ignore[operator]
    assert after.is_stale is False
    retain(mb, "Dana: The quarterly tax form needs my signature too.")
    status, result, _manual = refresh(mb)  # manual refreshes are never gated
    assert len(synth.calls) > calls


# ---------------------------------------------------------------- deleted citations
@pytest.mark.parametrize("mode", ["full", "delta"])
def test_deleted_citation_is_named_by_dry_run_and_removed_by_next_refresh(mb: MindBank, mode: str) -> None:
    before = ready(mb, trigger={"mode": mode})
    doc = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    _victim_section, victim = next((s, b) for s in doc.sections for b in s.blocks if b.memory_ids)
    mb.delete_memory("b", victim.memory_ids[0])
    assert mb.get_mental_model("b", "dana").is_stale is True
    dry = mb.dry_run_refresh("b", "dana")
    assert dry["retraction"]["fact_ids"] == [victim.memory_ids[0]] and dry["retraction"]["block_ids"] == [victim.id]
    status, _, after = refresh(mb)
    assert status == "completed"
    assert victim.memory_ids[0] not in after.content and after.is_stale is False
    assert victim.memory_ids[0] not in {e["id"] for e in after.reflect_response["based_on"]["world"]}  # type: ignore[index]


# ---------------------------------------------------------------- traces and dry run
def test_keep_trace_records_success_and_failure(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    model = ready(mb, trigger={"keep_trace": True})
    trace = model.reflect_response["trace"]  # type: ignore[index]
    assert trace["outcome"] == "content_written" and trace["effective_mode"] == "full"
    assert trace["tool_calls"][0]["tool"] == "recall" and trace["tool_calls"][0]["result_count"] == 3
    assert "output" not in trace["tool_calls"][0]
    assert {"recorded_at", "llm_calls", "usage", "duration_ms", "warnings", "delta_operations"} <= set(trace)
    retain(mb, "Dana: The boat got a new mast today.")
    synth.compose_script = ""
    refresh(mb)
    failed = mb.get_mental_model("b", "dana").reflect_response["trace"]  # type: ignore[index]
    assert failed["outcome"] == "refresh_failed_empty_candidate" and failed["recorded_at"] != trace["recorded_at"]
    without = ready_without_trace(mb)
    assert "trace" not in (without.reflect_response or {})


def ready_without_trace(mb: MindBank) -> MentalModel:
    model_id, _ = mb.create_mental_model("b", name="n", source_query="What is Dana doing?", tags=list(TAG))
    mb.run_pending()
    return mb.get_mental_model("b", model_id)


def test_dry_run_writes_nothing_and_predicts_the_refresh(mb: MindBank) -> None:
    ready(mb, trigger={"mode": "delta", "keep_trace": True})
    retain(mb, "Dana: I sanded and varnished the sailing boat deck this weekend.")
    before = mb.store.dump()  # type: ignore[attr-defined]
    first = mb.dry_run_refresh("b", "dana")
    second = mb.dry_run_refresh("b", "dana")
    assert mb.store.dump() == before  # type: ignore[attr-defined]
    assert first["preview_content"] == second["preview_content"] and first["window"] == second["window"]
    assert first["outcome"] == "content_written" and first["would_persist"] is True
    assert first["diff"].startswith("--- current\n+++ preview") and "varnished" in first["diff"]
    assert first["facts"]["retrieved"] == {"world": 1} and first["facts"]["used"] == {"world": 1}
    assert first["scope"] == {"tags": ["user:dana"], "tags_match": "all_strict", "tag_groups": None, "fact_types": None,
                              "exclude_mental_models": False, "exclude_mental_model_ids": ["dana"]}  # fmt: skip
    assert first["window"]["created_after"] is not None
    _, _, after = refresh(mb)
    assert after.content == first["preview_content"]


def test_dry_run_warns_when_scope_matches_nothing(mb: MindBank) -> None:
    retain(mb, *BOAT)
    mb.create_mental_model("b", name="x", source_query="q?", tags=["user:dana", "team"], id="dana")
    result = mb.dry_run_refresh("b", "dana")
    assert result["outcome"] == "content_preserved_no_new_facts" and result["would_persist"] is False
    assert any("scope matches no memories" in w for w in result["warnings"])


def test_synthesis_input_is_recorded(mb: MindBank) -> None:
    model = ready(mb)
    assert model.reflect_response["synthesis_input_tokens"] > 0  # type: ignore[index]
    assert model.reflect_response["usage"]["total_tokens"] == 0  # type: ignore[index]


def test_scripted_compose_receives_snapshot_facts(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    synth.compose_script = lambda facts: Synthesis(markdown="## Boat\n\n- " + facts[0].memory.text + f" [mem:{facts[0].memory.id}]\n",
                                                   used_ids=[facts[0].memory.id])  # fmt: skip
    model = ready(mb)
    assert model.content.startswith("## Boat")
    assert len(model.reflect_response["based_on"]["world"]) == 1  # type: ignore[index]


def chunks_read(synth: ScriptedSynthesizer, method: str) -> list[Any]:
    return next(kwargs["chunks"] for name, kwargs in reversed(synth.calls) if name == method)


def test_refresh_reads_the_source_chunks_of_split_facts_only(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    retain(mb, LONG_TURN)
    model = ready(mb, trigger={"keep_trace": True})
    memories, _ = mb.store.list_memories("b", MemoryFilter(), query=None, limit=50, offset=0)
    long_facts = {m.id for m in memories if m.text not in BOAT}
    assert len(long_facts) >= 2
    (chunk,) = chunks_read(synth, "compose")  # the short turns are their own chunk: nothing to add
    assert chunk.text == LONG_TURN and set(chunk.memory_ids) <= long_facts and chunk.memory_ids
    (recall_call,) = [c for c in model.reflect_response["trace"]["tool_calls"] if c["tool"] == "recall"]  # type: ignore[index]
    assert recall_call["chunk_count"] == 1 and recall_call["input"]["max_chunk_tokens"] == 1000


@pytest.mark.parametrize(
    ("trigger", "bank", "expected"),
    [
        ({"include_chunks": False}, None, 0),
        ({}, {"recall_include_chunks": False}, 0),
        ({"include_chunks": True}, {"recall_include_chunks": False}, 1),  # the trigger wins over the bank
        ({"recall_chunks_max_tokens": 20}, None, 0),  # the turn does not fit the chunk budget
        ({}, {"recall_chunks_max_tokens": 20}, 0),
    ],
)
def test_include_chunks_and_chunk_budget_resolve_trigger_then_bank(
    mb: MindBank, synth: ScriptedSynthesizer, trigger: dict[str, Any], bank: dict[str, Any] | None, expected: int
) -> None:
    retain(mb, LONG_TURN)
    if bank:
        mb.update_bank_config("b", bank)
    ready(mb, trigger=trigger)
    assert len(chunks_read(synth, "compose")) == expected


def test_delta_reads_only_the_chunks_of_new_facts(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    retain(mb, LONG_TURN)
    ready(mb, trigger={"mode": "delta"})
    assert len(chunks_read(synth, "compose")) == 1
    second = LONG_TURN.replace("harbour master", "marina manager").replace("ferry pier", "fuel dock")
    retain(mb, second)
    status, result, _ = refresh(mb)
    assert status == "completed" and result is not None and result["effective_mode"] == "delta"
    # the second turn's new facts, and its sentences that repeat the first turn's facts word for word: a repeat is
    # a write of the first turn's fact (issue 13), so that fact's chunk is read too; nothing else is
    assert sorted(c.text for c in chunks_read(synth, "edit")) == sorted([LONG_TURN, second])


def test_the_extractive_engine_reads_no_chunks(settings: Settings, embedder: MiniLMEmbedder) -> None:
    bank = MindBank.open(settings, embedder=embedder)  # the default, extractive synthesizer
    try:
        bank.retain("b", [RetainItem(content=t, tags=TAG) for t in (*BOAT, LONG_TURN)])
        bank.create_mental_model("b", name="Dana", source_query="What is Dana working on?", tags=list(TAG),
                                 id="dana", trigger={"keep_trace": True})  # fmt: skip
        bank.run_pending()
        trace = bank.get_mental_model("b", "dana").reflect_response["trace"]  # type: ignore[index]
        (recall_call,) = [c for c in trace["tool_calls"] if c["tool"] == "recall"]
        assert "chunk_count" not in recall_call and "max_chunk_tokens" not in recall_call["input"]
    finally:
        bank.close()


def test_a_large_recall_budget_reads_past_one_candidate_pool(settings: Settings, embedder: MiniLMEmbedder) -> None:
    synth = ScriptedSynthesizer()
    bank = MindBank.open(replace(settings, recall_candidates=5), embedder=embedder, synthesizer=synth)
    try:
        turns = [f"Dana: On day {n} of the refit I varnished plank number {n} of the sailing boat." for n in range(30)]
        bank.retain("b", [RetainItem(content=t, tags=TAG) for t in turns])
        for model_id, budget in (("small", 60), ("large", 5000)):
            bank.create_mental_model("b", name="Dana", source_query="What is Dana working on?", tags=list(TAG),
                                     id=model_id, trigger={"recall_max_tokens": budget})  # fmt: skip
            bank.run_pending()
        small, large = (kwargs["facts"] for name, kwargs in synth.calls if name == "compose")
        assert 1 < len(small) < 10  # the budget stops it, not the pools
        # pools of 5 widened until the whole scope was read (every turn, and any observation consolidated from them)
        assert {h.memory.text for h in large if h.memory.fact_type == "world"} == set(turns)
    finally:
        bank.close()


def test_dry_run_reports_only_the_five_outcomes_and_skips_structured_output(
    mb: MindBank, synth: ScriptedSynthesizer
) -> None:
    ready(mb)
    mb.update_mental_model("b", "dana", trigger={"response_schema": {"type": "object", "properties": {"p": {}}}})
    status, result, _ = refresh(mb)  # a real refresh fails: the extractive engine cannot fill a schema
    assert status == "failed" and result is not None and result["outcome"] == "refresh_failed_structured_output"
    retain(mb, "Dana: The mast arrived from the rigger today.")
    extractions = synth.methods_called().count("extract_structured")
    result = mb.dry_run_refresh("b", "dana")
    assert result["outcome"] == "content_written" and "mast arrived" in result["preview_content"]
    assert result["would_persist"] is False  # it would not: the structured-output step fails the refresh
    assert any("would fail (refresh_failed_structured_output)" in w for w in result["warnings"])

    synth.structured_script = {"project": "boat"}  # an engine that can: the dry run still does not extract
    result = mb.dry_run_refresh("b", "dana")
    assert result["would_persist"] is True
    assert synth.methods_called().count("extract_structured") == extractions
    assert any("does not extract structured_output" in w for w in result["warnings"])


@pytest.mark.parametrize(("reason", "upstream"), [("no_answer", True), ("retrieval_failed", False)])
def test_dry_run_whose_engine_fails_raises_and_writes_nothing(
    mb: MindBank, synth: ScriptedSynthesizer, reason: str, upstream: bool
) -> None:
    ready(mb)
    retain(mb, "Dana: The mast arrived from the rigger today.")
    synth.compose_script = SynthesisError(reason, "the engine gave up")
    before = mb.store.dump()  # type: ignore[attr-defined]
    with pytest.raises(RefreshPreviewError) as caught:
        mb.dry_run_refresh("b", "dana")
    assert (caught.value.reason, caught.value.upstream) == (reason, upstream)
    assert mb.store.dump() == before  # type: ignore[attr-defined]


def test_dry_run_trace_shows_tool_outputs_the_stored_trace_does_not(mb: MindBank) -> None:
    model = ready(mb, trigger={"keep_trace": True})
    stored = model.reflect_response["trace"]["tool_calls"]  # type: ignore[index]
    assert stored and all("output" not in call for call in stored)
    retain(mb, "Dana: The mast arrived from the rigger today.")
    (recall_call,) = [c for c in mb.dry_run_refresh("b", "dana")["trace"]["tool_calls"] if c["tool"] == "recall"]
    texts = [m["text"] for m in recall_call["output"]["memories"]]
    assert len(texts) == recall_call["result_count"] and any("mast arrived" in t for t in texts)


# ---------------------------------------------------------------- cited memories edited or moved out of scope
@pytest.mark.parametrize("mode", ["full", "delta"])
def test_a_cited_memory_retagged_out_of_scope_is_stale_and_dropped(mb: MindBank, mode: str) -> None:
    before = ready(mb, trigger={"mode": mode})
    doc = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    victim = next(b for s in doc.sections for b in s.blocks if b.memory_ids)
    moved = victim.memory_ids[0]
    mb.update_memory("b", moved, tags=["user:someone-else"])
    assert mb.get_mental_model("b", "dana").is_stale is True  # the scope check alone cannot see it leave
    dry = mb.dry_run_refresh("b", "dana")
    assert dry["retraction"]["fact_ids"] == [moved] and victim.id in dry["retraction"]["block_ids"]
    status, _, after = refresh(mb)
    assert status == "completed" and moved not in after.content and after.is_stale is False
    assert moved not in {e["id"] for e in after.reflect_response["based_on"]["world"]}  # type: ignore[index]


def test_when_every_cited_memory_leaves_the_scope_the_document_is_kept_not_emptied(mb: MindBank) -> None:
    """Issue 14: a retraction that would leave no cited block, with nothing new in scope, is an empty publication:
    refused (``refresh_failed_empty_scope``) with the retraction on record, until a person clears the model."""
    before = ready(mb, trigger={"mode": "delta"})
    cited = StructuredDocument.from_dict(before.structured_document).memory_ids()  # type: ignore[arg-type]
    for memory_id in cited:
        mb.update_memory("b", memory_id, tags=["user:someone-else"])
    assert mb.get_mental_model("b", "dana").is_stale is True
    status, result, after = refresh(mb)  # nothing is in scope any more
    assert status == "failed" and result["outcome"] == "refresh_failed_empty_scope"  # type: ignore[index]
    assert after.content == before.content and after.last_memory_seen_at == before.last_memory_seen_at
    assert sorted(after.reflect_response["pending_retraction"]["fact_ids"]) == sorted(cited)  # type: ignore[index]
    cleared = mb.clear_mental_model("b", "dana")
    assert cleared.content == "" and cleared.refresh_state.failures == 0


def test_an_edited_cited_memory_is_requoted_by_the_delta_refresh(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta", "keep_trace": True})
    doc = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    section, victim = next((s, b) for s in doc.sections for b in s.blocks if "animal shelter" in b.text)
    edited = victim.memory_ids[0]
    mb.update_memory("b", edited, text="Dana: I stopped volunteering at the animal shelter in March.")
    assert mb.get_mental_model("b", "dana").is_stale is True
    status, result, after = refresh(mb)
    assert status == "completed" and result is not None and result["effective_mode"] == "delta"
    assert "stopped volunteering" in after.content and "walking the older dogs" not in after.content
    ops = after.reflect_response["trace"]["delta_operations"]["applied"]  # type: ignore[index]
    assert [(o["op"], o["block_id"]) for o in ops] == [("replace_block", victim.id)]
    untouched = [s for s in doc.sections if s.id != section.id]
    new_doc = StructuredDocument.from_dict(after.structured_document)  # type: ignore[arg-type]
    assert [s for s in new_doc.sections if s.id != section.id] == untouched
    quoted = {e["id"]: e["text"] for e in after.reflect_response["based_on"]["world"]}  # type: ignore[index]
    assert quoted[edited] == "Dana: I stopped volunteering at the animal shelter in March."
    assert after.is_stale is False


def test_a_delta_refresh_does_not_requote_unchanged_citations(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta", "keep_trace": True})
    cited = StructuredDocument.from_dict(before.structured_document).memory_ids()  # type: ignore[arg-type]
    mb.update_memory("b", cited[0], tags=[*TAG, "boats"])  # a write that leaves the quote as it was
    retain(mb, "Dana: The rigger delivered the new mast for the sailing boat.")
    status, _, after = refresh(mb)
    assert status == "completed"
    ops = after.reflect_response["trace"]["delta_operations"]["applied"]  # type: ignore[index]
    assert ops and all(o["op"] != "replace_block" for o in ops)


def two_fact_document(facts: list[Any]) -> Synthesis:
    """A scripted full answer like an LLM's: one block resting on two memories, one block on a third."""
    a, b, c = (f.memory.id for f in facts[:3])
    markdown = f"## Boat\n\nDana and her brother restore a boat that needs a mast. [mem:{a}] [mem:{b}]\n\n" \
               f"## Dogs\n\nDana walks shelter dogs. [mem:{c}]\n"  # fmt: skip
    return Synthesis(markdown=markdown, used_ids=[a, b, c])


def test_a_block_citing_a_gone_memory_and_others_is_removed_and_the_model_freshens(
    mb: MindBank, synth: ScriptedSynthesizer
) -> None:
    synth.compose_script = two_fact_document
    before = ready(mb, trigger={"mode": "delta"})
    boat = StructuredDocument.from_dict(before.structured_document).sections[0]  # type: ignore[arg-type]
    (block,) = boat.blocks
    gone, kept = block.memory_ids
    mb.update_memory("b", gone, tags=["user:someone-else"])
    dry = mb.dry_run_refresh("b", "dana")
    assert dry["retraction"]["block_ids"] == [block.id] and any("also cited others" in w for w in dry["warnings"])
    status, _, after = refresh(mb)
    assert status == "completed" and gone not in after.content and after.is_stale is False
    document = StructuredDocument.from_dict(after.structured_document)  # type: ignore[arg-type]
    assert [s.heading for s in document.sections] == ["Dogs"]  # the emptied section went with its block
    assert kept not in after.content  # it went with the block it shared; a full refresh quotes it again
    synth.compose_script = None  # the extractive writer, for the rebuild
    status, _, rebuilt = refresh(mb, mode="full")
    assert status == "completed" and kept in rebuilt.content and gone not in rebuilt.content
    assert mb.get_mental_model("b", "dana").is_stale is False  # no refresh loop: nothing cites the gone memory


def test_retraction_fact_texts_line_up_with_fact_ids(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta"})
    facts = {e["id"]: e["text"] for e in before.reflect_response["based_on"]["world"]}  # type: ignore[index]
    for memory_id in facts:
        mb.delete_memory("b", memory_id)
    retraction = mb.dry_run_refresh("b", "dana")["retraction"]
    assert retraction["fact_texts"] == [facts[i] for i in retraction["fact_ids"]]


@pytest.mark.parametrize("mode", ["full", "delta"])
def test_an_automatic_refresh_is_not_gated_when_a_cited_memory_was_edited(
    settings: Settings, embedder: MiniLMEmbedder, synth: ScriptedSynthesizer, mode: str
) -> None:
    mb = MindBank.open(settings, embedder=embedder, synthesizer=synth)  # consolidating: the edit queues a round
    before = ready(mb, trigger={"mode": mode, "refresh_after_consolidation": True, "fact_types": ["world"]})
    victim = StructuredDocument.from_dict(before.structured_document).memory_ids()[0]  # type: ignore[arg-type]
    mb.update_memory("b", victim, text="Dana: The kitchen sink is leaking again.")  # off-topic for the gate
    mb.run_pending()  # the consolidation the edit queued, then the automatic refresh it triggers
    after = mb.get_mental_model("b", "dana")
    assert "kitchen sink" in after.content and after.is_stale is False
    assert (after.reflect_response or {}).get("refresh_skipped") != "not_relevant"
    mb.close()


def test_an_edited_citation_is_requoted_even_when_recall_ranks_it_out(mb: MindBank) -> None:
    before = ready(mb, trigger={"mode": "delta", "recall_max_tokens": 40})
    victim = StructuredDocument.from_dict(before.structured_document).memory_ids()[0]  # type: ignore[arg-type]
    retain(mb, *(f"Dana: On day {n} I sanded plank {n} of the sailing boat's deck." for n in range(10)))
    mb.update_memory("b", victim, text="Dana: I sold the sailing boat in the end.")
    status, _, after = refresh(mb)
    assert status == "completed" and "sold the sailing boat" in after.content


def test_a_requote_that_outgrows_the_budget_makes_room(mb: MindBank) -> None:
    retain(mb, "Dana: My brother found the original brass compass of the sailing boat in an antique shop.",
           "Dana: We plan to sail the boat to the island lighthouse in August.",
           "Dana: I paint watercolours of the harbour on Sunday mornings.",
           "Dana: The shelter asked me to organise the spring adoption fair for the older dogs.")  # fmt: skip
    before = ready(mb, trigger={"mode": "delta", "keep_trace": True})
    assert count_tokens(before.content) > 256
    mb.update_mental_model("b", "dana", max_tokens=count_tokens(before.content) + 10)
    doc = StructuredDocument.from_dict(before.structured_document)  # type: ignore[arg-type]
    victim = next(b for s in doc.sections for b in s.blocks if "walking the older dogs" in b.text).memory_ids[0]
    longer = "Dana: I volunteer at the animal shelter on Saturdays, walking the older dogs, cleaning the kennels, " \
             "feeding the cats and driving the van to the vet in town."  # fmt: skip
    mb.update_memory("b", victim, text=longer)
    status, _, after = refresh(mb)
    assert status == "completed" and "driving the van" in after.content
    assert count_tokens(after.content) <= after.max_tokens  # an older block was evicted to make room
    ops = [o["op"] for o in after.reflect_response["trace"]["delta_operations"]["applied"]]  # type: ignore[index]
    assert sorted(ops) == ["remove_block", "replace_block"]


def test_a_chunk_too_large_for_the_budget_does_not_stop_smaller_ones(mb: MindBank, synth: ScriptedSynthesizer) -> None:
    huge = LONG_TURN + " " + LONG_TURN.removeprefix("Dana: ") + " " + LONG_TURN.removeprefix("Dana: ")
    retain(mb, huge, LONG_TURN.replace("harbour master", "marina manager"))
    ready(mb, trigger={"recall_chunks_max_tokens": count_tokens(LONG_TURN) + 10})
    (chunk,) = chunks_read(synth, "compose")
    assert "marina manager" in chunk.text
