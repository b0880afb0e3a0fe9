"""LLMSynthesizer through the refresh pipeline, with a scripted LLM: document mode (per-block provenance), delta
operations (some invalid, one re-ask, failure), structured output, and the failure rules (nothing lost)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llm_helpers import QUERY, make_model, retain, untouched
from sample_texts import BOAT, LONG_TURN

from mindbank.domain.document import StructuredDocument
from mindbank.domain.records import MentalModel
from mindbank.providers.llm.base import ChatRequest, ChatResult, ForceTool, LLMTransientError
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, json_reply, text_reply, tool_reply


def evidence(request: ChatRequest) -> dict[str, str]:
    """The seed evidence of a document-mode run: text -> id."""
    lines = request.messages[1]["content"].splitlines()
    views = (json.loads(line) for line in lines if line.startswith("{"))
    return {v["text"]: v["id"] for v in views if "id" in v}  # source excerpts have no id


def writer(request: ChatRequest) -> ChatResult:
    """A document-mode agent: one section, each block citing the fact it quotes (plus a made-up id)."""
    choice = request.tool_choice
    if isinstance(choice, ForceTool) and choice.name != "done":
        return tool_reply(choice.name, query=QUERY)
    ids = evidence(request)
    boat = next(i for t, i in ids.items() if "restoring" in t)
    dogs = next(i for t, i in ids.items() if "shelter" in t)
    document = {
        "sections": [
            {
                "heading": "## Projects",
                "blocks": [
                    {"text": "Dana restores a 1970s sailing boat with her brother.", "memory_ids": [boat, "made-up"]},
                    {"text": "She walks shelter dogs on Saturdays [mem:made-up].", "memory_ids": [dogs]},
                ],
            }
        ]
    }
    return tool_reply("done", document=document, answer_found=True)


def dispatch(agent: Any, schema_reply: Any = None) -> Callable[[ChatRequest], Any]:
    """Route schema-constrained calls (delta ops, structured output) and agent calls to separate scripts."""

    def respond(request: ChatRequest) -> Any:
        chosen = schema_reply if request.response_schema is not None else agent
        if isinstance(chosen, list):
            chosen = chosen.pop(0)
        return chosen(request) if callable(chosen) and not isinstance(chosen, BaseException) else chosen

    return respond


def refresh(mb: MindBank) -> tuple[str, dict[str, Any] | None, MentalModel]:
    op_id = mb.refresh_mental_model("b", "dana")
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    return op.status, op.result, mb.get_mental_model("b", "dana")


def blocks(model: MentalModel) -> list[tuple[str, tuple[str, ...]]]:
    document = StructuredDocument.from_dict(model.structured_document or {})
    return [(b.text, b.memory_ids) for s in document.sections for b in s.blocks]


def test_document_mode_cites_exactly_what_each_block_rests_on(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=writer)
    mb = open_bank(refresh=llm)
    model = make_model(mb)
    ids = evidence(llm.requests[0])
    boat = next(i for t, i in ids.items() if "restoring" in t)
    dogs = next(i for t, i in ids.items() if "shelter" in t)
    assert model.content == (
        f"## Projects\n\nDana restores a 1970s sailing boat with her brother. [mem:{boat}]\n\n"
        f"She walks shelter dogs on Saturdays. [mem:{dogs}]\n"
    )
    assert [ids for _, ids in blocks(model)] == [(boat,), (dogs,)]
    response = model.reflect_response or {}
    assert response["engine"] == "llm" and response["outcome"] == "content_written"
    assert sorted(e["id"] for e in response["based_on"]["world"]) == sorted([boat, dogs])
    assert response["usage"]["input_tokens"] == 10
    assert llm.requests[0].temperature == 0.3 and "mental model" in llm.requests[0].messages[0]["content"]


def test_document_mode_may_cite_what_its_own_tools_found(open_bank: Callable[..., MindBank]) -> None:
    def digger(request: ChatRequest) -> ChatResult:
        recalled = [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]
        if not recalled:
            return tool_reply("recall", query="shelter dogs")
        found = next(m["id"] for m in recalled[0]["memories"] if "shelter" in m["text"])
        section = {"heading": "Volunteering", "blocks": [{"text": "Dana walks shelter dogs.", "memory_ids": [found]}]}
        return tool_reply("done", document={"sections": [section]})

    llm = ScriptedLLM(default=digger)
    mb = open_bank(refresh=llm)
    model = make_model(mb, trigger={"recall_max_tokens": 1})  # the pipeline's own recall hands in one fact only
    assert len(evidence(llm.requests[0])) == 1
    (cited,) = blocks(model)[0][1]
    assert [e["id"] for e in (model.reflect_response or {})["based_on"]["world"]] == [cited]
    trace_tools = [c["tool"] for c in mb.dry_run_refresh("b", "dana")["trace"]["tool_calls"]]
    assert trace_tools == ["recall", "recall"]  # the pipeline's, then the agent's


def test_agent_without_a_document_fails_no_answer_and_loses_nothing(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=writer)
    mb = open_bank(refresh=llm)
    before = make_model(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    llm.default = text_reply("I would rather chat.")
    status, result, after = refresh(mb)
    assert status == "failed" and result is not None
    assert (result["outcome"], result["failure_reason"]) == ("refresh_failed_error", "no_answer")
    untouched(before, after)
    assert after.last_refresh_failed_at is not None
    assert len(llm.requests) == 1 + 10  # the first refresh, then mid budget's ten iterations
    assert mb.mental_model_history("b", "dana")[0]["kind"] == "refresh_failed"


def test_transient_provider_error_is_retried_not_recorded(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=writer)
    mb = open_bank(refresh=llm)
    before = make_model(mb)
    retain(mb, "Dana: The boat got a new mast today.")
    llm.default = LLMTransientError("RateLimitError: 429", status=429)
    op_id = mb.refresh_mental_model("b", "dana")
    mb.run_pending()
    op = mb.get_operation("b", op_id)
    assert op.status == "pending" and op.retry_count == 1 and "429" in (op.error or "")
    after = mb.get_mental_model("b", "dana")
    untouched(before, after)
    assert after.last_refresh_failed_at is None  # transient errors never pause automatic refreshes
    assert all(h.get("kind") != "refresh_failed" for h in mb.mental_model_history("b", "dana"))


def _delta_bank(open_bank: Callable[..., MindBank], schema_reply: Any) -> tuple[MindBank, ScriptedLLM, str]:
    llm = ScriptedLLM(default=dispatch(writer, schema_reply))
    mb = open_bank(refresh=llm)
    make_model(mb, trigger={"mode": "delta"})
    (new_id,) = retain(mb, "Dana: The boat got a new mast today.")
    return mb, llm, new_id


def test_delta_ops_naming_unknown_ids_get_one_repair_reask_then_drop(open_bank: Callable[..., MindBank]) -> None:
    def ops(request: ChatRequest) -> ChatResult:
        (new,) = json.loads(request.messages[1]["content"])["new_memories"]
        return json_reply(
            {
                "operations": [
                    {"op": "append_block", "section_id": "projects", "text": "New mast fitted.",
                     "memory_ids": [new["id"], "made-up"], "heading": None},
                    {"op": "remove_block", "section_id": "ghost", "block_id": "b0000000"},
                ]
            }
        )  # fmt: skip

    mb, llm, new_id = _delta_bank(open_bank, ops)
    before = mb.get_mental_model("b", "dana")
    status, result, after = refresh(mb)
    assert status == "completed" and result is not None and result["effective_mode"] == "delta"
    assert (result["delta_ops_applied"], result["delta_ops_skipped"]) == (1, 1)
    assert after.content == before.content + f"\nNew mast fitted. [mem:{new_id}]\n"
    skipped = (after.reflect_response or {})["delta_operations_skipped"]
    assert skipped[0]["reason"] == "unknown section_id: ghost"
    repair = [r for r in llm.requests if r.response_schema is not None]
    assert [r.scope for r in repair] == ["delta_ops", "delta_ops_repair"]  # one re-ask listing the valid ids
    assert "section 'projects'" in repair[1].messages[-1]["content"]
    assert new_id in {e["id"] for e in (after.reflect_response or {})["based_on"]["world"]}


def test_delta_reply_failing_the_schema_gets_one_reask(open_bank: Callable[..., MindBank]) -> None:
    good = json_reply({"operations": [{"op": "rename_section", "section_id": "projects", "new_heading": "Plans"}]})
    mb, llm, _ = _delta_bank(open_bank, [json_reply({"operations": [{"op": "explode"}]}), good])
    status, _, after = refresh(mb)
    assert status == "completed" and after.content.startswith("## Plans\n")
    asks = [r for r in llm.requests if r.response_schema is not None]
    assert [r.scope for r in asks] == ["delta_ops", "delta_ops_reask"]
    assert "explode" in asks[1].messages[-1]["content"] and "rejected" in asks[1].messages[-1]["content"]


def test_delta_reply_failing_twice_fails_delta_ops_failed_and_loses_nothing(
    open_bank: Callable[..., MindBank],
) -> None:
    bad = [text_reply("no JSON here"), json_reply({"operations": [{"op": "append_block", "level": "x"}]})]
    mb, _, _ = _delta_bank(open_bank, bad)
    before = mb.get_mental_model("b", "dana")
    status, result, after = refresh(mb)
    assert status == "failed" and result is not None and result["failure_reason"] == "delta_ops_failed"
    untouched(before, after)
    assert "failed the schema twice" in mb.mental_model_history("b", "dana")[0]["error_message"]


def test_structured_output_success_and_failure(open_bank: Callable[..., MindBank]) -> None:
    schema = {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}
    llm = ScriptedLLM(default=dispatch(writer, json_reply({"project": "sailing boat"})))
    mb = open_bank(refresh=llm)
    model = make_model(mb, trigger={"response_schema": schema})
    assert (model.reflect_response or {})["structured_output"] == {"project": "sailing boat"}
    assert llm.requests[-1].messages[1]["content"].endswith(model.content)  # extracted from the final content
    retain(mb, "Dana: The boat got a new mast today.")
    llm.default = dispatch(writer, json_reply({"other": 1}))
    status, result, after = refresh(mb)
    assert status == "failed" and result is not None
    assert (result["outcome"], result["failure_reason"]) == ("refresh_failed_structured_output",
                                                             "structured_output_failed")  # fmt: skip
    untouched(model, after)
    assert (after.reflect_response or {})["structured_output"] == {"project": "sailing boat"}


def test_source_chunks_reach_the_document_agent_and_the_delta_prompt(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=dispatch(writer, json_reply({"operations": []})))
    mb = open_bank(refresh=llm)
    retain(mb, *BOAT, LONG_TURN)  # the long turn becomes several facts that share one chunk
    make_model(mb, trigger={"mode": "delta"})
    seed = llm.requests[0].messages[1]["content"]
    excerpts = [json.loads(line) for line in seed.split("Source excerpts", 1)[1].splitlines() if line.startswith("{")]
    assert [e["text"] for e in excerpts] == [LONG_TURN]  # short turns are their own chunk: not repeated
    assert len(excerpts[0]["memory_ids"]) >= 2

    second = LONG_TURN.replace("harbour master", "marina manager")
    new_ids = retain(mb, second)
    status, result, _ = refresh(mb)
    assert status == "completed" and result is not None
    (delta,) = [r for r in llm.requests if r.scope == "delta_ops"]
    request = json.loads(delta.messages[1]["content"])
    assert {m["id"] for m in request["new_memories"]} == set(new_ids)
    # the new facts' chunk, and the chunk of the first turn's facts the second repeats word for word (a repeat is
    # a write of that fact: issue 13)
    excerpts = {e["text"]: e["memory_ids"] for e in request["source_excerpts"]}
    assert set(excerpts) == {second, LONG_TURN}
    assert sorted(i for ids in excerpts.values() for i in ids) == sorted(new_ids)


def test_include_chunks_off_sends_no_excerpts(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=dispatch(writer, json_reply({"operations": []})))
    mb = open_bank(refresh=llm)
    retain(mb, *BOAT, LONG_TURN)
    make_model(mb, trigger={"mode": "delta", "include_chunks": False})
    assert "Source excerpts" not in llm.requests[0].messages[1]["content"]
    retain(mb, LONG_TURN.replace("harbour master", "marina manager"))
    refresh(mb)
    (delta,) = [r for r in llm.requests if r.scope == "delta_ops"]
    assert "source_excerpts" not in json.loads(delta.messages[1]["content"])
