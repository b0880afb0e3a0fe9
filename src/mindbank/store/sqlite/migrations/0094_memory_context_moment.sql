-- Recall's neighbour expansion looks up, for a hit, the memories said just before and after it in the same context
-- (a conversation session): an index on the bank, the context and the memory's moment (when it happened, else when
-- it was said) answers each lookup as one short range scan.
CREATE INDEX idx_memory_units_context_moment ON memory_units(bank_id, context, COALESCE(occurred_start, mentioned_at));
