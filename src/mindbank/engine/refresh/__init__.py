"""The mental-model refresh feature: plan (``runner.py``), result shapes (``plan.py``), the write (``persist.py``),
the relevance gate, gone-citation retraction, source chunks, the dry run's result, the staleness rule and the
automatic-trigger timing rules. Spec: "Refresh a Mental Model" and the sections it links."""
