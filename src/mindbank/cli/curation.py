"""Client commands over curation, in the ``mm`` group (docs/curation.md): ``mm blocks`` (the document by block),
``mm edit-block``, ``mm add-block``, ``mm remove-block``, ``mm pin`` / ``mm unpin`` (a block or ``--section``), and
review before publish: ``mm draft`` (with its diff), ``mm approve``, ``mm reject``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mindbank.cli.common import Subparsers, UsageError, bank, client_command
from mindbank.cli.output import Output

if TYPE_CHECKING:
    from mindbank.client import Client
    from mindbank.client.curation_models import MentalModelBlocks


def register(mm_sub: Subparsers) -> None:
    """Add the curation commands to the ``mm`` group."""
    p = client_command(mm_sub, "blocks", _blocks, help="the document by block: ids, origin, pins")
    p.add_argument("id")

    p = client_command(mm_sub, "edit-block", _edit, help="replace a block's text by hand (kept by refreshes)")
    p.add_argument("id")
    p.add_argument("block_id")
    p.add_argument("--text", required=True, help="the block's new markdown (one paragraph, list or table)")

    p = client_command(mm_sub, "add-block", _add, help="add a person-written block to a section or a new one")
    p.add_argument("id")
    p.add_argument("--text", required=True)
    p.add_argument("--section", default=None, help="the section id to add to")
    p.add_argument("--after", default=None, help="the block id to add after (default: the section's end)")
    p.add_argument("--heading", default=None, help="a new section's heading (instead of --section)")

    p = client_command(mm_sub, "remove-block", _remove, help="remove a block by hand")
    p.add_argument("id")
    p.add_argument("block_id")

    for name, pinned in (("pin", True), ("unpin", False)):
        verb = "pin" if pinned else "unpin"
        p = client_command(mm_sub, name, _pin, help=f"{verb} a block, or a whole section with --section")
        p.add_argument("id")
        p.add_argument("block_id", nargs="?", default=None)
        p.add_argument("--section", default=None, help=f"{verb} this section instead of a block")
        p.set_defaults(pinned=pinned)

    p = client_command(mm_sub, "draft", _draft, help="the draft waiting for review, with its diff")
    p.add_argument("id")

    p = client_command(mm_sub, "approve", _approve, help="publish the waiting draft")
    p.add_argument("id")
    p.add_argument("--draft-id", default=None, help="publish only this draft (refused if a newer one replaced it)")

    p = client_command(mm_sub, "reject", _reject, help="drop the waiting draft; the model stays as it was")
    p.add_argument("id")
    p.add_argument("--reason", default=None)
    p.add_argument("--draft-id", default=None, help="reject only this draft")


def _lines(view: MentalModelBlocks) -> Iterator[str]:
    yield f"{view.document_tokens} of {view.max_tokens} tokens; fixed blocks: {len(view.fixed_block_ids)}"
    for section in view.sections:
        yield f"§ {section.id}  {section.heading or '(preamble)'}" + ("  [pinned]" if section.pinned else "")
        for block in section.blocks:
            marks = [m for m in ("pinned" if block.pinned else "", _origin(block.origin, block.author)) if m]
            first = next((line for line in block.text.splitlines() if line.strip()), "")
            yield f"  {block.id}  {first[:80]}" + (f"  [{', '.join(marks)}]" if marks else "")


def _origin(origin: str | None, author: str | None) -> str:
    return f"by {author or 'a person'}" if origin == "person" else ""


def _blocks(client: Client, args: argparse.Namespace, out: Output) -> int:
    view = client.get_mental_model_blocks(bank(args), args.id)
    return out.report(view, _lines(view))


def _edit(client: Client, args: argparse.Namespace, out: Output) -> int:
    view = client.edit_mental_model_block(bank(args), args.id, args.block_id, text=args.text)
    return out.done(view, f"block {args.block_id} of mental model {args.id} edited (origin: person)")


def _add(client: Client, args: argparse.Namespace, out: Output) -> int:
    if (args.section is None) == (args.heading is None):
        raise UsageError("give either --section or --heading")
    view = client.add_mental_model_block(
        bank(args), args.id, args.text, section_id=args.section, after_block_id=args.after, heading=args.heading
    )
    return out.done(view, f"block {view.block_id} added to mental model {args.id}")


def _remove(client: Client, args: argparse.Namespace, out: Output) -> int:
    view = client.delete_mental_model_block(bank(args), args.id, args.block_id)
    return out.done(view, f"block {args.block_id} removed from mental model {args.id}")


def _pin(client: Client, args: argparse.Namespace, out: Output) -> int:
    verb = "pinned" if args.pinned else "unpinned"
    if (args.block_id is None) == (args.section is None):
        raise UsageError("give either a block id or --section")
    if args.section is not None:
        view = client.pin_mental_model_section(bank(args), args.id, args.section, pinned=args.pinned)
        return out.done(view, f"section {args.section} of mental model {args.id} {verb}")
    view = client.edit_mental_model_block(bank(args), args.id, args.block_id, pinned=args.pinned)
    return out.done(view, f"block {args.block_id} of mental model {args.id} {verb}")


def _draft(client: Client, args: argparse.Namespace, out: Output) -> int:
    draft = client.get_mental_model_draft(bank(args), args.id)
    lines = [f"draft {draft.draft_id} ({draft.effective_mode}, {draft.created_at})", "", draft.diff or "(no change)"]
    return out.report(draft, lines)


def _approve(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.approve_mental_model_draft(bank(args), args.id, draft_id=args.draft_id)
    return out.done(model, f"draft of mental model {model.id} approved and published")


def _reject(client: Client, args: argparse.Namespace, out: Output) -> int:
    model = client.reject_mental_model_draft(bank(args), args.id, reason=args.reason, draft_id=args.draft_id)
    return out.done(model, f"draft of mental model {model.id} rejected; the published content is unchanged")
