"""Wire compatibility: the reference's own Python client (hindsight-client 1.1.0) drives a live mindbank server."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from mindbank.service.facade import MindBank

hindsight_client = pytest.importorskip("hindsight_client")
hindsight_client_api = pytest.importorskip("hindsight_client_api")


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
        # the fact, or the observation consolidation formed from it
        assert "marathon" in recall.results[0].text and recall.results[0].type in ("world", "observation")

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


def test_reference_client_parses_the_refresh_governance_responses(server: str, mindbank: MindBank) -> None:
    """Issue 14's outcomes and reasons beyond the reference (an empty scope, a re-anchored delta) reach the
    reference's client as the nearest values of its enums; the exact ones ride in fields it ignores."""
    import httpx
    from hindsight_client_api.models import BankStatsResponse, OperationsListResponse, OperationStatusResponse

    from mindbank.domain.governance import RefreshState

    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        created = client.create_mental_model("b", name="Alice", source_query="What is Alice training for?",
                                             tags=["user:alice"], id="alice", trigger={"mode": "delta"})  # fmt: skip
        wait(mindbank, "b", created.operation_id)
        client.update_mental_model("b", "alice", tags=["nobody"])
        dry = client.dry_run_refresh_mental_model("b", "alice")
        assert dry.outcome == "refresh_failed_empty_candidate" and dry.retraction.deferred_reason == "empty_scope"
        refreshed = client.refresh_mental_model("b", "alice")
        assert mindbank.wait_for("b", refreshed.operation_id, timeout=30).status == "failed"
        base = f"{server}/v1/default/banks/b"
        status = OperationStatusResponse.from_dict(httpx.get(f"{base}/operations/{refreshed.operation_id}").json())
        assert status is not None and status.details is not None
        assert status.details.outcome == "refresh_failed_empty_candidate"
        assert status.details.failure_reason == "empty_candidate"
        assert status.result_metadata["outcome"] == "refresh_failed_empty_scope"  # type: ignore[index]
        listed = OperationsListResponse.from_dict(httpx.get(f"{base}/operations").json())
        assert listed is not None and listed.total >= 2
        model = client.get_mental_model("b", "alice")
        assert model.reflect_response["outcome"] == "refresh_failed_empty_scope"
        stats = BankStatsResponse.from_dict(httpx.get(f"{base}/stats").json())
        assert stats is not None and stats.bank_id == "b"
        client.update_mental_model("b", "alice", tags=["user:alice"])
        stored = mindbank.store.get_mental_model("b", "alice")
        assert stored is not None
        mindbank.store.save_refresh(replace(stored, refresh_state=RefreshState(reanchor="delta_ops_all_skipped")),
                                    history=None, history_cap=50)  # fmt: skip
        dry = client.dry_run_refresh_mental_model("b", "alice")
        assert dry.effective_mode == "full" and dry.mode_fallback_reason == "delta_ops_failed"
        assert dry.trace.mode_fallback_reason == "delta_ops_failed"
        raw = httpx.post(f"{server}/v1/default/banks/b/mental-models/alice/dry-run-refresh", json={}).json()
        assert raw["mode_fallback_detail"] == "delta_reanchored"
    finally:
        client.close()


