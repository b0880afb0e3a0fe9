-- The knowledge base: a tree of folders and pages per bank, a page being a mental model placed in the tree (the
-- reference's knowledge_pages). Sibling names are unique; deleting a page's mental model deletes its node, and
-- deleting a folder cascades to the nodes under it (the service deletes the pages' mental models first).

CREATE TABLE knowledge_nodes (
    bank_id TEXT NOT NULL REFERENCES banks(bank_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('folder', 'page')),
    name TEXT NOT NULL,
    parent_id TEXT,
    mental_model_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id),
    FOREIGN KEY (bank_id, parent_id) REFERENCES knowledge_nodes(bank_id, id) ON DELETE CASCADE,
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE,
    CHECK ((kind = 'page') = (mental_model_id IS NOT NULL))
);
CREATE UNIQUE INDEX idx_knowledge_nodes_sibling_name ON knowledge_nodes(bank_id, COALESCE(parent_id, ''), name);
CREATE UNIQUE INDEX idx_knowledge_nodes_model ON knowledge_nodes(bank_id, mental_model_id);
CREATE INDEX idx_knowledge_nodes_parent ON knowledge_nodes(bank_id, parent_id);

-- Page search's vector arm: one embedding per page of the text it was computed from (text_hash), refreshed lazily
-- by the search when the page's name, question or content changed.
CREATE TABLE knowledge_page_vectors (
    bank_id TEXT NOT NULL,
    mental_model_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    embedding BLOB NOT NULL,               -- float32 little-endian, L2-normalised
    PRIMARY KEY (bank_id, mental_model_id),
    FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models(bank_id, id) ON DELETE CASCADE
);
