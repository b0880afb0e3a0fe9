"""What a refresh hands its synthesizer: one :class:`~mindbank.engine.synthesis.port.SynthesisInputs`, holding
the facts and exactly the extra inputs the synthesizer's declared capabilities ask for.

Spec "What a Refresh Reads" (the source chunks: trigger ``include_chunks``); docs/curation.md "The synthesizer sees
fixed content as fixed context" (a full document written around the fixed content). A synthesizer that does not
declare a capability gets the field's default, so nothing it cannot use is fetched for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from mindbank.domain.records import MentalModel, ScoredMemory
from mindbank.domain.resources import applicable_directives, guidance_prompt
from mindbank.engine.refresh import curation
from mindbank.engine.refresh.plan import RefreshPlan
from mindbank.engine.synthesis.port import Capabilities, ScopeRead, SynthesisInputs
from mindbank.store.base import Store


def synthesis_inputs(
    store: Store,
    plan: RefreshPlan,
    capabilities: Capabilities,
    facts: Sequence[ScoredMemory],
    *,
    full: bool,
    read: ScopeRead | None,
) -> SynthesisInputs:
    """The inputs of one ``compose`` (``full``) or ``edit`` call for ``plan``'s model.

    ``scope`` (the retrieval scope and snapshot: ``retrieves``, full mode only), ``chunks`` (``reads_chunks``: the
    chunks the plan read, possibly none), ``read`` (``reads_scope``: vectors and scores of the whole scope) and
    ``guidance`` (``reads_directives``: the bank's mission, its active directives that apply to the model's tags
    and, in full mode, the fixed content the new document is written around) are filled only when declared."""
    model = plan.model
    return SynthesisInputs(
        source_query=model.source_query,
        facts=facts,
        max_tokens=model.max_tokens,
        name=model.name if full else "",
        scope=plan.synthesis_scope if full and capabilities.retrieves else None,
        chunks=plan.chunks if capabilities.reads_chunks else (),
        read=read if capabilities.reads_scope else None,
        guidance=bank_guidance(store, model) + curation.fixed_guidance(plan, full=full)
        if capabilities.reads_directives
        else "",
    )


def bank_guidance(store: Store, model: MentalModel) -> str:
    """The bank's mission and the active directives that apply to the model's tags, as prompt text ("" when the
    bank has neither)."""
    bank = store.get_bank(model.bank_id)
    directives = applicable_directives(store.list_directives(model.bank_id, active_only=True), model.tags)
    return guidance_prompt(directives, None if bank is None else bank.mission)
