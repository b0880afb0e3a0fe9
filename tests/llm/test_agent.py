"""The reflect agent loop with a scripted LLM: hierarchy, release on fresh models, refusals, citation filtering,
iteration caps, and the visibility rules of the mental-model tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from llm_helpers import BOAT, QUERY, make_model, retain

from mindbank.domain.scope import MemoryFilter
from mindbank.domain.tags import freeze_groups
from mindbank.engine.reflect import ReflectNoAnswer, ReflectScope, ReflectTools
from mindbank.providers.llm.base import ChatRequest, ChatResult, ForceTool
from mindbank.service.facade import MindBank
from mindbank.testing import ScriptedLLM, text_reply, tool_reply


def obedient(answer: str = "Dana restores a sailing boat.", **done: Any) -> Callable[[ChatRequest], ChatResult]:
    """A model that calls whatever tool is forced, and ``done`` when free to choose."""

    def respond(request: ChatRequest) -> ChatResult:
        choice = request.tool_choice
        if isinstance(choice, ForceTool) and choice.name != "done":
            return tool_reply(choice.name, query=QUERY, reason="forced")
        return tool_reply("done", answer=answer, **done)

    return respond


def tool_outputs(request: ChatRequest, name: str) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request.messages if m["role"] == "tool" and m["name"] == name]


@pytest.fixture
def stale_model(open_bank: Callable[..., MindBank]) -> tuple[MindBank, ScriptedLLM]:
    llm = ScriptedLLM(default=obedient())
    mb = open_bank(reflect=llm)
    make_model(mb)
    retain(mb, "Dana: The boat got a new mast today.")  # the model is now stale
    return mb, llm


def test_hierarchy_is_forced_in_order_while_models_are_stale(stale_model: tuple[MindBank, ScriptedLLM]) -> None:
    mb, llm = stale_model
    response = mb.reflect("b", QUERY, include_tool_calls=True)
    assert llm.forced_tools() == ["search_mental_models", "search_observations", "recall", "required"]
    assert [c["tool"] for c in response["trace"]["tool_calls"]] == ["search_mental_models", "search_observations",
                                                                    "recall"]  # fmt: skip
    (models,) = tool_outputs(llm.requests[1], "search_mental_models")
    assert models["mental_models"][0]["is_stale"] is True and "note" not in models
    assert response["text"] == "Dana restores a sailing boat."
    assert response["usage"]["input_tokens"] == 40 and response["usage"]["total_tokens"] == 60
    assert [c["scope"] for c in response["trace"]["llm_calls"]] == ["agent_1", "agent_2", "agent_3", "agent_4"]


def test_fresh_models_release_the_forced_lower_levels(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=obedient())
    mb = open_bank(reflect=llm)
    make_model(mb)
    mb.reflect("b", QUERY)
    assert llm.forced_tools() == ["search_mental_models", "required"]
    (models,) = tool_outputs(llm.requests[1], "search_mental_models")
    assert models["mental_models"][0]["is_stale"] is False and "fresh" in models["note"]


def test_high_budget_keeps_the_forced_path_for_fresh_models(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=obedient())
    mb = open_bank(reflect=llm)
    make_model(mb)
    mb.reflect("b", QUERY, budget="high")
    assert llm.forced_tools() == ["search_mental_models", "search_observations", "recall", "required"]


def test_excluded_or_absent_models_are_not_searched(stale_model: tuple[MindBank, ScriptedLLM]) -> None:
    mb, llm = stale_model
    mb.reflect("b", QUERY, exclude_mental_models=True)
    assert llm.forced_tools() == ["search_observations", "recall", "required"]
    offered = {t["function"]["name"] for t in llm.requests[0].tools or []}
    assert offered == {"search_observations", "recall", "expand", "done"}
    llm.requests.clear()
    mb.reflect("b", QUERY, exclude_mental_model_ids=["dana"], fact_types=["world"])
    assert llm.forced_tools() == ["recall", "required"]


def test_only_retrieved_ids_may_be_cited(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM()
    mb = open_bank(reflect=llm)
    ids = retain(mb, *BOAT)
    boat = ids[0]
    llm.default = obedient(
        answer=f"Dana restores a boat [mem:{boat}] and flies planes [mem:made-up].",
        memory_ids=[boat, "made-up"],
        mental_model_ids=["nope"],
    )
    response = mb.reflect("b", QUERY, include_facts=True)
    assert response["text"] == f"Dana restores a boat [mem:{boat}] and flies planes."
    assert [m["id"] for m in response["based_on"]["memories"]] == [boat]
    assert response["based_on"]["mental_models"] == [] and response["based_on"]["directives"] == []


def test_undeclared_categories_list_everything_retrieved(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=obedient())
    mb = open_bank(reflect=llm)
    ids = retain(mb, *BOAT)
    response = mb.reflect("b", QUERY, include_facts=True)
    assert sorted(m["id"] for m in response["based_on"]["memories"]) == sorted(ids)


@pytest.mark.parametrize(("budget", "calls"), [("low", 5), ("mid", 10)])
def test_iteration_caps_end_with_a_forced_done(open_bank: Callable[..., MindBank], budget: str, calls: int) -> None:
    def busy(request: ChatRequest) -> ChatResult:
        if request.tool_choice == ForceTool("done"):
            return tool_reply("done", answer="Out of time: a boat.")
        return tool_reply("recall", query="boat")

    llm = ScriptedLLM(default=busy)
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    response = mb.reflect("b", QUERY, budget=budget)  # type: ignore[arg-type]
    assert len(llm.requests) == calls and llm.forced_tools()[-1] == "done"
    assert llm.requests[-1].scope == "final" and response["text"] == "Out of time: a boat."


def test_a_run_that_never_finishes_is_no_answer(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM(default=tool_reply("recall", query="boat"))
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    with pytest.raises(ReflectNoAnswer):
        mb.reflect("b", QUERY)
    assert len(llm.requests) == 5


def test_done_before_any_retrieval_is_refused(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM([tool_reply("done", answer="A guess.")], default=obedient())
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    response = mb.reflect("b", QUERY)
    (refusal,) = tool_outputs(llm.requests[1], "done")
    assert "search for information first" in refusal["error"]
    assert response["text"] == "Dana restores a sailing boat."


def test_not_found_before_recall_is_refused_once_and_recall_forced(
    stale_model: tuple[MindBank, ScriptedLLM],
) -> None:
    mb, llm = stale_model
    llm.script = [
        tool_reply("search_mental_models", query=QUERY),
        tool_reply("done", answer="I do not know.", answer_found=False),
    ]
    mb.reflect("b", QUERY)
    assert llm.forced_tools()[:3] == ["search_mental_models", "search_observations", "recall"]
    (refusal,) = tool_outputs(llm.requests[2], "done")
    assert "recall" in refusal["error"]


def test_plain_text_reply_after_retrieval_is_taken_as_the_answer(open_bank: Callable[..., MindBank]) -> None:
    llm = ScriptedLLM([tool_reply("recall", query="boat"), text_reply("Dana is restoring a boat.")])
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    assert mb.reflect("b", QUERY, exclude_mental_models=True, fact_types=["world"])["text"] == (
        "Dana is restoring a boat."
    )


def test_bad_tool_arguments_go_back_to_the_model(open_bank: Callable[..., MindBank]) -> None:
    script = [tool_reply("recall", query=""), tool_reply("nonsense_tool"), tool_reply("recall", query="boat")]
    llm = ScriptedLLM(script, default=obedient())
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    mb.reflect("b", QUERY, fact_types=["world"])
    (bad_query,) = tool_outputs(llm.requests[1], "recall")
    (unknown,) = tool_outputs(llm.requests[2], "nonsense_tool")
    assert "query" in bad_query["error"] and "unavailable tool" in unknown["error"]


def test_structured_output_success_and_failure(open_bank: Callable[..., MindBank]) -> None:
    schema = {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}

    def agent_or_extract(value: Any) -> Callable[[ChatRequest], ChatResult]:
        def respond(request: ChatRequest) -> ChatResult:
            if request.response_schema is not None:
                return ChatResult(text=json.dumps(value), parsed=value)
            return obedient()(request)

        return respond

    llm = ScriptedLLM(default=agent_or_extract({"project": "sailing boat"}))
    mb = open_bank(reflect=llm)
    retain(mb, *BOAT)
    response = mb.reflect("b", QUERY, response_schema=schema)
    assert response["structured_output"] == {"project": "sailing boat"}
    assert response["structured_output_error"] is None
    assert llm.requests[-1].response_schema == schema and llm.requests[-1].temperature == 0.0
    llm.default = agent_or_extract({"project": 7})
    response = mb.reflect("b", QUERY, response_schema=schema)
    assert response["structured_output"] is None and "expected string" in response["structured_output_error"]
    assert response["text"] == "Dana restores a sailing boat."  # the reflect itself still succeeded


# ---------------------------------------------------------------- tools: visibility, staleness, expand
@pytest.fixture
def tagged_models(open_bank: Callable[..., MindBank]) -> MindBank:
    mb = open_bank()
    retain(mb, "Ana: I am training for the Lisbon marathon in spring.", tags=("a",))
    retain(mb, "Ben: I am building a wooden canoe in my garage.", tags=("b",))
    for model_id, tags in (("ma", ["a"]), ("mb", ["b"]), ("mu", [])):
        mb.create_mental_model("b", name=model_id, source_query="What are they working on?", tags=tags, id=model_id)
    mb.run_pending()
    return mb


def visible(mb: MindBank, **scope: Any) -> list[str]:
    tools = ReflectTools(mb.store, mb.embedder, ReflectScope(bank_id="b", **scope))
    return sorted(m.id for m in tools.visible_models())


def test_mental_model_visibility_rules(tagged_models: MindBank) -> None:
    mb = tagged_models
    assert visible(mb) == ["ma", "mb", "mu"]
    assert visible(mb, filter=MemoryFilter(tags=("a",), tags_match="any")) == ["ma", "mu"]
    assert visible(mb, filter=MemoryFilter(tags=("a",), tags_match="all")) == ["ma", "mu"]
    assert visible(mb, filter=MemoryFilter(tags=("a",), tags_match="any_strict")) == ["ma"]
    assert visible(mb, filter=MemoryFilter(tags=("a", "b"), tags_match="all_strict")) == []
    assert visible(mb, filter=MemoryFilter(tags=(), tags_match="exact")) == ["mu"]
    groups = freeze_groups([{"or": [{"tags": ["b"], "match": "any_strict"}, {"tags": ["a"], "match": "exact"}]}])
    assert visible(mb, filter=MemoryFilter(tag_groups=groups)) == ["ma", "mb"]
    assert visible(mb, exclude_mental_model_ids=frozenset({"mu"})) == ["ma", "mb"]
    assert visible(mb, self_id="ma") == ["mb", "mu"]
    assert visible(mb, exclude_mental_models=True) == []


def test_search_reports_staleness_per_hit_and_expand_stays_in_scope(tagged_models: MindBank) -> None:
    mb = tagged_models
    retain(mb, "Ana: My marathon training now includes hill sprints.", tags=("a",))
    tools = ReflectTools(mb.store, mb.embedder, ReflectScope(bank_id="b"))
    hits = tools.run("search_mental_models", {"query": "marathon", "max_results": 3})["mental_models"]
    stale = {h["id"]: h["is_stale"] for h in hits}
    assert stale == {"ma": True, "mb": False, "mu": True}
    assert hits[0]["id"] in ("ma", "mu") and "content" in hits[0] and "snippet" in hits[1]
    facts = tools.run("recall", {"query": "canoe garage"})["memories"]
    canoe = next(f["id"] for f in facts if "canoe" in f["text"])
    expanded = tools.run("expand", {"memory_ids": [canoe, "never-retrieved"], "depth": "chunk"})
    assert expanded["results"] == [
        {"memory_id": canoe, "depth": "chunk", "text": "Ben: I am building a wooden canoe in my garage."}
    ]
    assert expanded["not_retrieved"] == ["never-retrieved"]


def test_read_mental_models_stops_at_the_budget(tagged_models: MindBank) -> None:
    tools = ReflectTools(tagged_models.store, tagged_models.embedder, ReflectScope(bank_id="b"))
    out = tools.run("read_mental_models", {"mental_model_ids": ["ma", "zz", "mb"], "max_tokens": 1000})
    assert [m["id"] for m in out["mental_models"]] == ["ma", "mb"] and out["unknown_ids"] == ["zz"]
    assert set(tools.evidence.mental_models) == {"ma", "mb"}


def test_tag_scoped_reflect_sees_only_its_memories(tagged_models: MindBank) -> None:
    llm = ScriptedLLM(default=obedient())
    tagged_models.llms["reflect"] = llm
    response = tagged_models.reflect("b", "canoe", tags=["b"], tags_match="any_strict", include_facts=True)
    assert {m["tags"][0] for m in response["based_on"]["memories"]} == {"b"}
    assert {m["id"] for m in response["based_on"]["mental_models"]} == {"mb"}
