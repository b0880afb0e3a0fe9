-- Exactly-once operations (an operation's effects commit once, whoever ran it): every claim gets a fresh claim_token; a
-- worker renews its lease and commits its writes, its progress and the operation's end only while the row still carries
-- its token (a fence: a worker that lost its lease cannot commit). progress is the checkpoint a resumed operation
-- continues from (JSON; e.g. how far a large retain has come), written in the same transaction as the work it records.

ALTER TABLE operations ADD COLUMN claim_token TEXT;
ALTER TABLE operations ADD COLUMN progress TEXT;
-- the fair claim counts live claims per bank and per operation type
CREATE INDEX idx_operations_running ON operations(status, bank_id, operation_type);
