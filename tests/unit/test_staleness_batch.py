"""Listing 1000 models costs a constant number of queries, and each batched is_stale equals the single answer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mindbank.domain.document import parse_markdown, render_markdown
from mindbank.domain.records import RetainItem
from mindbank.service.facade import MindBank

KINDS = ("tagged", "untagged", "groups", "cited")


def build(mb: MindBank) -> list[str]:
    items = [RetainItem(content=f"Fact number {i} about topic {i % 7}.", tags=(f"t{i % 5}",) if i % 3 else ())
             for i in range(60)]  # fmt: skip
    ids = mb.retain("b", items).memory_ids
    mid_stamp = mb.last_memory_write_at("b")
    for i in range(1000):
        kind = KINDS[i % 4]
        tags = [f"t{i % 5}"] if kind in ("tagged", "cited") else []
        trigger = {"tag_groups": [{"or": [{"tags": [f"t{i % 5}"]}, {"tags": ["t9"]}]}]} if kind == "groups" else None
        model_id, _ = mb.create_mental_model("b", name=f"m{i}", source_query="q?", id=f"m{i:04d}", tags=tags,
                                             trigger=trigger)  # fmt: skip
        model = mb.store.get_mental_model("b", model_id)
        assert model is not None
        cited = ids[i % len(ids)]
        doc = parse_markdown(f"- a fact [mem:{cited}]\n")
        mb.store.save_refresh(
            replace(model, content=render_markdown(doc), structured_document=doc.to_dict(), last_memory_seen_at=mid_stamp),
            history=None, history_cap=50,
        )  # fmt: skip
    # new writes reach some scopes (t1, t9, untagged), and one cited memory is deleted
    mb.retain("b", [RetainItem(content="New t1 fact.", tags=("t1",)), RetainItem(content="New t9 fact.", tags=("t9",))])
    mb.delete_memory("b", ids[3])
    return ids


@pytest.fixture
def bank(mindbank: MindBank) -> MindBank:
    build(mindbank)
    mindbank.worker.stop()
    return mindbank


@pytest.mark.parametrize("page", [10, 100, 1000])
def test_list_is_constant_queries_and_matches_single_answers(bank: MindBank, page: int) -> None:
    with bank.store.statement_log() as log:  # type: ignore[attr-defined]
        models, total = bank.list_mental_models("b", limit=page)
    assert total == 1000 and len(models) == page
    # count, page, staleness; then refresh_status: the page's spend and the bank's budget overrides (issue 14)
    assert len(log) <= 5, log
    for model in models:
        single = bank.get_mental_model("b", model.id)
        assert model.is_stale == single.is_stale, model.id


def test_expected_flags(bank: MindBank) -> None:
    models, _ = bank.list_mental_models("b", limit=1000)
    flags = {m.id: m.is_stale for m in models}
    # t1-tagged models saw a write; t9 only reaches tag-group models; untagged models see every write
    assert flags["m0001"] is True  # tagged t1
    assert flags["m0000"] is False  # tagged t0
    assert flags["m0005"] is True  # untagged
    assert flags["m0002"] is True  # tag groups (t2 or t9): t9 was written
    assert flags["m0007"] is False  # cited kind, t2: nothing in scope written, its citation intact
    deleted_citers = [f"m{i:04d}" for i in range(1000) if i % 60 == 3 and KINDS[i % 4] == "cited"]
    assert deleted_citers and all(flags[m] for m in deleted_citers)  # their cited memory was deleted
    untouched_cited_t3 = [f"m{i:04d}" for i in range(1000) if i % 5 == 3 and i % 60 != 3 and KINDS[i % 4] == "cited"]
    assert untouched_cited_t3 and not any(flags[m] for m in untouched_cited_t3)


def test_list_query_count_does_not_grow_with_page_size(bank: MindBank) -> None:
    counts = []
    for page in (10, 100, 1000):
        with bank.store.statement_log() as log:  # type: ignore[attr-defined]
            bank.list_mental_models("b", limit=page)
        counts.append(len(log))
    assert len(set(counts)) == 1
