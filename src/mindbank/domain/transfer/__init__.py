"""Bank transfer rules with no I/O: the archive format (:mod:`.archive`), id remapping (:mod:`.ids`) and bank
templates (:mod:`.template`)."""