def test_reference_client_drives_every_knowledge_base_method(server: str, mindbank: MindBank) -> None:
    """get_knowledge_base_tree, create_knowledge_folder, create_knowledge_page, get_knowledge_page,
    search_knowledge_base, update_knowledge_node, delete_knowledge_node, export_knowledge_base, and
    list_mental_models(exclude_knowledge_pages=True), parsed by the reference client's own models."""
    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"])
        client.create_mental_model("b", name="Solo", source_query="What is going on?", id="solo")
        people = client.create_knowledge_folder("b", "People")
        assert people.kind == "folder" and people.parent_id is None
        runners = client.create_knowledge_folder("b", "Runners", parent_id=people.id)
        created = client.create_knowledge_page("b", "Alice", "What is Alice training for?", parent_id=runners.id,
                                               tags=["user:alice"], trigger={"fact_types": ["world"]})  # fmt: skip
        assert created.page_id and created.mental_model_id
        wait(mindbank, "b", created.operation_id)

        tree = client.get_knowledge_base_tree("b")
        alice = tree.roots[0].children[0].children[0]
        assert alice.name == "Alice" and alice.kind == "page" and alice.is_stale is False
        assert alice.trigger.mode == "delta" and alice.trigger.fact_types == ["world"]  # the page default, patched
        assert alice.trigger.refresh_after_consolidation is True
        filtered = client.get_knowledge_base_tree("b", tags=["user:bob"], tags_match="all_strict")
        assert filtered.roots == []
        grouped = client.get_knowledge_base_tree("b", tag_groups=[{"tags": ["user:alice"], "match": "all_strict"}])
        assert grouped.roots[0].children[0].children[0].id == alice.id

        page = client.get_knowledge_page("b", created.page_id)
        assert "Berlin marathon" in page.body and page.markdown.startswith("---\n") and page.type == "knowledge-page"
        found = client.search_knowledge_base("b", "marathon", limit=5)
        assert found.total == 1 and found.results[0].id == created.page_id and found.results[0].score == 1.0

        moved = client.update_knowledge_node("b", created.page_id, name="Alice B", parent_id=None,
                                             trigger={"keep_trace": True})  # fmt: skip
        assert moved.parent_id is None and moved.name == "Alice B"
        assert moved.trigger.keep_trace is True and moved.trigger.mode == "delta"  # a patch: the rest kept
        renamed = client.update_knowledge_node("b", runners.id, name="Athletes")
        assert renamed.parent_id == people.id  # parent_id not passed: the node stays
        with pytest.raises(hindsight_client_api.exceptions.ApiException) as refused:  # a cycle
            client.update_knowledge_node("b", people.id, parent_id=runners.id)
        assert refused.value.status == 422 and "descendants" in str(refused.value)

        bundle = client.export_knowledge_base("b")
        assert {f.path for f in bundle.files} >= {"index.md", "alice-b.md", "log.md"}

        pages_out = client.list_mental_models("b", exclude_knowledge_pages=True)
        assert [m.id for m in pages_out.items] == ["solo"]
        assert client.list_mental_models("b").total == 2

        client.delete_knowledge_node("b", people.id)
        client.delete_knowledge_node("b", created.page_id)
        assert client.get_knowledge_base_tree("b").roots == []
        assert client.list_mental_models("b").total == 1
    finally:
        client.close()


def test_reference_client_knowledge_page_over_observations_names_the_team(server: str, mindbank: MindBank) -> None:
    """A page at its default trigger (observations only) over two freshly retained facts: the worker consolidates
    them into observations and refreshes the page after consolidation, so it names both people."""
    client = hindsight_client.Hindsight(base_url=server)
    try:
        client.retain("b", "Alice leads the data platform team and sets its quarterly roadmap.", tags=["team"])
        client.retain("b", "Bob joined the data platform team in March as a backend engineer.", tags=["team"])
        created = client.create_knowledge_page("b", "Data platform", "Who is on the data platform team?",
                                               tags=["team"])  # fmt: skip
        wait(mindbank, "b", created.operation_id)
        deadline = time.monotonic() + 30
        body = ""
        while time.monotonic() < deadline:
            body = client.get_knowledge_page("b", created.page_id).body
            if "Alice" in body and "Bob" in body:
                break
            time.sleep(0.1)
        assert "Alice leads the data platform team" in body and "Bob joined the data platform team" in body
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
        # the two copies are facts of two documents (consolidation, which now compares a new fact with earlier
        # ones, may also have merged them into an observation: not counted)
        bread = [m for m in mindbank.list_memories("cloned", types=["world"], limit=100)[0] if "sourdough" in m.text]
        assert len(bread) == 2 and len({m.document_id for m in bread}) == 2

        templates = BankTemplatesApi(client._api_client)  # type: ignore[attr-defined]
        manifest = _run_async(templates.export_bank_template("b"))
        assert manifest.version == "1" and [m.id for m in manifest.mental_models] == ["alice"]
        result = _run_async(templates.import_bank_template("templated", BankTemplateManifest.from_dict(
            manifest.to_dict())))  # fmt: skip
        assert result.mental_models_created == ["alice"] and len(result.operation_ids) == 1
    finally:
        client.close()
