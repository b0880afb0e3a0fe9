"""``mindbank.client``: every method of Client and AsyncClient against a live server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime

import pytest

from mindbank.client import (
    AsyncClient,
    Client,
    MindBankConnectionError,
    MindBankHTTPError,
    ReflectResponse,
)
from mindbank.server import create_app
from mindbank.service.facade import MindBank


def _has_reflect(mb: MindBank) -> bool:
    """Whether the server offers ``POST /reflect`` (it arrives with the reflect engine)."""
    return "/v1/default/banks/{bank_id}/reflect" in create_app(mb).openapi()["paths"]


def test_sync_client_every_method(server: str, mindbank: MindBank) -> None:
    with Client(server) as c:
        r = c.retain("b", "Alice: I started training for the Berlin marathon.", tags=["user:alice"], context="chat",
                     timestamp=datetime(2026, 3, 1, 10, tzinfo=UTC), metadata={"turn": "1"}, document_id="d1")  # fmt: skip
        assert r.success and r.items_count == 1 and r.operation_id is None and not r.is_async
        batch = c.retain("b", items=[{"content": "Bob: I bake sourdough bread.", "tags": ["user:bob"]}], async_=True)
        assert batch.is_async and batch.operation_id
        assert c.wait("b", batch.operation_id).status == "completed"

        hits = c.recall("b", "What is Alice training for?", tags=["user:alice"])
        assert "marathon" in hits.results[0].text and hits.results[0].tags == ["user:alice"]
        assert hits.results[0].context == "chat" and hits.results[0].occurred_start is not None
        assert "Alice" in (hits.results[0].entities or []) and "Alice" in hits.entities

        created = c.create_mental_model("b", "Alice", "What is Alice training for?", id="alice", tags=["user:alice"],
                                        trigger={"keep_trace": True, "refresh_cron": "0 3 * * *"})  # fmt: skip
        assert created.mental_model_id == "alice" and created.warnings == []
        op = c.wait("b", created.operation_id)
        assert op.status == "completed" and op.is_terminal and op.details["outcome"]  # type: ignore[index]

        model = c.get_mental_model("b", "alice")
        assert "marathon" in (model.content or "") and model.is_stale is False and model.trigger["keep_trace"]  # type: ignore[index]
        assert model.staleness_reason is None
        first_citation = (model.content or "").split("[mem:", 1)[1].split("]", 1)[0]
        cited = c.memory_cited_by("b", first_citation)
        assert [(m.id, m.is_stale) for m in cited.mental_models] == [("alice", False)]
        assert [e.version for e in c.get_mental_model_history("b", "alice")] == [0]
        assert isinstance(model.last_refreshed_at, datetime)
        assert c.get_mental_model("b", "alice", detail="metadata").content is None
        page = c.list_mental_models("b", detail="content", tags=["user:alice"])
        assert page.total == 1 and page.items[0].content == model.content

        updated = c.update_mental_model("b", "alice", name="Alice (runner)", trigger={"mode": "delta"})
        assert updated.name == "Alice (runner)" and updated.trigger["mode"] == "delta"  # type: ignore[index]
        assert updated.trigger["refresh_cron"] == "0 3 * * *"  # type: ignore[index]

        c.retain("b", "Alice: I finished the marathon in 3:58.", tags=["user:alice"])
        dry = c.dry_run_refresh_mental_model("b", "alice")
        assert dry.would_persist and "3:58" in (dry.preview_content or "") and "3:58" in dry.diff
        refreshed = c.refresh_mental_model("b", "alice", mode="full")
        assert refreshed.status == "queued"
        assert c.wait("b", refreshed.operation_id).status == "completed"
        assert "3:58" in (c.get_mental_model("b", "alice").content or "")

        history = c.get_mental_model_history("b", "alice")
        assert history and not history[0].is_failure and "marathon" in (history[0].previous_content or "")
        reverted = c.revert_mental_model("b", "alice", history[0].id)  # type: ignore[arg-type]
        assert "3:58" not in (reverted.content or "") and "marathon" in (reverted.content or "")

        tags = c.list_tags("b")
        counts = {t.tag: t.count for t in tags.items}  # facts, and the observations consolidation formed so far
        assert set(counts) == {"user:alice", "user:bob"} and counts["user:alice"] >= 2 and counts["user:bob"] >= 1
        assert c.list_tags("b", source="mental_models").items[0].tag == "user:alice"
        stats = c.stats("b")
        assert stats.bank_id == "b" and stats.total_nodes >= 3 and stats.last_memory_write_at is not None
        assert [x.bank_id for x in c.list_banks().banks] == ["b"]
        config = c.update_bank_config("b", {"recall_max_tokens": 1024})
        assert (
            config.overrides == {"recall_max_tokens": 1024}
            and c.get_bank_config("b").config["recall_max_tokens"] == 1024
        )

        ops = c.list_operations("b", operation_type="refresh_mental_model")
        assert ops.total == 2 and {o.status for o in ops.operations} == {"completed"}
        one = c.get_operation("b", ops.operations[0].id)
        assert one.operation_type == "refresh_mental_model" and one.mental_model_id == "alice"
        with pytest.raises(MindBankHTTPError) as conflict:
            c.cancel_operation("b", one.operation_id)
        assert conflict.value.status_code == 409 and "completed" in conflict.value.message

        cleared = c.clear_mental_model("b", "alice")
        assert cleared.content == ""
        assert c.delete_mental_model("b", "alice").status == "deleted"
        assert c.list_mental_models("b").total == 0

        if _has_reflect(mindbank):
            answer = c.reflect("b", "What is Alice training for?", include_facts=True)
            assert isinstance(answer, ReflectResponse) and answer.text
        else:
            with pytest.raises(MindBankHTTPError) as missing:
                c.reflect("b", "What is Alice training for?")
            assert missing.value.status_code in (404, 405)


def test_cancel_and_wait_timeout(idle_server: str, mindbank: MindBank) -> None:
    with Client(idle_server) as c:
        created = c.create_mental_model("b", "M", "What?", id="m")
        with pytest.raises(TimeoutError, match="pending"):
            c.wait("b", created.operation_id, timeout=0.2, poll_interval=0.05)
        cancelled = c.cancel_operation("b", created.operation_id)
        assert cancelled.success and cancelled.operation_id == created.operation_id
        assert c.get_operation("b", created.operation_id).status == "cancelled"
        assert c.list_operations("b", status="cancelled").total == 1


def test_errors_carry_status_and_server_message(server: str) -> None:
    with Client(server) as c:
        with pytest.raises(MindBankHTTPError) as missing:
            c.get_mental_model("b", "nope")
        assert missing.value.status_code == 404 and "nope" in missing.value.message and "404" in str(missing.value)
        with pytest.raises(MindBankHTTPError) as invalid:
            c.create_mental_model(
                "b", "M", "What?", trigger={"refresh_cron": "0 3 * * *", "refresh_after_consolidation": True}
            )
        assert invalid.value.status_code == 422 and "mutually exclusive" in invalid.value.message
        assert isinstance(invalid.value.detail, list)
        c.create_mental_model("b", "M", "What?", id="m")
        with pytest.raises(MindBankHTTPError) as taken:
            c.create_mental_model("b", "M", "What?", id="m")
        assert taken.value.status_code == 409 and "already exists" in taken.value.message
        with pytest.raises(ValueError, match="content or items"):
            c.retain("b")
    # ids are path-escaped, so an odd id is a clean 404 rather than another route
    with Client(server) as c, pytest.raises(MindBankHTTPError) as odd:
        c.get_mental_model("b", "a/b?c")
    assert odd.value.status_code == 404


def test_unreachable_server_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with (
        Client(f"http://127.0.0.1:{port}", timeout=2) as c,
        pytest.raises(MindBankConnectionError, match="cannot reach"),
    ):
        c.stats("b")


def test_client_reads_url_from_environment(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDBANK_URL", server + "/")
    with Client() as c:
        assert c.base_url == server and c.list_banks().total == 0


def test_async_client_every_method(server: str, mindbank: MindBank) -> None:
    async def scenario() -> None:
        async with AsyncClient(server) as c:
            r = await c.retain("a", "Frank: I play the cello in a quartet.", tags=["user:frank"])
            assert r.items_count == 1
            queued = await c.retain("a", items=[{"content": "Frank: we rehearse on Tuesdays."}], async_=True)
            assert (await c.wait("a", queued.operation_id or "")).status == "completed"
            assert "cello" in (await c.recall("a", "Which instrument does Frank play?")).results[0].text
            created = await c.create_mental_model("a", "Frank", "Which instrument does Frank play?", id="frank")
            assert (await c.wait("a", created.operation_id)).status == "completed"
            assert "cello" in ((await c.get_mental_model("a", "frank")).content or "")
            assert (await c.list_mental_models("a")).total == 1
            assert (await c.update_mental_model("a", "frank", max_tokens=512)).max_tokens == 512
            await c.retain("a", "Frank: the quartet plays a concert in June, cello solo included.")
            assert (await c.dry_run_refresh_mental_model("a", "frank")).outcome
            refreshed = await c.refresh_mental_model("a", "frank")
            assert (await c.wait("a", refreshed.operation_id)).status == "completed"
            history = await c.get_mental_model_history("a", "frank")
            assert history
            assert (await c.revert_mental_model("a", "frank", history[0].id or 0)).id == "frank"
            assert (await c.list_tags("a")).total == 1
            assert (await c.stats("a")).total_nodes >= 3
            assert (await c.list_banks()).total == 1
            assert (await c.get_bank_config("a")).bank_id == "a"
            assert (await c.update_bank_config("a", {"recall_max_tokens": 512})).overrides == {"recall_max_tokens": 512}
            ops = await c.list_operations("a")
            assert ops.total >= 3
            assert (await c.get_operation("a", ops.operations[0].id)).is_terminal
            with pytest.raises(MindBankHTTPError) as done:
                await c.cancel_operation("a", ops.operations[0].id)
            assert done.value.status_code == 409
            assert (await c.clear_mental_model("a", "frank")).content == ""
            assert (await c.delete_mental_model("a", "frank")).status == "deleted"
            if _has_reflect(mindbank):
                assert (await c.reflect("a", "Which instrument does Frank play?")).text
            else:
                with pytest.raises(MindBankHTTPError):
                    await c.reflect("a", "Which instrument does Frank play?")

    asyncio.run(scenario())


def test_in_process_mindbank_offers_the_client_names(mindbank: MindBank) -> None:
    """``mindbank.MindBank`` answers to the client's method names, so code can swap one for the other."""
    names = [n for n in dir(Client) if not n.startswith("_") and n not in ("close", "base_url", "list_banks",
                                                                           "get_bank_config", "update_bank_config")]  # fmt: skip
    missing = [n for n in names if not hasattr(mindbank, n)]
    assert missing == []
    from mindbank.domain.records import RetainItem

    mindbank.retain("p", [RetainItem(content="Gina: I grow tomatoes on my balcony.")])
    model_id, op = mindbank.create_mental_model("p", name="Gina", source_query="What does Gina grow?")
    mindbank.run_pending()
    assert mindbank.wait("p", op).status == "completed"
    assert mindbank.stats("p")["total_nodes"] >= 1
    assert mindbank.dry_run_refresh_mental_model("p", model_id)["mental_model_id"] == model_id
    assert isinstance(mindbank.get_mental_model_history("p", model_id), list)


def test_readme_client_example_runs(server: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's Python client snippet works as written against a live server."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    snippet = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "mindbank.client" in b)
    exec(compile(snippet.replace("http://127.0.0.1:8888", server), "README.md", "exec"), {})
    assert "marathon" in capsys.readouterr().out


def test_validation_message_in_docs_example(server: str) -> None:
    with Client(server) as c, pytest.raises(MindBankHTTPError) as exc:
        c.create_mental_model("b", "Nightly", "What changed?", trigger={"refresh_cron": "every night"})
    assert exc.value.status_code == 422 and exc.value.message.startswith("trigger.refresh_cron: ")
