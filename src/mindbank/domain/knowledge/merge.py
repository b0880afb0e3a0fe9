"""Placing an imported knowledge-base tree into a bank's tree (bank transfer: restore, clone and merge).

A restore or a clone writes into a new bank, whose tree is empty: every node lands as it was (same id, name and
parent). A merge folds the archive's tree into the bank's, keeping the tree's rules (a name is unique among its
siblings; a page holds nothing) without moving or renaming anything the bank already has:

* a folder the bank already has — the same id, or the same name among the same siblings — is that folder: the
  archive's folder is not written again and its contents go into the bank's (where it is, as the bank names it);
* any other node whose name a sibling already holds (a page, or a folder where the bank has a page of that name)
  is written under the first free name ``<name> (2)``, ``<name> (3)``… — a page's mental model is renamed with it,
  since a page's name is its model's;
* a node id the bank already uses is replaced by a fresh one (a node id is a handle; a page's identity is its
  mental model, and a page whose model the bank already has is left out before this: the bank keeps its own).

Pure: the caller reads the bank's tree and writes the result in one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from mindbank.domain.knowledge.tree import MAX_NAME_LENGTH, KnowledgeNode


def new_node_id() -> str:
    """A fresh knowledge node id (``kb-`` and 20 hex digits)."""
    return f"kb-{uuid.uuid4().hex[:20]}"


@dataclass(slots=True)
class TreeMerge:
    """What :func:`merge_tree` decided: the nodes to insert (parents first), the pages renamed (``{mental model
    id: new name}``), and how many folders were merged into the bank's, nodes renamed and node ids replaced."""

    nodes: list[KnowledgeNode] = field(default_factory=list)
    renamed_pages: dict[str, str] = field(default_factory=dict)
    folders_merged: int = 0
    nodes_renamed: int = 0
    ids_replaced: int = 0


def free_name(name: str, taken: Collection[str]) -> str:
    """``name`` with the first suffix `` (n)`` (n ≥ 2) that no name in ``taken`` has, the name cut so the result
    stays within 256 characters."""
    used = set(taken)
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = name[: MAX_NAME_LENGTH - len(suffix)].rstrip() + suffix
        if candidate not in used:
            return candidate
        n += 1


def merge_tree(
    existing: Sequence[KnowledgeNode],
    incoming: Sequence[KnowledgeNode],
    *,
    new_id: Callable[[], str] = new_node_id,
) -> TreeMerge:
    """Place ``incoming`` (the archive's nodes, already in the target bank, a parent before its children) into a
    tree holding ``existing`` (the module docstring's rules). Raises ``ValueError`` when an incoming node's parent
    is not an earlier incoming folder (the archive reader refuses such an archive first)."""
    out = TreeMerge()
    bank_folders = {n.id for n in existing if n.kind == "folder"}
    taken_ids = {n.id for n in existing}
    siblings: dict[str | None, dict[str, KnowledgeNode]] = {}
    for node in existing:
        siblings.setdefault(node.parent_id, {})[node.name] = node
    placed: dict[str, str] = {}  # incoming folder id -> the target folder holding its contents
    for node in incoming:
        if node.parent_id is not None and node.parent_id not in placed:
            raise ValueError(f"knowledge node {node.id!r}: parent {node.parent_id!r} is not an earlier folder")
        parent = None if node.parent_id is None else placed[node.parent_id]
        names = siblings.setdefault(parent, {})
        if node.kind == "folder":
            clash = names.get(node.name)
            same = node.id if node.id in bank_folders else (clash.id if clash and clash.kind == "folder" else None)
            if same is not None:
                placed[node.id] = same
                out.folders_merged += 1
                continue
        name = node.name
        if name in names:
            name = free_name(name, names.keys())
            out.nodes_renamed += 1
            if node.mental_model_id is not None:
                out.renamed_pages[node.mental_model_id] = name
        node_id = node.id
        if node_id in taken_ids:
            node_id = new_id()
            while node_id in taken_ids:  # pragma: no cover - a fresh id is random
                node_id = new_id()
            out.ids_replaced += 1
        written = replace(node, id=node_id, name=name, parent_id=parent)
        taken_ids.add(node_id)
        names[name] = written
        if node.kind == "folder":
            placed[node.id] = node_id
        out.nodes.append(written)
    return out
