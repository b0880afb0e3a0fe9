"""The Python client's transfer and template methods, sync and async, against a live server."""

from __future__ import annotations

import asyncio
import io

import pytest

from mindbank.client import AsyncClient, Client, MindBankClientError, MindBankHTTPError
from mindbank.service.facade import MindBank


def test_sync_client_exports_imports_clones_and_applies_templates(server: str, mindbank: MindBank) -> None:
    with Client(server) as c:
        c.retain("a", "Frank: I play the cello in a quartet.", tags=["user:frank"], document_id="d1")
        created = c.create_mental_model("a", "Frank", "Which instrument does Frank play?", id="frank")
        assert c.wait("a", created.operation_id).status == "completed"
        submitted = c.export_bank("a", include_history=True)
        archive = c.fetch_archive("a", submitted.operation_id)
        op = c.get_operation("a", submitted.operation_id)
        assert archive == c.download_archive(op.result_metadata["download_url"])  # type: ignore[index]

        restored = c.import_bank("a", io.BytesIO(archive), target_bank_id="a2")  # a binary file streams
        assert c.wait("a", restored.operation_id).status == "completed"
        assert c.get_mental_model("a2", "frank").is_stale is False
        merged = c.import_bank("a2", archive, mode="merge", document_conflict="new-id")
        assert c.wait("a2", merged.operation_id).result_metadata["facts_imported"] == 1  # type: ignore[index]

        clone = c.clone_bank("a", "a3", include_data=False)
        assert c.wait("a", clone.operation_id).status == "completed"
        assert c.list_mental_models("a3").total == 0 and c.stats("a3").total_nodes == 0

        manifest = c.export_bank_template("a")
        assert manifest["mental_models"][0]["id"] == "frank"
        assert c.import_bank_template("a4", manifest, dry_run=True).mental_models_created == ["frank"]
        assert c.bank_template_schema()["title"] == "BankTemplate"

        with pytest.raises(MindBankHTTPError) as refused:
            c.import_bank("a", b"junk")
        assert refused.value.status_code == 422 and "not a ZIP file" in refused.value.message
        with pytest.raises(MindBankClientError, match="without an archive"):
            c.fetch_archive("a", restored.operation_id)  # an import writes no archive


def test_async_client_moves_documents(server: str) -> None:
    async def scenario() -> None:
        async with AsyncClient(server) as c:
            await c.retain("s", "Gina: I grow tomatoes on my balcony.", document_id="g")
            await c.retain("s", "Hal: I fix bicycles.", document_id="h")
            submitted = await c.export_documents("s", document_ids=["g"])
            archive = await c.fetch_archive("s", submitted.operation_id)
            queued = await c.import_documents("t", archive, on_conflict="skip")
            done = await c.wait("t", queued.operation_id)
            assert done.status == "completed" and done.result_metadata["documents_imported"] == 1  # type: ignore[index]
            hits = (await c.recall("t", "What does anyone grow or fix?")).results
            assert [h.text for h in hits] == ["Gina: I grow tomatoes on my balcony."]

    asyncio.run(scenario())
