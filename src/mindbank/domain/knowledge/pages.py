"""Knowledge pages as markdown documents: the page document (YAML frontmatter + body), search snippets, and the
portable export bundle (``index.md``, one file per page under its folders' path, ``log.md``).

Pure functions of tree nodes and mental-model records. Frontmatter values are written as JSON scalars and flow
sequences, which YAML reads as the same strings and lists, so a name with a colon or a quote stays one value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from mindbank.domain.document import slugify
from mindbank.domain.knowledge.tree import KnowledgeNode, walk
from mindbank.domain.records import MentalModel
from mindbank.domain.timeutil import to_iso

DEFAULT_PAGE_TYPE = "knowledge-page"
EMPTY_NOTICE = "No content yet."
SNIPPET_CHARS = 280

_CITATION = re.compile(r"\s*\[mem:[A-Za-z0-9_-]+\]")
_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PageLogEntry:
    """One line of the export bundle's log: a page's history row (a replaced version, or a failed refresh)."""

    mental_model_id: str
    changed_at: datetime
    failed: bool
    outcome: str | None
    failure_reason: str | None


def page_type(tags: Iterable[str]) -> str:
    """A page's type: the ``<x>`` of its first ``type:<x>`` tag (sorted tags), else ``knowledge-page``."""
    for tag in sorted(tags):
        if tag.startswith("type:") and tag[5:].strip():
            return tag[5:].strip()
    return DEFAULT_PAGE_TYPE


def page_meta(node: KnowledgeNode, model: MentalModel) -> dict[str, object]:
    """What a page says about itself (its frontmatter, and the page endpoint's fields): ``id``, ``name``, ``type``,
    ``description`` (the source query), ``tags``, ``timestamp`` (last refresh) and ``mental_model_id``."""
    return {
        "id": node.id,
        "name": node.name,
        "type": page_type(model.tags),
        "description": model.source_query,
        "tags": list(model.tags),
        "timestamp": to_iso(model.last_refreshed_at),
        "mental_model_id": model.id,
    }


def page_markdown(node: KnowledgeNode, model: MentalModel, *, empty_notice: bool) -> str:
    """The page as one markdown document: frontmatter (:func:`page_meta`) and the body. An empty body reads "No
    content yet." when ``empty_notice`` (the page endpoint) and stays empty otherwise (the export bundle keeps the
    bare document)."""
    meta = page_meta(node, model)
    lines = ["---", *(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in meta.items()), "---", "", ""]
    body = model.content.strip()
    if not body and empty_notice:
        body = EMPTY_NOTICE
    return "\n".join(lines) + (body + "\n" if body else "")


@lru_cache(maxsize=4096)
def snippet(content: str, limit: int = SNIPPET_CHARS) -> str:
    """A page's opening text for a search hit: citations and heading marks removed, whitespace folded, cut at a
    word boundary near ``limit`` characters; "No content yet." for an empty page."""
    # only the opening is shown: clean a bounded prefix (a citation is under 60 characters), not the whole document
    text = " ".join(_HEADING.sub("", _CITATION.sub("", content[: limit * 4])).split())
    if not text:
        return EMPTY_NOTICE
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(" ,;:") + "…"


@lru_cache(maxsize=4096)
def _uncited(content: str) -> str:
    """``content`` without its ``[mem:<id>]`` citations (cached: search reads the same bodies again and again)."""
    return _CITATION.sub("", content)


def search_text(node: KnowledgeNode, model: MentalModel) -> str:
    """What page search's keyword arm reads: the page name, its question and its body without citations."""
    return "\n".join((node.name, model.source_query, _uncited(model.content)))


def vector_text(node: KnowledgeNode, model: MentalModel) -> str:
    """What page search's vector arm embeds: the name, the question and the opening of the body (about 80 tokens).
    A page's topic is in these; embedding whole documents would cost each page a full 256-token pass of the model
    (about 20 times a short text) for little gain, since the model truncates there anyway."""
    body = snippet(model.content) if model.content.strip() else ""
    return "\n".join(part for part in (node.name, model.source_query, body) if part)


def _unique(base: str, used: set[str]) -> str:
    name, n = base, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    used.add(name)
    return name


def bundle(
    nodes: Sequence[KnowledgeNode], models: Mapping[str, MentalModel], log: Sequence[PageLogEntry]
) -> list[tuple[str, str]]:
    """The export bundle as ``(path, markdown)`` pairs: ``index.md`` (the tree, linking every page), one file per
    page at ``<folder slug>/…/<page slug>.md`` (slugs de-duplicated within a folder), and ``log.md`` (every page's
    history, newest first). A page whose mental model is missing is left out."""
    dirs: dict[str | None, str] = {None: ""}
    used: dict[str, set[str]] = {}
    index = ["# Knowledge base", ""]
    files: list[tuple[str, str]] = []
    names: dict[str, str] = {}
    for node, path in walk(nodes):
        parent_dir = dirs.get(node.parent_id, "")
        taken = used.setdefault(parent_dir, set())
        indent = "  " * len(path)
        if node.kind == "folder":
            dirs[node.id] = parent_dir + _unique(slugify(node.name), taken) + "/"
            index.append(f"{indent}- {node.name}/")
            continue
        model = models.get(node.mental_model_id or "")
        if model is None:
            continue
        file = parent_dir + _unique(slugify(node.name), taken) + ".md"
        index.append(f"{indent}- [{node.name}]({file})")
        files.append((file, page_markdown(node, model, empty_notice=False)))
        names[model.id] = node.name
    if len(index) == 2:
        index.append("(empty)")
    lines = ["# Log", ""]
    for entry in sorted(log, key=lambda e: e.changed_at, reverse=True):
        what = f"refresh failed ({entry.failure_reason or entry.outcome or 'unknown'})" if entry.failed else "updated"
        lines.append(f"- {to_iso(entry.changed_at)} {names.get(entry.mental_model_id, entry.mental_model_id)}: {what}")
    if len(lines) == 2:
        lines.append("(no history yet)")
    return [("index.md", "\n".join(index) + "\n"), *files, ("log.md", "\n".join(lines) + "\n")]
