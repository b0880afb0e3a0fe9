"""Client methods for bank backup and migration (``export_bank``, ``import_bank``, ``clone_bank``,
``export_documents``, ``import_documents``, ``download_archive``) and bank templates (``export_bank_template``,
``import_bank_template``, ``bank_template_schema``).

An export is an operation: ``export_bank`` returns it, and ``fetch_archive`` (in each client, because it waits)
waits for it and downloads the archive. An archive to import is bytes or a binary file (streamed, not read whole).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any, Literal

from mindbank.client._wire import Request, bank_path, clean, endpoint
from mindbank.client.models import TemplateImportResult, TransferSubmitted

Archive = bytes | IO[bytes]
Conflict = Literal["skip", "replace", "new-id"]


def _upload(archive: Archive) -> dict[str, Any]:
    return {"file": ("archive.zip", archive, "application/zip")}


def _identity(body: Any) -> Any:
    return body


class TransferMethods:
    """Bank transfer (archives) and bank templates."""

    @endpoint
    def export_bank(
        self,
        bank_id: str,
        *,
        include_data: bool = True,
        include_bank_config: bool = True,
        include_history: bool = False,
        document_ids: Sequence[str] | None = None,
    ) -> Request[TransferSubmitted]:
        """Queue an export of the bank as a transfer archive (see ``fetch_archive``)."""
        params = clean({"include_data": include_data, "include_bank_config": include_bank_config,
                        "include_history": include_history, "document_id": document_ids})  # fmt: skip
        return Request("POST", f"{bank_path(bank_id)}/transfer/export", TransferSubmitted.model_validate, params=params)

    @endpoint
    def export_documents(
        self,
        bank_id: str,
        *,
        document_ids: Sequence[str] | None = None,
        include_observations: bool = False,
        include_knowledge_base: bool = False,
    ) -> Request[TransferSubmitted]:
        """Queue an export of the bank's documents (whole bank: optionally observations and mental models)."""
        params = clean({"document_id": document_ids, "include_observations": include_observations,
                        "include_knowledge_base": include_knowledge_base})  # fmt: skip
        path = f"{bank_path(bank_id)}/document-transfer/export"
        return Request("POST", path, TransferSubmitted.model_validate, params=params)

    @endpoint
    def import_bank(
        self,
        bank_id: str,
        archive: Archive,
        *,
        mode: Literal["restore", "merge"] = "restore",
        target_bank_id: str | None = None,
        document_conflict: Conflict = "skip",
        include_data: bool | None = None,
        include_bank_config: bool | None = None,
        include_history: bool | None = None,
        reembed: bool = False,
    ) -> Request[TransferSubmitted]:
        """Upload an archive and queue its import: ``restore`` creates ``target_bank_id`` (default: the archive's
        bank), ``merge`` folds its documents into ``bank_id``. ``reembed``: accept an archive of another embedding
        model by embedding its memories again (else the server answers 409 naming both models)."""
        params = clean({"mode": mode, "target_bank_id": target_bank_id, "document_conflict": document_conflict,
                        "include_data": include_data, "include_bank_config": include_bank_config,
                        "include_history": include_history, "reembed": reembed or None})  # fmt: skip
        path = f"{bank_path(bank_id)}/transfer/import"
        return Request("POST", path, TransferSubmitted.model_validate, params=params, files=_upload(archive))

    @endpoint
    def import_documents(
        self, bank_id: str, archive: Archive, *, on_conflict: Conflict = "skip", reembed: bool = False
    ) -> Request[TransferSubmitted]:
        """Upload an archive and queue a merge of its documents into the bank (``reembed`` as for an import)."""
        path = f"{bank_path(bank_id)}/document-transfer"
        params = clean({"on_conflict": on_conflict, "reembed": reembed or None})
        return Request("POST", path, TransferSubmitted.model_validate, params=params, files=_upload(archive))

    @endpoint
    def clone_bank(
        self,
        bank_id: str,
        target_bank_id: str,
        *,
        include_data: bool = True,
        include_bank_config: bool = True,
        include_history: bool = False,
    ) -> Request[TransferSubmitted]:
        """Queue a copy of the bank into ``target_bank_id`` (which must not exist)."""
        params = {"target_bank_id": target_bank_id, "include_data": include_data,
                  "include_bank_config": include_bank_config, "include_history": include_history}  # fmt: skip
        return Request("POST", f"{bank_path(bank_id)}/clone", TransferSubmitted.model_validate, params=params)

    @endpoint
    def download_archive(self, download_url: str) -> Request[bytes]:
        """The bytes of a stored archive (an export's ``result_metadata.download_url``)."""
        return Request("GET", download_url, bytes, raw=True)

    @endpoint
    def export_bank_template(self, bank_id: str) -> Request[dict[str, Any]]:
        """The bank's setup (profile, overrides, mental-model definitions, directives) as a template manifest."""
        return Request("GET", f"{bank_path(bank_id)}/export", _identity)

    @endpoint
    def import_bank_template(
        self, bank_id: str, manifest: Mapping[str, Any], *, dry_run: bool = False
    ) -> Request[TemplateImportResult]:
        """Apply a template manifest to the bank (created if missing); ``dry_run`` only checks it."""
        return Request("POST", f"{bank_path(bank_id)}/import", TemplateImportResult.model_validate,
                       params={"dry_run": dry_run}, json=dict(manifest))  # fmt: skip

    @endpoint
    def bank_template_schema(self) -> Request[dict[str, Any]]:
        """The JSON Schema of a template manifest."""
        return Request("GET", "/v1/bank-template-schema", _identity)
