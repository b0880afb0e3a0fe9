"""``POST /files/retain``: multipart ``files`` and a ``request`` JSON string (``{"files_metadata": [...]}``, one
entry per file: ``context``, ``document_id``, ``tags``, ``metadata``, ``timestamp``) → ``{"operation_ids": [...]}``,
one queued retain per file. Plain text, Markdown, HTML and PDF (text layer) are read; another type answers 415
naming it; a file over ``MINDBANK_FILE_RETAIN_MAX_BYTES`` answers 413."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile

from mindbank.api.deps import Bank
from mindbank.api.openapi import errors
from mindbank.domain.limits import scan_json
from mindbank.errors import InvalidInputError
from mindbank.service.files import UploadedFile

# the reference's FileRetainRequest: ``parser`` picks its converter and ``async`` is always true (both ignored here)
REQUEST_KEYS = frozenset({"files_metadata", "context", "parser", "async"})
router = APIRouter(prefix="/v1/default/banks/{bank_id}/files", tags=["files"])


def _request(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except RecursionError as exc:  # nesting the decoder cannot follow: far past the depth limit
        raise InvalidInputError("request", "nests too deep") from exc
    except ValueError as exc:
        raise InvalidInputError("request", f"is not valid JSON: {exc}") from exc
    problem = scan_json(value)  # what the body guard checks in a JSON body: depth, NUL, 64-bit, NaN, surrogates
    if problem is not None:
        where, _, message = problem
        raise InvalidInputError(".".join(["request", *map(str, where)]), message)
    if not isinstance(value, dict):
        raise InvalidInputError("request", "must be a JSON object")
    unknown = sorted(set(value) - REQUEST_KEYS)
    if unknown:
        raise InvalidInputError(f"request.{unknown[0][:40]}", "is not a known field")
    metas = value.get("files_metadata")
    if metas is not None and (not isinstance(metas, list) or not all(isinstance(m, dict) for m in metas)):
        raise InvalidInputError("request.files_metadata", "must be a list of objects")
    context = value.get("context")
    if context is not None and not isinstance(context, str):
        raise InvalidInputError("request.context", "must be a string")
    return value


@router.post("/retain", responses=errors(400, 413, 415))
def retain_files(
    bank_id: str,
    mb: Bank,
    files: Annotated[list[UploadFile], File()],
    request: Annotated[str | None, Form()] = None,
) -> dict[str, Any]:
    """Convert each file to text and queue its retain; ``operation_ids`` in file order."""
    body = _request(request)
    # read one byte past the limit at most: enough to refuse an oversized file without holding all of it
    cap = mb.settings.file_retain_max_bytes + 1
    uploads = [UploadedFile(f.filename or "", f.content_type, f.file.read(cap)) for f in files]
    operation_ids = mb.retain_files(
        bank_id, uploads, files_metadata=body.get("files_metadata"), context=body.get("context")
    )
    return {"operation_ids": operation_ids}
