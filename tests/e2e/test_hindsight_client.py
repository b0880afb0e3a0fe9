"""Wire compatibility: the reference's own Python client (hindsight-client 1.1.0) drives a live mindbank server."""

from __future__ import annotations

import pytest

from mindbank.service import MindBank

hindsight_client = pytest.importorskip("hindsight_client")


def wait(mb: MindBank, bank: str, operation_id: str) -> None:
    assert mb.wait_for(bank, operation_id, timeout=30).status == "completed"


def test_reference_client_round_trip(server: str, mindbank: MindBank) -> None:
    client = hindsight_client.Hindsight(base_url=server)
    try:
        r = client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"],
                          context="chat", metadata={"turn": "1"}, timestamp="2026-03-01T10:00:00Z")  # fmt: skip
        assert r.success and r.items_count == 1
        client.retain_batch("b", [{"content": "Alice: My plan has a long run on Sundays.", "tags": ["user:alice"]},
                                  {"content": "Bob: I bake sourdough bread.", "tags": ["user:bob"]}])  # fmt: skip
        recall = client.recall("b", "What is Alice training for?")
        assert "marathon" in recall.results[0].text and recall.results[0].type == "world"

        created = client.create_mental_model("b", name="Alice", source_query="What is Alice training for?",
                                             tags=["user:alice"], id="alice",
                                             trigger={"keep_trace": True, "refresh_cron": "0 3 * * *"})  # fmt: skip
        assert created.mental_model_id == "alice"
        wait(mindbank, "b", created.operation_id)
        model = client.get_mental_model("b", "alice")
        assert "marathon" in model.content and model.is_stale is False and model.tags == ["user:alice"]
        listed = client.list_mental_models("b", detail="content")
        assert listed.total == 1 and listed.items[0].content == model.content

        updated = client.update_mental_model("b", "alice", name="Alice (renamed)", trigger={"mode": "delta"})
        assert updated.name == "Alice (renamed)" and updated.trigger.mode == "delta"
        assert updated.trigger.keep_trace is True and updated.trigger.refresh_cron == "0 3 * * *"  # merged, not reset
        assert updated.tags == ["user:alice"] and updated.source_query == "What is Alice training for?"

        client.retain("b", "Alice: I finished the marathon in 3:58.", tags=["user:alice"])
        assert client.get_mental_model("b", "alice").is_stale is True
        refreshed = client.refresh_mental_model("b", "alice", mode="full")
        wait(mindbank, "b", refreshed.operation_id)
        assert "3:58" in client.get_mental_model("b", "alice").content

        history = client.get_mental_model_history("b", "alice")
        assert len(history) >= 2

        cleared = client.clear_mental_model("b", "alice")
        assert cleared.content == ""
        client.delete_mental_model("b", "alice")
        assert client.list_mental_models("b").total == 0
    finally:
        client.close()


def test_reference_client_dry_run(server: str, mindbank: MindBank) -> None:
    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        created = client.create_mental_model("b", name="Alice", source_query="What is Alice training for?",
                                             tags=["user:alice"], id="alice", trigger={"mode": "delta"})  # fmt: skip
        wait(mindbank, "b", created.operation_id)
        client.retain("b", "Alice: I finished the marathon in 3:58.", tags=["user:alice"])
        mindbank.worker.stop()
        mindbank.run_pending()  # settle the consolidation the retain queued before comparing dumps
        before = mindbank.store.dump()  # type: ignore[attr-defined]
        dry = client.dry_run_refresh_mental_model("b", "alice")
        assert mindbank.store.dump() == before  # type: ignore[attr-defined]
        assert dry.mental_model_id == "alice" and dry.requested_mode == "delta" and dry.effective_mode == "delta"
        assert dry.outcome == "content_written" and dry.would_persist is True
        assert "3:58" in dry.preview_content and dry.diff.startswith("--- current")
        assert dry.scope.tags_match == "all_strict" and dry.window.created_after is not None
        cited = client.get_mental_model("b", "alice").reflect_response["based_on"]["world"][0]["id"]
        mindbank.delete_memory("b", cited)
        retracting = client.dry_run_refresh_mental_model("b", "alice")
        assert retracting.retraction is not None and retracting.retraction.fact_ids == [cited]
    finally:
        client.close()


