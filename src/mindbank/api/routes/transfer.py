"""Bank backup and migration: ``POST /transfer/export``, ``/transfer/import``, ``/clone``,
``/document-transfer/export``, ``/document-transfer``, and ``GET /v1/default/files/download/{key}`` for the
archives. Each POST answers 202 with ``{operation_id, status}``; the work runs in the background (see
:mod:`mindbank.service.transfer`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Query, UploadFile
from fastapi.responses import JSONResponse, StreamingResponse

from mindbank.api.access import SCOPED, Caller
from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.errors import NotFoundError

router = APIRouter(tags=["transfer"])
BANK = "/v1/default/banks/{bank_id}"

DocumentIds = Annotated[list[str] | None, Query(description="Document id(s); omit for the whole bank")]
Archive = Annotated[UploadFile, File(description="Transfer ZIP archive")]
Conflict = Literal["skip", "replace", "new-id"]


def _submitted(operation_id: str) -> dict[str, Any]:
    return {"operation_id": operation_id, "status": "pending"}


@router.post(BANK + "/transfer/export", status_code=202)
def export_bank(
    bank_id: str,
    mb: Bank,
    include_data: bool = True,
    include_bank_config: bool = True,
    include_history: bool = False,
    document_id: DocumentIds = None,
) -> dict[str, Any]:
    """Queue an export of the bank; the operation's ``result_metadata.download_url`` names the archive."""
    operation_id = mb.export_bank(
        bank_id, include_data=include_data, include_bank_config=include_bank_config,
        include_history=include_history, document_ids=document_id,
    )  # fmt: skip
    return _submitted(operation_id)


@router.post(BANK + "/transfer/import", status_code=202, responses=errors(409))
def import_bank(
    bank_id: str,
    file: Archive,
    mb: Bank,
    caller: Caller,
    mode: Literal["restore", "merge"] = "restore",
    target_bank_id: str | None = None,
    document_conflict: Conflict = "skip",
    include_data: bool | None = None,
    include_bank_config: bool | None = None,
    include_history: bool | None = None,
    reembed: bool = False,
) -> dict[str, Any]:
    """Check an archive and queue its import: ``restore`` into a new bank, or ``merge`` into this one.
    ``reembed``: accept an archive of another embedding model by embedding its memories again (else 409)."""
    operation_id = mb.import_bank(
        bank_id, file.file, mode=mode, target_bank_id=target_bank_id, document_conflict=document_conflict,
        include_data=include_data, include_bank_config=include_bank_config, include_history=include_history,
        caller=caller,
        reembed=reembed,
    )  # fmt: skip
    return _submitted(operation_id)


@router.post(BANK + "/clone", status_code=202, responses=errors(409))
def clone_bank(
    bank_id: str,
    mb: Bank,
    caller: Caller,
    target_bank_id: Annotated[str, Query(min_length=1, description="Bank to create; must not exist")],
    include_data: bool = True,
    include_bank_config: bool = True,
    include_history: bool = False,
) -> dict[str, Any]:
    """Queue a copy of the bank into a new one."""
    operation_id = mb.clone_bank(
        bank_id, target_bank_id, include_data=include_data, include_bank_config=include_bank_config,
        include_history=include_history, caller=caller,
    )  # fmt: skip
    return _submitted(operation_id)


@router.post(BANK + "/document-transfer/export", status_code=202)
def export_documents(
    bank_id: str,
    mb: Bank,
    document_id: DocumentIds = None,
    include_observations: bool = False,
    include_knowledge_base: bool = False,
) -> dict[str, Any]:
    """Queue an export of the bank's documents (and, whole-bank, its observations and mental models)."""
    operation_id = mb.export_documents(
        bank_id, document_ids=document_id, include_observations=include_observations,
        include_knowledge_base=include_knowledge_base,
    )  # fmt: skip
    return _submitted(operation_id)


@router.post(BANK + "/document-transfer", status_code=202)
def import_documents(
    bank_id: str, file: Archive, mb: Bank, on_conflict: Conflict = "skip", reembed: bool = False
) -> dict[str, Any]:
    """Check an archive and queue a merge of its documents into the bank (``reembed`` as for an import)."""
    return _submitted(mb.import_documents(bank_id, file.file, on_conflict=on_conflict, reembed=reembed))


@router.get(BANK + "/document-transfer", responses=errors(410))
def export_documents_removed(bank_id: str) -> JSONResponse:
    """The reference removed the synchronous export: 410, pointing at the asynchronous one."""
    detail = (
        "The synchronous document export was removed; use POST "
        f"/v1/default/banks/{bank_id}/document-transfer/export and download the archive its operation names."
    )
    return JSONResponse(status_code=410, content={"detail": detail})


@router.get("/v1/default/files/download/{key:path}", responses=errors(404), openapi_extra=SCOPED)
def download_file(key: str, mb: Bank, caller: Caller) -> StreamingResponse:
    """Stream a stored file (an export archive) chunk by chunk. A scoped key downloads the files of the banks inside
    its scopes; any other file is 404 for it, as a missing one."""
    info = mb.stored_file(key)
    if caller is not None and not caller.covers(info.bank_id):
        raise NotFoundError(f"File '{key}' not found (exports expire after the retention period)")
    headers = {
        "content-disposition": f'attachment; filename="{info.filename}"',
        "content-length": str(info.byte_size),
    }
    return StreamingResponse(mb.stored_file_chunks(key), media_type=info.content_type, headers=headers)
