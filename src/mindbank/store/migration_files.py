"""The schema migrations a backend ships: numbered ``NNNN_name.sql`` files in its ``migrations`` folder.

Both backends number a change alike (the same change lands under the same number in both); each applies its own
files in its own way (``store/<backend>/migrate.py``).
"""

from __future__ import annotations

import re
from importlib import resources

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def shipped_migrations(package: str) -> list[tuple[int, str, str]]:
    """The migrations in ``package``'s ``migrations`` folder as ``(version, filename, sql)``, ascending; files not
    named ``NNNN_name.sql`` are ignored."""
    folder = resources.files(package) / "migrations"
    found = []
    for entry in folder.iterdir():
        m = _NAME.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)
