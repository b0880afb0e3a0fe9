"""Bank transfer: writing archives from store snapshots (:mod:`.writer`), reading and checking them
(:mod:`.reader`), and planning an all-or-nothing import (:mod:`.importer`)."""
