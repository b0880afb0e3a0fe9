-- Mental-model history versions are numbered when written: a row keeps the per-model number of the content it
-- holds (0 = the empty state a model starts from, when its oldest version row replaced nothing; failure records
-- NULL), so trimming the oldest rows under the history cap never renumbers the rows kept. The backfill gives every
-- existing version row the number it was shown with until now: its position among the model's version rows kept,
-- oldest first.
ALTER TABLE mental_model_history ADD COLUMN version INTEGER;
UPDATE mental_model_history SET version = n.v FROM (
    SELECT id, ROW_NUMBER() OVER w - 1
        + CASE WHEN COALESCE(FIRST_VALUE(json_extract(content, '$.previous_content')) OVER w, '') = '' THEN 0 ELSE 1 END
        AS v
    FROM mental_model_history
    WHERE json_type(content, '$.previous_content') IS NOT NULL
      AND json_extract(content, '$.kind') IS NOT 'refresh_failed'
    WINDOW w AS (PARTITION BY bank_id, mental_model_id ORDER BY changed_at, id)
) AS n WHERE n.id = mental_model_history.id;

-- Observation history: the state an observation had before each consolidation change (its text and the facts it
-- was built from), newest kept per observation under a cap; the rows go with the observation.
CREATE TABLE observation_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bank_id TEXT NOT NULL,
    observation_id TEXT NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
    previous_text TEXT NOT NULL,
    previous_source_memory_ids TEXT NOT NULL DEFAULT '[]',   -- JSON array of fact ids
    changed_at TEXT NOT NULL
);
CREATE INDEX idx_observation_history ON observation_history(observation_id, changed_at DESC, id DESC);
