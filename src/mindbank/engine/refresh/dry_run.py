"""The dry run's result: ``MentalModelDryRunRefreshResult`` (wire sample 15) for a refresh plan.

Spec "Troubleshoot a Refresh"; reference facts §4.10. The plan comes from ``RefreshRunner.plan(..., dry_run=True)``,
which writes nothing; this only shapes it for the wire.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any

from mindbank.domain.timeutil import to_iso, utcnow
from mindbank.engine.refresh.plan import (
    WRITING_OUTCOMES,
    RefreshPlan,
    reference_fallback_reason,
    reference_outcome,
)


def dry_run_result(plan: RefreshPlan) -> dict[str, Any]:
    """``MentalModelDryRunRefreshResult`` (wire sample 15) for a plan.

    The reference's client validates ``outcome`` and ``mode_fallback_reason`` (here and in ``trace``) against its
    enums, so values beyond them (``refresh_failed_empty_scope``, ``delta_reanchored``: plan.py) are reported as
    the nearest reference value there, and exactly in ``failure_reason`` / ``mode_fallback_detail``."""
    model = plan.model
    preview = plan.content if plan.outcome in WRITING_OUTCOMES else model.content
    diff = "".join(
        difflib.unified_diff(
            model.content.splitlines(keepends=True), preview.splitlines(keepends=True), "current", "preview"
        )
    )
    used = set(plan.used_ids)
    trace = plan.trace(with_outputs=True)
    trace["outcome"] = reference_outcome(plan.outcome, executor=True)
    trace["mode_fallback_reason"] = reference_fallback_reason(plan.mode_fallback_reason)
    return {
        "mental_model_id": model.id,
        "name": model.name,
        "requested_mode": plan.requested_mode,
        "effective_mode": plan.effective_mode,
        "mode_fallback_reason": reference_fallback_reason(plan.mode_fallback_reason),
        "mode_fallback_detail": plan.mode_fallback_reason,
        "outcome": reference_outcome(plan.outcome, executor=True),
        "would_persist": plan.would_persist,
        "failure_reason": plan.failure_reason,
        "scope": plan.scope,
        "window": {
            "created_after": to_iso(plan.window.get("created_after")),
            # an empty bank has no write stamp yet; the wire format needs a bound, and "now" bounds nothing out
            "created_before": to_iso(plan.window.get("created_before") or utcnow()),
            "watermark": to_iso(plan.window.get("watermark")),
        },
        "facts": {
            "retrieved": _by_type(h.memory.fact_type for h in plan.retrieved),
            "used": _by_type(h.memory.fact_type for h in plan.retrieved if h.memory.id in used),
        },
        "based_on": plan.based_on,
        "current_content": model.content,
        "candidate_content": plan.candidate_content or "",
        "preview_content": preview,
        "diff": diff,
        "delta_operations": plan.delta_operations(),
        "retraction": plan.retraction,
        "trace": trace,
        "usage": plan.usage,
        "duration_ms": plan.duration_ms,
        "warnings": plan.warnings + ([plan.error_message] if plan.error_message else []),
        "candidate_tokens": plan.candidate_tokens,
        "trimmed_block_ids": plan.trimmed,
        "carried_over": plan.carried_over,
        "left_out": plan.left_out,
    }


_TYPE_ORDER = ("world", "experience", "observation")


def _by_type(types: Any) -> dict[str, int]:
    """Counts per fact type in a fixed order (world, experience, observation, then any other by name), not in the
    order retrieval happened to return them: facts and the observations restating them tie in score, so that order
    varies from run to run."""
    counts = Counter(types)
    rank = {t: i for i, t in enumerate(_TYPE_ORDER)}
    return {t: counts[t] for t in sorted(counts, key=lambda t: (rank.get(t, len(rank)), t))}
