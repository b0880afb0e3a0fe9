"""Client commands over banks: ``bank list``, backup and migration: ``bank export|import|clone|export-template|
import-template`` (a restored or cloned bank is named after its new id unless ``--name`` says otherwise), and the
bank's embedding model: ``bank model``, ``bank reembed`` (moves the bank to the server's model, docs/cli.md).

``bank export`` waits for the export and writes the archive to a file; ``bank import`` uploads one (streamed from
the file) and, with ``--wait``, waits for the import. Together they move a bank between servers — e.g. from a SQLite
server to a PostgreSQL one (docs/postgres.md).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindbank.cli.common import (
    Subparsers,
    UsageError,
    add_timeout_flag,
    add_wait_flags,
    bank,
    client_command,
    command_group,
    wait_and_report,
)
from mindbank.cli.output import Output, when

if TYPE_CHECKING:
    from mindbank.client import Client


def register(sub: Subparsers) -> None:
    """Add the ``bank`` command group to the ``mindbank`` command."""
    bank_sub = command_group(
        sub, "bank", help="banks: list; backup and migration: export, import, clone, templates; embedding model"
    )

    client_command(bank_sub, "list", _list, help="list the banks with their names, memories and last write")

    p = client_command(bank_sub, "export", _export, help="export the bank to a transfer archive (a ZIP file)")
    p.add_argument("--out", "-o", default=None, help="file to write (default <bank>.zip; - for stdout)")
    p.add_argument("--document", action="append", default=None, metavar="ID", help="only this document (repeat)")
    p.add_argument("--documents-only", action="store_true", help="documents and facts only (document transfer)")
    p.add_argument("--observations", action="store_true", help="with --documents-only: observations too")
    p.add_argument("--knowledge-base", action="store_true", help="with --documents-only: mental models too")
    _include_flags(p)
    add_timeout_flag(p)

    p = client_command(bank_sub, "import", _import, help="import a transfer archive (restore a bank, or merge)")
    p.add_argument("archive", help="the archive file (- for stdin)")
    p.add_argument("--mode", choices=["restore", "merge"], default="restore",
                   help="restore: create a new bank (default); merge: fold its documents into -b/--bank")  # fmt: skip
    p.add_argument("--target", default=None, help="restore: the bank to create (default: the archive's bank)")
    p.add_argument("--name", default=None, help="restore: the new bank's name (default: its id; needs --wait)")
    p.add_argument("--conflict", choices=["skip", "replace", "new-id"], default="skip",
                   help="merge: what to do with a document id the bank has (default skip)")  # fmt: skip
    p.add_argument("--reembed", action="store_true",
                   help="accept an archive of another embedding model: embed its memories again")  # fmt: skip
    _include_flags(p)
    add_wait_flags(p)

    p = client_command(bank_sub, "clone", _clone, help="copy the bank into a new one on the same server")
    p.add_argument("target", help="the bank to create")
    p.add_argument("--name", default=None, help="the new bank's name (default: its id; needs --wait)")
    _include_flags(p)
    add_wait_flags(p)

    p = client_command(bank_sub, "export-template", _export_template, help="print the bank's setup as a template")
    p.add_argument("--out", "-o", default=None, help="file to write (default stdout)")
    client_command(bank_sub, "model", _model, help="the bank's embedding model, the server's, a re-embedding running")
    p = client_command(bank_sub, "reembed", _reembed, help="move the bank to the server's embedding model")
    add_wait_flags(p)

    p = client_command(bank_sub, "import-template", _import_template, help="apply a template to the bank")
    p.add_argument("template", help="the template manifest (JSON; - for stdin)")
    p.add_argument("--dry-run", action="store_true", help="only check it")


def _include_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-data", action="store_true", help="leave out documents, memories and the operations log")
    p.add_argument("--no-config", action="store_true", help="leave out profile, overrides, directives, models")
    p.add_argument("--history", action="store_true", help="include the LLM request log")


def _export(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    if args.documents_only:
        submitted = client.export_documents(bank_id, document_ids=args.document, include_observations=args.observations,
                                            include_knowledge_base=args.knowledge_base)  # fmt: skip
    elif args.observations or args.knowledge_base:
        raise UsageError("--observations and --knowledge-base go with --documents-only")
    else:
        submitted = client.export_bank(bank_id, include_data=not args.no_data, include_bank_config=not args.no_config,
                                       include_history=args.history, document_ids=args.document)  # fmt: skip
    archive = client.fetch_archive(bank_id, submitted.operation_id, timeout=args.timeout)
    target = args.out or f"{bank_id}.zip"
    if target == "-":
        sys.stdout.buffer.write(archive)
        sys.stdout.flush()
        return 0
    Path(target).write_bytes(archive)
    op = client.get_operation(bank_id, submitted.operation_id)
    counts = _counts(op.result_metadata or {}, "_exported")
    return out.done({"operation": op, "path": target}, f"wrote {target} ({len(archive)} bytes): {counts}",
                    markup=False)  # fmt: skip


def _import(client: Client, args: argparse.Namespace, out: Output) -> int:
    include: dict[str, Any] = {}
    if args.no_data:
        include["include_data"] = False
    if args.no_config:
        include["include_bank_config"] = False
    if args.history:
        include["include_history"] = True
    _check_name(args)
    with _open(args.archive) as archive:
        # a restore is recorded against the bank it creates unless -b names another: no bank needs to exist yet
        bank_id = bank(args) if args.mode == "merge" else args.bank or args.target or _source_bank(archive)
        submitted = client.import_bank(bank_id, archive, mode=args.mode, target_bank_id=args.target,
                                       document_conflict=args.conflict, reembed=args.reembed, **include)  # fmt: skip
    if args.wait:
        status = wait_and_report(client, bank_id, submitted.operation_id, out, args.timeout)
        return _name_bank(client, args.target or bank_id, args.name) if status == 0 else status
    return out.done(submitted, f"import queued: operation {submitted.operation_id}", markup=False)


def _clone(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    _check_name(args)
    submitted = client.clone_bank(bank_id, args.target, include_data=not args.no_data,
                                  include_bank_config=not args.no_config, include_history=args.history)  # fmt: skip
    if args.wait:
        status = wait_and_report(client, bank_id, submitted.operation_id, out, args.timeout)
        return _name_bank(client, args.target, args.name) if status == 0 else status
    return out.done(submitted, f"clone queued: operation {submitted.operation_id}", markup=False)


def _model(client: Client, args: argparse.Namespace, out: Output) -> int:
    status = client.get_embedding_model(bank(args))
    bank_model = "none yet" if status.model is None else f"{status.model} ({status.dimension} dimensions)"
    line = f"bank: {bank_model}; server: {status.server_model} ({status.server_dimension} dimensions)"
    if status.reembed_operation_id:
        line += f"; re-embedding: operation {status.reembed_operation_id}"
    elif not status.matches:
        line += "; run `mindbank bank reembed` to move the bank to the server's model"
    return out.done(status, line, markup=False)


def _reembed(client: Client, args: argparse.Namespace, out: Output) -> int:
    bank_id = bank(args)
    started = client.reembed(bank_id)
    if args.wait:
        return wait_and_report(client, bank_id, started.operation_id, out, args.timeout)
    already = " (already running)" if started.deduplicated else ""
    return out.done(started, f"re-embedding to {started.model} queued{already}: operation {started.operation_id}",
                    markup=False)  # fmt: skip


def _list(client: Client, args: argparse.Namespace, out: Output) -> int:
    banks = client.list_banks()
    rows = [[b.bank_id, b.name if b.name and b.name != b.bank_id else "-", str(b.fact_count), when(b.last_write_at)]
            for b in banks.banks]  # fmt: skip
    return out.listing(banks, ("bank", "name", "memories", "last write"), rows, empty="no bank yet")


def _check_name(args: argparse.Namespace) -> None:
    """``--name`` is set once the new bank exists: only with ``--wait``. Raises :class:`UsageError`."""
    if args.name is not None and not args.wait:
        raise UsageError("--name needs --wait (the bank is named once the copy has finished)")


def _name_bank(client: Client, bank_id: str, name: str | None) -> int:
    """Name the bank a restore or clone created (it is named after its id unless told)."""
    if name is not None:
        client.update_bank_profile(bank_id, name=name)
    return 0


def _export_template(client: Client, args: argparse.Namespace, out: Output) -> int:
    manifest = client.export_bank_template(bank(args))
    text = json.dumps(manifest, indent=2, ensure_ascii=False)
    if args.out and args.out != "-":
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        return out.done(manifest, f"wrote {args.out}", markup=False)
    print(text)
    return 0


def _import_template(client: Client, args: argparse.Namespace, out: Output) -> int:
    with _open(args.template) as raw:
        try:
            manifest = json.loads(raw.read())
        except ValueError as exc:
            raise UsageError(f"{args.template} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict):
        raise UsageError(f"{args.template} must hold a JSON object")
    result = client.import_bank_template(bank(args), manifest, dry_run=args.dry_run)
    verb = "would apply" if result.dry_run else "applied"
    line = (f"{verb}: config {'yes' if result.config_applied or result.dry_run else 'no'}, "
            f"models created {result.mental_models_created}, updated {result.mental_models_updated}")  # fmt: skip
    if result.config_ignored:
        line += f"; ignored settings: {', '.join(result.config_ignored)}"
    return out.done(result, line, markup=False)


def _open(path: str) -> Any:
    """A file named on the command line, opened for binary reading (``-``: stdin). Raises :class:`UsageError`."""
    if path == "-":
        return _Stdin()
    try:
        return Path(path).open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def _source_bank(archive: Any) -> str:
    """The bank an archive was exported from (its manifest), read locally. Raises :class:`UsageError` when the
    file is no transfer archive (the server would say why in more detail; this only picks the default bank)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            bank_id = json.loads(zf.read("manifest.json"))["source_bank_id"]
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError) as exc:
        raise UsageError("the archive has no readable manifest.json: pass -b/--bank or --target") from exc
    finally:
        archive.seek(0)
    return str(bank_id)


class _Stdin:
    """stdin's bytes as a context manager that does not close stdin (buffered: an archive must be seekable)."""

    def __enter__(self) -> Any:
        return io.BytesIO(sys.stdin.buffer.read())

    def __exit__(self, *exc: object) -> None:
        return None


def _counts(result: dict[str, Any], suffix: str) -> str:
    parts = [f"{k.removesuffix(suffix)} {v}" for k, v in result.items() if k.endswith(suffix)]
    return ", ".join(parts) or "empty"
