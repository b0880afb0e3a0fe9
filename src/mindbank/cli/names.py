"""Names where the command line takes ids: a bank, a mental model, a knowledge-base node (page or folder) or a
document may be given by its id or by its name.

The rule, the same for every kind: an exact id wins; otherwise the one item whose name equals the argument
(case-sensitive first, then ignoring case); two or more such items are an error listing them (exit 2) and none is
an unknown name (exit 1). A bank that matches nothing is passed on as typed (a retain creates it). A document's name
is the ``filename`` an upload records, or a ``name`` or ``title`` in its metadata.

A command declares which of its arguments to resolve with ``set_defaults(names={"id": "model"})``;
:func:`resolve_names` runs before the handler (``-b/--bank`` is always resolved).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mindbank.client import Client, KnowledgeNode

PAGE = 1000


class UnknownName(Exception):
    """No item has this id or name (exit status 1)."""


class AmbiguousName(Exception):
    """Two or more items have this name, or a name was given without a bank (exit status 2, a usage error)."""


def pick(kind: str, ref: str, items: Iterable[tuple[str, str | None]]) -> str | None:
    """The id ``ref`` names among ``(id, name)`` pairs: the id itself, else the one exact name, else the one name
    equal ignoring case; None when nothing matches. Raises :class:`AmbiguousName` when a name is ambiguous."""
    pairs = list(items)
    if any(i == ref for i, _ in pairs):
        return ref
    for fold in (False, True):  # the exact name first, then the name equal ignoring case
        found = [(i, n) for i, n in pairs if n is not None and (n.casefold() == ref.casefold() if fold else n == ref)]
        if len(found) == 1:
            return found[0][0]
        if found:
            listed = ", ".join(f"{i} ({n})" for i, n in sorted(found))
            raise AmbiguousName(f"{len(found)} {kind}s are named {ref!r}: {listed}; pass one of their ids")
    return None


def _paged(fetch: Callable[[int], tuple[list[tuple[str, str | None]], int]]) -> Iterator[tuple[str, str | None]]:
    offset = 0
    while True:
        items, total = fetch(offset)
        yield from items
        offset += len(items)
        if not items or offset >= total:
            return


def _nodes(nodes: list[KnowledgeNode]) -> Iterator[KnowledgeNode]:
    for node in nodes:
        yield node
        yield from _nodes(node.children)


def _models(client: Client, bank_id: str) -> Iterator[tuple[str, str | None]]:
    def fetch(offset: int) -> tuple[list[tuple[str, str | None]], int]:
        page = client.list_mental_models(bank_id, limit=PAGE, offset=offset)
        return [(m.id, m.name) for m in page.items], page.total

    return _paged(fetch)


def _documents(client: Client, bank_id: str) -> Iterator[tuple[str, str | None]]:
    def name(meta: dict[str, object] | None) -> str | None:
        value = next((meta[k] for k in ("filename", "name", "title") if meta and meta.get(k)), None)
        return None if value is None else str(value)

    def fetch(offset: int) -> tuple[list[tuple[str, str | None]], int]:
        page = client.list_documents(bank_id, limit=PAGE, offset=offset)
        return [(d.id, name(d.document_metadata)) for d in page.items], page.total

    return _paged(fetch)


def resolve(client: Client, kind: str, bank_id: str, ref: str) -> str:
    """The id of the ``kind`` (``model``, ``page``, ``folder``, ``node`` or ``document``) that ``ref`` names in
    ``bank_id``.
    Raises :class:`AmbiguousName` and :class:`UnknownName`."""
    from mindbank.client import MindBankHTTPError

    if kind in ("model", "document"):  # an exact id wins: one read answers the usual case
        try:
            if kind == "model":
                client.get_mental_model(bank_id, ref, detail="metadata")
            else:
                client.get_document(bank_id, ref)
            return ref
        except MindBankHTTPError as exc:
            if exc.status_code != 404:
                raise
    if kind == "model":
        found = pick("mental model", ref, _models(client, bank_id))
    elif kind in ("page", "folder", "node"):
        nodes = list(_nodes(client.get_knowledge_base_tree(bank_id).roots))
        if any(n.id == ref for n in nodes):  # an exact id wins whatever its kind: the server says what is wrong
            return ref
        found = pick(kind, ref, ((n.id, n.name) for n in nodes if kind in ("node", n.kind)))
    elif kind == "document":
        found = pick("document", ref, _documents(client, bank_id))
    else:  # pragma: no cover - a programming error in a command's declaration
        raise ValueError(kind)
    if found is None:
        what = "mental model" if kind == "model" else kind
        raise UnknownName(f"no {what} with the id or name {ref!r} in bank {bank_id}")
    return found


def resolve_bank(client: Client, ref: str) -> str:
    """The id of the bank ``ref`` names (an id, or a bank's name); ``ref`` itself when no bank matches."""
    return pick("bank", ref, ((b.bank_id, b.name) for b in client.list_banks().banks)) or ref


def resolve_names(client: Client, args: argparse.Namespace) -> None:
    """Replace, in ``args``, the bank (``-b`` or ``MINDBANK_BANK``) and the arguments the command declared in
    ``names`` by the ids they name. Raises :class:`AmbiguousName` and :class:`UnknownName`."""
    declared: dict[str, str] = getattr(args, "names", None) or {}
    ref = getattr(args, "bank", None) or os.environ.get("MINDBANK_BANK")
    if ref:
        args.bank = resolve_bank(client, ref)
    for attr, kind in declared.items():
        value = getattr(args, attr, None)
        if value:
            if not args.bank:
                raise AmbiguousName("a bank is required: pass -b/--bank or set MINDBANK_BANK")
            setattr(args, attr, resolve(client, kind, args.bank, value))


def accept_names(group: argparse._SubParsersAction[argparse.ArgumentParser], kinds: dict[str, str]) -> None:
    """Let every command of ``group`` take a name wherever it has one of the positional arguments in ``kinds``
    (argument name → kind of id: ``model``, ``page``, ``node``, ``document``); options (``create --id``) keep ids."""
    for parser in group.choices.values():
        dests = {a.dest for a in parser._actions if not a.option_strings}
        found = {dest: kind for dest, kind in kinds.items() if dest in dests}
        if found:
            parser.set_defaults(names={**(parser.get_default("names") or {}), **found})
