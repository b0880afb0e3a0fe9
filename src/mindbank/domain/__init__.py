"""Pure rules with no I/O: tags, triggers, structured documents, records, time and text helpers."""
