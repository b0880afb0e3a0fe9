"""Engine: retain, recall, staleness and the refresh pipeline, written against the Store and Embedder ports."""
