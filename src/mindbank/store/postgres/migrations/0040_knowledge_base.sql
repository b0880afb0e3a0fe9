-- The knowledge base: a tree of folders and pages per bank, a page being a mental model placed in the tree (the
-- reference's knowledge_pages). Sibling names are unique; deleting a page's mental model deletes its node, and
-- deleting a folder cascades to the nodes under it (the service deletes the pages' mental models first).

CREATE TABLE knowledge_nodes (
    bank_id text NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('folder', 'page')),
    name text NOT NULL,
    parent_id text,
    mental_model_id text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (bank_id, id),
    FOREIGN KEY (bank_id, parent_id) REFERENCES knowledge_nodes(bank_id, id) ON DELETE CASCADE,
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE,
    CHECK ((kind = 'page') = (mental_model_id IS NOT NULL))
);
CREATE UNIQUE INDEX idx_knowledge_nodes_sibling_name ON knowledge_nodes(bank_id, COALESCE(parent_id, ''), name);
CREATE UNIQUE INDEX idx_knowledge_nodes_model ON knowledge_nodes(bank_id, mental_model_id);
CREATE INDEX idx_knowledge_nodes_parent ON knowledge_nodes(bank_id, parent_id);

-- Page search's vector arm: one embedding per page of the text it was computed from (text_hash), refreshed lazily
-- by the search when the page's name, question or content changed. Pages are few per bank: the search scores them
-- all in process, so the vector is stored as float32 bytes, not as an indexed pgvector column.
CREATE TABLE knowledge_page_vectors (
    bank_id text NOT NULL,
    mental_model_id text NOT NULL,
    text_hash text NOT NULL,
    embedding bytea NOT NULL,                             -- float32 little-endian, L2-normalised
    PRIMARY KEY (bank_id, mental_model_id),
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE
);
