"""Fixed content around synthesis: what a refresh does with the blocks people wrote or pinned (beyond the reference).

The synthesizers never see these rules; they wrap them (docs/curation.md, the rules in
``domain/document/curation.py``):

* :func:`prepare` — before synthesis: the deletion rule applied to fixed blocks (their sentences quoting a gone
  memory removed, reported), and the result kept on the plan as the baseline every candidate is held to;
* :func:`guard` — a delta's operations that would change, move or remove fixed content are refused one by one and
  recorded (``curation.refused`` in the result and trace; a pinned block a new fact contradicts is reported as
  possibly out of date); the rest apply;
* :func:`restore` — after synthesis (full or delta): fixed content put back byte-identical.

A model without fixed content goes through none of this: ``plan.fixed`` stays None and every step is a no-op.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mindbank.domain.document import DocumentError, Operation, StructuredDocument, render_markdown
from mindbank.domain.document.curation import (
    fixed_block_ids,
    guard_operations,
    has_fixed,
    restore_fixed,
    retract_quotes,
)
from mindbank.engine.refresh.plan import RefreshPlan
from mindbank.store.base import Store


def prepare(plan: RefreshPlan, current: StructuredDocument, missing: Collection[str]) -> StructuredDocument:
    """``current`` with the deletion rule applied to its fixed blocks, recorded as the plan's baseline
    (``plan.fixed``) and report (``plan.curation``); ``current`` unchanged when it holds no fixed content."""
    if not has_fixed(current):
        return current
    document, retracted = retract_quotes(current, missing)
    plan.fixed = document
    plan.curation = {"fixed_block_ids": fixed_block_ids(document), "refused": [], "retracted_quotes": retracted}
    if retracted:
        plan.warnings.append(
            f"{len(retracted)} person-written or pinned block(s) quoted a memory that is gone: the quoting sentences "
            "were removed (the deletion rule wins over curation)."
        )
    return document


def guard(plan: RefreshPlan, document: StructuredDocument, operations: Sequence[Operation]) -> list[Operation]:
    """The operations allowed on ``document``'s fixed content; refused ones recorded on the plan (each with its
    ``reason``) with a warning per pinned block a new fact may contradict."""
    if plan.fixed is None or plan.curation is None:
        return list(operations)
    verdict = guard_operations(document, operations)
    plan.curation["refused"].extend(verdict.refused)
    plan.warnings.extend(verdict.warnings)
    if verdict.refused:
        plan.warnings.append(f"{len(verdict.refused)} delta operation(s) on fixed content were refused.")
    return verdict.allowed


def restore(plan: RefreshPlan, candidate: StructuredDocument) -> StructuredDocument:
    """``candidate`` holding the baseline's fixed content as it was (no-op without fixed content)."""
    return candidate if plan.fixed is None else restore_fixed(plan.fixed, candidate)


def fixed_ids(plan: RefreshPlan) -> frozenset[str]:
    """The ids of the fixed blocks the budget cap must never trim."""
    return frozenset() if plan.fixed is None else frozenset(fixed_block_ids(plan.fixed))


def fixed_guidance(plan: RefreshPlan, *, full: bool) -> str:
    """For a synthesizer that follows written guidance (the LLM engine) writing a full document: the fixed content,
    which the refresh keeps as it is, so the new document neither repeats nor contradicts it ("" without any; a
    delta sees it marked in the document itself)."""
    if plan.fixed is None or not full:
        return ""
    text = render_markdown(restore_fixed(plan.fixed, StructuredDocument([])))
    return (
        "\n\nFixed content: people wrote or pinned these parts of the document, and they are kept as they are "
        "around what you write. Do not repeat them; write the rest of the document.\n\n" + text
    )


def keep_concurrent_edits(store: Store, plan: RefreshPlan) -> None:
    """A person's edit or pin saved while this refresh ran is kept: when the stored document changed since the plan
    read it and holds fixed content, that content goes into the plan's document (same rules as :func:`restore`)."""
    if plan.document is None:
        return
    current = store.get_mental_model(plan.model.bank_id, plan.model.id)
    stored = None if current is None else current.structured_document
    if stored is None or stored == plan.model.structured_document:
        return
    try:
        document = StructuredDocument.from_dict(stored)
    except DocumentError:
        return
    if has_fixed(document):
        plan.document = restore_fixed(document, plan.document)
        plan.content = render_markdown(plan.document)
