"""Client commands over the knowledge base: ``kb tree|mkdir|page|show|update|delete|search|export``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from mindbank.cli.common import (
    Subparsers,
    UsageError,
    add_wait_flags,
    bank,
    client_command,
    command_group,
    json_arg,
    wait_and_report,
)
from mindbank.cli.names import accept_names
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client, KnowledgeNode, KnowledgeSearchResponse

_MATCH = ["any", "all", "any_strict", "all_strict", "exact"]
PARENT = {"parent": "folder"}  # --parent takes a folder's id or its unique name


def register(sub: Subparsers) -> None:
    """Add the ``kb`` command group to the ``mindbank`` command."""
    kb_sub = command_group(sub, "kb", help="knowledge base: folders and pages (pages are mental models)")

    p = client_command(kb_sub, "tree", _tree, help="show the tree of folders and pages, stale pages marked")
    p.add_argument("--tag", action="append", default=None, help="only pages with this tag (repeatable)")
    p.add_argument("--tags-match", default=None, choices=_MATCH)

    p = client_command(kb_sub, "mkdir", _mkdir, help="create a folder", names=PARENT)
    p.add_argument("name")
    p.add_argument("--parent", default=None, help="parent folder, id or name (default: the root)")

    p = client_command(kb_sub, "page", _page, help="create a page (its first refresh is queued)", names=PARENT)
    p.add_argument("--name", required=True)
    p.add_argument("--query", required=True, help="the question the page answers (source_query)")
    p.add_argument("--parent", default=None, help="parent folder, id or name (default: the root)")
    p.add_argument("--tag", action="append", default=None, help="tag scoping its memories (repeatable)")
    p.add_argument("--max-tokens", type=int, default=None, help="document size target, 256-8192 (default 4096)")
    p.add_argument("--trigger", default=None, help="trigger fields as JSON, merged over the page default")
    add_wait_flags(p)

    client_command(kb_sub, "show", _show, help="print a page as markdown").add_argument("page_id")

    p = client_command(
        kb_sub, "update", _update, help="rename or move a node, or change a page's settings", names=PARENT
    )
    p.add_argument("node_id")
    p.add_argument("--name", default=None)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--parent", default=None, help="move into this folder (id or name)")
    where.add_argument("--root", action="store_true", help="move to the root")
    p.add_argument("--query", default=None, help="pages: a new question (queues a rebuild)")
    p.add_argument("--tag", action="append", default=None, help="pages: replace the tags (repeatable)")
    p.add_argument("--no-tags", action="store_true", help="pages: remove every tag")
    p.add_argument("--max-tokens", type=int, default=None)
    p.add_argument("--trigger", default=None, help="pages: trigger fields as JSON, merged over the stored ones")

    p = client_command(kb_sub, "delete", _delete, help="delete a page, or a folder with everything under it")
    p.add_argument("node_id")

    p = client_command(kb_sub, "search", _search, help="hybrid search over pages")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=None, help="at most this many results (1-50, default 10)")
    p.add_argument("--tag", action="append", default=None)
    p.add_argument("--tags-match", default=None, choices=_MATCH)

    p = client_command(kb_sub, "export", _export, help="export the knowledge base as markdown files")
    p.add_argument("--out", default=None, help="write the files under this directory (default: list them)")
    accept_names(kb_sub, {"page_id": "page", "node_id": "node"})


def _tree(client: Client, args: argparse.Namespace, out: Output) -> int:
    tree = client.get_knowledge_base_tree(bank(args), tags=args.tag, tags_match=args.tags_match)
    return out.report(tree, _tree_lines(tree.roots, 0) if tree.roots else ["(empty knowledge base)"])


def _tree_lines(nodes: list[KnowledgeNode], depth: int) -> Iterator[str]:
    for node in nodes:
        indent = "  " * depth
        if node.kind == "folder":
            yield f"{indent}{node.name}/  [{node.id}]"
            yield from _tree_lines(node.children, depth + 1)
        else:
            state = "?" if node.is_stale is None else ("stale" if node.is_stale else "fresh")
            yield f"{indent}{node.name}  ({state}, refreshed {when(node.timestamp)})  [{node.id}]"


def _mkdir(client: Client, args: argparse.Namespace, out: Output) -> int:
    node = client.create_knowledge_folder(bank(args), args.name, parent_id=args.parent)
    return out.done(node, f"created folder {node.name!r}: {node.id}", markup=False)


def _page(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    created = client.create_knowledge_page(
        bank_id, args.name, args.query, parent_id=args.parent, tags=args.tag, max_tokens=args.max_tokens,
        trigger=json_arg(args.trigger, "--trigger"),
    )  # fmt: skip
    if args.wait:
        if not out.as_json:
            out.console.print(f"created page {created.page_id} (mental model {created.mental_model_id})")
        return wait_and_report(client, bank_id, created.operation_id or "", out, args.timeout)
    out.done(created, f"created page {created.page_id} (mental model {created.mental_model_id}); first refresh: "
             f"operation {created.operation_id}")  # fmt: skip
    if not out.as_json:
        for warning in created.warnings:
            out.console.print(f"warning: {warning}", style="yellow", markup=False)
    return 0


def _show(client: Client, args: argparse.Namespace, out: Output) -> int:
    page = client.get_knowledge_page(bank(args), args.page_id)
    return out.report(page, [page.markdown])


def _update(client: Client, args: argparse.Namespace, out: Output) -> int:
    tags: list[str] | None = [] if args.no_tags else args.tag
    node = client.update_knowledge_node(
        bank(args), args.node_id, name=args.name, parent_id=args.parent, move_to_root=args.root,
        source_query=args.query, tags=tags, max_tokens=args.max_tokens, trigger=json_arg(args.trigger, "--trigger"),
    )  # fmt: skip
    where = "the root" if node.parent_id is None else f"folder {node.parent_id}"
    return out.done(node, f"updated {node.kind} {node.name!r} ({node.id}), in {where}", markup=False)


def _delete(client: Client, args: argparse.Namespace, out: Output) -> int:
    result = client.delete_knowledge_node(bank(args), args.node_id)
    message = f"deleted {args.node_id}: {result.deleted_folders} folder(s), {result.deleted_pages} page(s)"
    return out.done(result, message)


def _search(client: Client, args: argparse.Namespace, out: Output) -> int:
    found = client.search_knowledge_base(
        bank(args), args.query, limit=args.limit, tags=args.tag, tags_match=args.tags_match
    )
    columns = ("page id", "name", "score", "snippet")
    return out.listing(found, columns, _hits(found), empty="no page matches", footer=f"{found.total} match(es)")


def _hits(found: KnowledgeSearchResponse) -> Iterator[list[str]]:
    for hit in found.results:
        yield [hit.id, hit.name, f"{hit.score:.3f}", hit.snippet[:80]]


def _export(client: Client, args: argparse.Namespace, out: Output) -> int:
    bundle = client.export_knowledge_base(bank(args))
    if args.out is None:
        return out.report(bundle, (f"{f.path}  ({len(f.content)} chars)" for f in bundle.files))
    root = Path(args.out).resolve()
    for file in bundle.files:
        target = (root / file.path).resolve()
        if root not in target.parents:  # a bundle path never leaves the directory it is written to
            raise UsageError(f"refusing to write {file.path!r} outside {root}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file.content, encoding="utf-8")
    return out.done(bundle, f"wrote {len(bundle.files)} file(s) under {root}", markup=False)
