"""The refresh mode rule: which mode a refresh asks for and which one it runs, written once.

Spec "Refresh Mode" (``full`` is the default; ``delta`` edits the structured document); reference facts §4.6 steps
1-2 (the requested mode and the delta fallbacks); docs/curation.md "A revert that holds" (the automatic refresh
after a revert). The refresh runner applies it at the start of every refresh, real or dry run.
"""

from __future__ import annotations

from dataclasses import dataclass

from mindbank.domain.records import MentalModel
from mindbank.engine.refresh.plan import Mode


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """``requested``: the mode the refresh asked for; ``effective``: the mode it runs; ``fallback_reason``: why a
    requested delta runs full (None when it does not fall back)."""

    requested: Mode
    effective: Mode
    fallback_reason: str | None = None


def choose_mode(model: MentalModel, asked: Mode | None, *, automatic: bool) -> ModeChoice:
    """The mode of one refresh of ``model``.

    Requested: an automatic refresh of a model whose revert still holds (``refresh_state.hold.reason ==
    "reverted"``) is a delta on top of the restored version, whatever was asked or the trigger says (a revert holds:
    the first automatic refresh after it never rewrites it in full); otherwise ``asked`` (the operation's mode),
    else the trigger's ``mode``, else ``full``.

    Effective: a requested delta runs full when there is nothing to edit (no content: ``no_baseline_content``),
    when the question changed since the last refresh (``source_query_changed``: the old answer does not answer
    the new question), or when delta edits failed before and the model must re-anchor once
    (``delta_reanchored``: a later failure follows the ordinary backoff and tries full again). One more fallback
    needs what the refresh read: a delta whose every block rests on a memory that is gone, with nothing new in
    scope, re-anchors as full too (``delta_reanchored``, decided by the runner's scope read).
    """
    hold = model.refresh_state.hold
    requested: Mode
    if automatic and hold and hold.get("reason") == "reverted":
        requested = "delta"
    else:
        requested = asked or model.trigger.get("mode") or "full"
    if requested == "delta":
        if not model.content.strip():
            return ModeChoice(requested, "full", "no_baseline_content")
        if model.last_refreshed_source_query not in (None, model.source_query):
            return ModeChoice(requested, "full", "source_query_changed")
        if model.refresh_state.reanchor:
            return ModeChoice(requested, "full", "delta_reanchored")
    return ModeChoice(requested, requested)
