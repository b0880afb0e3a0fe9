"""The knowledge-base tree: folders and pages, and the rules a tree keeps (reference facts "Knowledge pages").

A page is a mental model placed in the tree (its node names the model); a folder holds folders and pages. Rules:
a name is non-blank and unique among its siblings; a page holds nothing (a node moved or created under a page is a
422); a node cannot move under itself or its own descendants (a cycle, 422); an unknown parent is a 404. Deleting a
folder deletes its whole subtree, the pages' mental models included, as the reference does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Final, Literal

from pydantic import ValidationError

from mindbank.domain.records import MentalModel
from mindbank.domain.trigger import default_trigger, merge_trigger
from mindbank.errors import InvalidInputError, NotFoundError

NodeKind = Literal["folder", "page"]
MAX_NAME_LENGTH = 256

# The reference's page defaults (memory_engine.KNOWLEDGE_PAGE_DEFAULT_TRIGGER, max_tokens 4096): a page is built from
# observations, edited in delta mode and refreshed after each consolidation. A bank overrides the trigger with its
# ``knowledge_page_default_trigger`` setting; a create request's trigger is merged over whichever applies.
PAGE_DEFAULT_TRIGGER: Final[Mapping[str, Any]] = {
    "mode": "delta",
    "fact_types": ["observation"],
    "exclude_mental_models": True,
    "refresh_after_consolidation": True,
}
PAGE_DEFAULT_MAX_TOKENS: Final = 4096


def page_default_trigger(override: Mapping[str, Any] | None) -> dict[str, Any]:
    """The stored trigger a new page starts from: ``override`` (a bank's or the environment's
    ``knowledge_page_default_trigger``, any trigger fields over the all-defaults trigger) or
    :data:`PAGE_DEFAULT_TRIGGER`. Raises ``ValueError`` naming the rule an override breaks."""
    try:
        return merge_trigger(default_trigger(), dict(PAGE_DEFAULT_TRIGGER if override is None else override))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{where}: {err['msg']}" if where else str(err["msg"])) from exc


class Unset(Enum):
    """The type of :data:`UNSET`: "not given", where ``None`` is a meaningful value (``parent_id=None`` = root)."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET


@dataclass(frozen=True, slots=True)
class KnowledgeNode:
    """One node of a bank's knowledge base. ``mental_model_id`` is set for pages only; ``parent_id`` None = root."""

    id: str
    bank_id: str
    kind: NodeKind
    name: str
    parent_id: str | None
    mental_model_id: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class KnowledgeTree:
    """A bank's knowledge base as read for display: its nodes (any order) and the pages' mental models by id, each
    with ``is_stale`` set by the staleness rule."""

    nodes: list[KnowledgeNode]
    models: dict[str, MentalModel]


@dataclass(frozen=True, slots=True)
class Removed:
    """What deleting a node took with it: folders and pages (each page with its mental model)."""

    folders: int
    pages: int


def check_name(name: str, field: str = "name") -> str:
    """A node name, stripped. Raises :class:`InvalidInputError` for a blank name or one over 256 characters."""
    cleaned = name.strip()
    if not cleaned:
        raise InvalidInputError(field, "must not be blank")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidInputError(field, f"must be at most {MAX_NAME_LENGTH} characters")
    return cleaned


def check_parent(parent_id: str, chain: Sequence[KnowledgeNode]) -> None:
    """Whether a node may be placed under ``parent_id``, given ``chain``: the parent and its ancestors, parent
    first (empty when the parent does not exist). Raises :class:`NotFoundError` for an unknown parent and
    :class:`InvalidInputError` when the parent is a page."""
    if not chain:
        raise NotFoundError(f"Parent folder '{parent_id}' not found")
    if chain[0].kind == "page":
        raise InvalidInputError("parent_id", f"'{parent_id}' is a page; only folders hold other nodes")


def check_move(node_id: str, parent_id: str, chain: Sequence[KnowledgeNode]) -> None:
    """:func:`check_parent`, and the node must not move under itself or one of its descendants (that would make a
    cycle: :class:`InvalidInputError` naming ``parent_id``)."""
    check_parent(parent_id, chain)
    if any(n.id == node_id for n in chain):
        raise InvalidInputError("parent_id", "a node cannot move under itself or one of its own descendants")


def ordered(nodes: Iterable[KnowledgeNode]) -> list[KnowledgeNode]:
    """Siblings in display order: folders first, then by name (case-insensitive), then id (deterministic on every
    backend, whatever its collation)."""
    return sorted(nodes, key=lambda n: (n.kind != "folder", n.name.casefold(), n.name, n.id))


def children_of(nodes: Iterable[KnowledgeNode]) -> dict[str | None, list[KnowledgeNode]]:
    """Each parent id (None: the root) mapped to its children in display order."""
    out: dict[str | None, list[KnowledgeNode]] = {}
    for node in nodes:
        out.setdefault(node.parent_id, []).append(node)
    return {parent: ordered(kids) for parent, kids in out.items()}


def walk(nodes: Iterable[KnowledgeNode]) -> list[tuple[KnowledgeNode, tuple[KnowledgeNode, ...]]]:
    """Every node reachable from the root in display order (depth first), each with its ancestors (root first)."""
    kids = children_of(nodes)
    out: list[tuple[KnowledgeNode, tuple[KnowledgeNode, ...]]] = []

    def visit(parent: str | None, path: tuple[KnowledgeNode, ...]) -> None:
        for node in kids.get(parent, []):
            out.append((node, path))
            visit(node.id, (*path, node))

    visit(None, ())
    return out


def kept_nodes(nodes: Sequence[KnowledgeNode], matching_pages: set[str] | None) -> list[KnowledgeNode]:
    """The nodes a filtered tree shows: every node when ``matching_pages`` is None (no filter); otherwise the
    pages whose id is in it and the folders on the path to one of them (the reference's tag-filtered tree)."""
    if matching_pages is None:
        return list(nodes)
    by_id = {n.id: n for n in nodes}
    keep: set[str] = set()
    for page_id in matching_pages:
        node = by_id.get(page_id)
        while node is not None and node.id not in keep:
            keep.add(node.id)
            node = by_id.get(node.parent_id) if node.parent_id else None
    return [n for n in nodes if n.id in keep]