def test_reference_client_dry_run_with_a_response_schema(server: str, mindbank: MindBank) -> None:
    """The reference's dry run never extracts structured output, and its outcome enum has five values: a model
    with a response_schema on the extractive engine previews its content and warns that the refresh would fail."""
    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        schema = {"type": "object", "properties": {"goal": {"type": "string"}}}
        client.create_mental_model("b", name="Alice", source_query="What is Alice training for?",
                                   tags=["user:alice"], id="alice", trigger={"response_schema": schema})  # fmt: skip
        dry = client.dry_run_refresh_mental_model("b", "alice")
        assert dry.outcome == "content_written" and "marathon" in dry.preview_content and dry.would_persist is False
        assert any("refresh_failed_structured_output" in w for w in dry.warnings)
    finally:
        client.close()


def test_reference_client_backs_up_restores_clones_and_exports_documents(server: str, mindbank: MindBank) -> None:
    """``export_bank`` / ``import_bank`` / ``clone_bank`` / ``export_documents`` of hindsight-client 1.1.0, its
    document-transfer import and its bank-template calls, against a live mindbank."""
    from hindsight_client.hindsight_client import _run_async
    from hindsight_client_api.api.bank_templates_api import BankTemplatesApi
    from hindsight_client_api.models.bank_template_manifest import BankTemplateManifest

    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"],
                      document_id="d1")  # fmt: skip
        client.retain("b", "Bob: I bake sourdough bread.", tags=["user:bob"], document_id="d2")
        created = client.create_mental_model("b", name="Alice", source_query="What is Alice training for?",
                                             tags=["user:alice"], id="alice")  # fmt: skip
        wait(mindbank, "b", created.operation_id)
        mindbank.worker.stop()
        mindbank.run_pending()  # settle the consolidations the retains queued
        mindbank.worker.start()

        archive = client.export_bank("b", poll_interval=0.05, timeout=60)
        assert archive[:2] == b"PK"
        operation_id = client.import_bank("b", archive, target_bank_id="restored")
        wait(mindbank, "b", operation_id)
        status = _run_async(client.operations.get_operation_status("b", operation_id))  # type: ignore[attr-defined]
        assert status.status == "completed" and status.result_metadata["documents_imported"] == 2
        restored = client.get_mental_model("restored", "alice")
        assert restored.is_stale is False and "marathon" in restored.content

        operation_id = client.clone_bank("b", "cloned")
        wait(mindbank, "b", operation_id)
        assert client.get_mental_model("cloned", "alice").is_stale is False
        assert {b.bank_id for b, _ in mindbank.list_banks()} == {"b", "restored", "cloned"}

        documents = client.export_documents("b", document_ids=["d2"], poll_interval=0.05, timeout=60)
        submitted = _run_async(client.document_transfer.import_documents("cloned", documents, on_conflict="new-id"))
        wait(mindbank, "cloned", submitted.operation_id)
        bread = [m for m in mindbank.list_memories("cloned", limit=100)[0] if "sourdough" in m.text]
        assert len(bread) == 2 and len({m.document_id for m in bread}) == 2

        templates = BankTemplatesApi(client._api_client)  # type: ignore[attr-defined]
        manifest = _run_async(templates.export_bank_template("b"))
        assert manifest.version == "1" and [m.id for m in manifest.mental_models] == ["alice"]
        result = _run_async(templates.import_bank_template("templated", BankTemplateManifest.from_dict(
            manifest.to_dict())))  # fmt: skip
        assert result.mental_models_created == ["alice"] and len(result.operation_ids) == 1
    finally:
        client.close()
