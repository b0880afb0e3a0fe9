-- Refresh governance: each model's governance record (consecutive failures, carried-over facts, re-anchor
-- and empty-scope marks, the last automatic refusal; domain/governance.py), and the tokens refreshes spent per model
-- and UTC day, which daily budgets are checked against and the API sums per model and per bank. Spend rows outlive
-- a deleted model (the tokens were spent: they still count against the bank's budget) and go with the bank.
-- Mirrors the SQLite migration of the same number.

ALTER TABLE mental_models ADD COLUMN refresh_state jsonb NOT NULL DEFAULT '{}'::jsonb;

CREATE TABLE refresh_spend (
    bank_id text NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    mental_model_id text NOT NULL,
    day text NOT NULL,                     -- UTC day, YYYY-MM-DD
    refreshes integer NOT NULL DEFAULT 0,  -- refreshes recorded (completed or failed)
    llm_calls integer NOT NULL DEFAULT 0,  -- LLM attempts, failed ones included
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (bank_id, day, mental_model_id)
);
CREATE INDEX idx_refresh_spend_model ON refresh_spend(bank_id, mental_model_id, day);
