"""The refresh mode rule (``engine/refresh/mode.py``) and the declared synthesizer capabilities: a synthesizer gets
exactly the inputs its ``Capabilities`` ask for (``engine/refresh/inputs.py``), whatever else the refresh read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from sample_texts import BOAT, LONG_TURN

from mindbank.config import Settings
from mindbank.domain.document import StructuredDocument
from mindbank.domain.governance import RefreshState
from mindbank.domain.records import MentalModel, RetainItem
from mindbank.engine.refresh.mode import ModeChoice, choose_mode
from mindbank.engine.synthesis.extractive import ExtractiveSynthesizer
from mindbank.engine.synthesis.port import Capabilities, ScopeRead, Synthesis, SynthesisInputs, SynthesisScope
from mindbank.providers.embeddings.onnx_minilm import MiniLMEmbedder
from mindbank.service.facade import MindBank

NOW = datetime(2026, 1, 1, tzinfo=UTC)
REVERTED = RefreshState(hold={"reason": "reverted", "through": "2026-01-01T00:00:00Z"})


def model(**changes: Any) -> MentalModel:
    base = MentalModel(
        id="m", bank_id="b", name="Dana", source_query="What is Dana doing?", content="# Dana\n\nA boat.\n",
        tags=(), max_tokens=2048, trigger={}, structured_document=None, reflect_response=None,
        last_refreshed_at=NOW, last_memory_seen_at=NOW, last_refreshed_source_query="What is Dana doing?",
        last_refresh_failed_at=None, last_full_refreshed_at=NOW, created_at=NOW,
    )  # fmt: skip
    return replace(base, **changes)


@pytest.mark.parametrize(
    ("changes", "asked", "automatic", "expected"),
    [
        ({}, None, False, ModeChoice("full", "full")),  # the default
        ({"trigger": {"mode": "delta"}}, None, False, ModeChoice("delta", "delta")),  # the trigger's
        ({"trigger": {"mode": "delta"}}, "full", False, ModeChoice("full", "full")),  # the operation's first
        ({"content": "  "}, "delta", False, ModeChoice("delta", "full", "no_baseline_content")),
        ({"last_refreshed_source_query": "Where?"}, "delta", False, ModeChoice("delta", "full", "source_query_changed")),
        ({"last_refreshed_source_query": None}, "delta", False, ModeChoice("delta", "delta")),  # never refreshed
        ({"refresh_state": RefreshState(reanchor="delta_ops_all_skipped")}, "delta", True,
         ModeChoice("delta", "full", "delta_reanchored")),
        # a revert holds: the automatic refresh after it is a delta on the restored version, whatever was asked
        ({"refresh_state": REVERTED}, "full", True, ModeChoice("delta", "delta")),
        ({"refresh_state": REVERTED, "trigger": {"mode": "full"}}, None, True, ModeChoice("delta", "delta")),
        ({"refresh_state": REVERTED}, None, False, ModeChoice("full", "full")),  # a manual one runs as asked
        ({"refresh_state": RefreshState(hold={"reason": "draft"})}, None, True, ModeChoice("full", "full")),
        ({"refresh_state": REVERTED, "content": ""}, None, True, ModeChoice("delta", "full", "no_baseline_content")),
    ],
)  # fmt: skip
def test_the_refresh_mode_rule(changes: dict[str, Any], asked: Any, automatic: bool, expected: ModeChoice) -> None:
    assert choose_mode(model(**changes), asked, automatic=automatic) == expected


@dataclass
class Recording:
    """The extractive engine behind any declared capabilities, keeping every input it was handed."""

    capabilities: Capabilities
    name: str = "recording"
    seen: list[tuple[str, SynthesisInputs]] = field(default_factory=list)
    engine: ExtractiveSynthesizer = field(default_factory=ExtractiveSynthesizer)

    def compose(self, inputs: SynthesisInputs) -> Synthesis:
        self.seen.append(("compose", inputs))
        return self.engine.compose(inputs)

    def edit(self, document: StructuredDocument, inputs: SynthesisInputs) -> Synthesis:
        self.seen.append(("edit", inputs))
        return self.engine.edit(document, inputs)

    def extract_structured(self, *, content: str, schema: dict[str, Any]) -> dict[str, Any]:
        return self.engine.extract_structured(content=content, schema=schema)


@pytest.fixture
def open_bank(settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Any]:
    opened: list[MindBank] = []

    def open_with(synthesizer: Recording) -> MindBank:
        bank = MindBank.open(replace(settings, enable_auto_consolidation=False), embedder=embedder,
                             synthesizer=synthesizer)  # fmt: skip
        opened.append(bank)
        return bank

    yield open_with
    for bank in opened:
        bank.close()


def refreshed(mb: MindBank, **trigger: Any) -> None:
    # the long turn is split into several facts: a refresh reads their shared source chunk (when asked to)
    mb.retain("b", [RetainItem(content=t, tags=("user:dana",)) for t in [*BOAT, LONG_TURN]])
    mb.update_bank_profile("b", mission="Keep track of Dana's projects.")
    _, op = mb.create_mental_model("b", name="Dana", source_query="What is Dana working on?", tags=["user:dana"],
                                   id="dana", trigger=trigger or None)  # fmt: skip
    mb.run_pending()
    assert mb.get_operation("b", op).status == "completed"


def test_a_synthesizer_declaring_nothing_gets_the_facts_only(open_bank: Any) -> None:
    synthesizer = Recording(Capabilities())
    refreshed(open_bank(synthesizer), include_chunks=True)
    ((method, inputs),) = synthesizer.seen
    assert method == "compose" and inputs.facts and inputs.name == "Dana"
    assert (inputs.scope, tuple(inputs.chunks), inputs.read, inputs.guidance) == (None, (), None, "")


def test_a_synthesizer_gets_every_input_it_declares(open_bank: Any) -> None:
    synthesizer = Recording(Capabilities(retrieves=True, reads_chunks=True, reads_scope=True, reads_directives=True))
    mb = open_bank(synthesizer)
    refreshed(mb, include_chunks=True, mode="delta")
    ((_, full),) = synthesizer.seen
    assert isinstance(full.scope, SynthesisScope) and full.scope.model_id == "dana"
    assert full.chunks and {c.memory_ids[0] for c in full.chunks} <= {h.memory.id for h in full.facts}
    assert isinstance(full.read, ScopeRead) and set(full.read.vectors) >= {h.memory.id for h in full.facts}
    assert "Keep track of Dana's projects." in full.guidance
    mb.retain("b", [RetainItem(content="Dana: The new mast for the sailing boat arrived today.", tags=("user:dana",))])
    mb.refresh_mental_model("b", "dana")
    mb.run_pending()
    method, delta = synthesizer.seen[-1]
    assert method == "edit" and delta.scope is None and delta.name == ""  # its own retrieval is a full refresh's
    assert [h.memory.text for h in delta.facts if "mast" in h.memory.text and "arrived" in h.memory.text]
    assert isinstance(delta.read, ScopeRead) and "Keep track of Dana's projects." in delta.guidance
