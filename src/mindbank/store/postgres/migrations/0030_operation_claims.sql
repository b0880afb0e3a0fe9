-- Exactly-once operations (an operation's effects commit once, whoever ran it): every claim gets a fresh claim_token; a
-- worker renews its lease and commits its writes, its progress and the operation's end only while the row still carries
-- its token (a fence: a worker that lost its lease cannot commit). progress is the checkpoint a resumed operation
-- continues from (e.g. how far a large retain has come), written in the same transaction as the work it records.
-- Mirrors the SQLite migration of the same number.

ALTER TABLE operations ADD COLUMN claim_token text;
ALTER TABLE operations ADD COLUMN progress jsonb;
-- the fair claim counts live claims per bank and per operation type
CREATE INDEX idx_operations_running ON operations(bank_id, operation_type) WHERE status = 'processing';
-- at most one running consolidation per bank (two would both fold the same facts into observations), even when
-- claimers race past each other's uncommitted claims: the loser of the race gets a unique violation and retries
CREATE UNIQUE INDEX uq_operations_one_consolidation_per_bank ON operations(bank_id)
    WHERE status = 'processing' AND operation_type = 'consolidation';
