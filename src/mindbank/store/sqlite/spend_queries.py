"""Refresh spend: per-model daily rows, the bank's totals and the reads of the refresh governance rules."""

from __future__ import annotations

SPEND_Q: dict[str, str] = {
    "add_refresh_spend": (
        "INSERT INTO refresh_spend (bank_id, mental_model_id, day, refreshes, llm_calls, input_tokens, output_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (bank_id, day, mental_model_id) DO UPDATE SET "
        "refreshes = refresh_spend.refreshes + excluded.refreshes, "
        "llm_calls = refresh_spend.llm_calls + excluded.llm_calls, "
        "input_tokens = refresh_spend.input_tokens + excluded.input_tokens, "
        "output_tokens = refresh_spend.output_tokens + excluded.output_tokens"
    ),
    # spend summed per model of a list, split into one UTC day (``today``: the first parameter) and the other days
    "refresh_spend_models": (
        "SELECT mental_model_id, day = ? AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, NULL AS bank_config "
        "FROM refresh_spend WHERE bank_id = ? AND mental_model_id IN ({marks}) GROUP BY 1, 2"
    ),
    # a last row carrying the bank's overrides, UNION ALL-ed after refresh_spend_models (refresh_status_reads)
    "bank_config_row": "SELECT NULL, NULL, NULL, NULL, NULL, NULL, config FROM banks WHERE bank_id = ?",
    # the same for the whole bank (a deleted model's spend still counts)
    "refresh_spend_bank": (
        "SELECT day = ? AS today, SUM(refreshes) AS refreshes, SUM(llm_calls) AS llm_calls, "
        "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens "
        "FROM refresh_spend WHERE bank_id = ? GROUP BY 1"
    ),
    # models whose last refreshes failed (the bank-level circuit breaker counts them)
    "count_failing_models": (
        "SELECT COUNT(*) AS n FROM mental_models "
        "WHERE bank_id = ? AND CAST(json_extract(refresh_state, '$.failures') AS INTEGER) > 0"
    ),
}
