"""The reads both stores run from one body over their own SQL spelling (``store/memory_reads.py``,
``store/shared.py``): listings with text, document, status and tag filters, tag counts with patterns, scope counts
and bank stats answer alike on every backend."""

from __future__ import annotations

from test_store import doc, model, op

from mindbank.store.base import MemoryFilter, Store


def _seed(store: Store) -> None:
    store.write_documents(
        "b",
        [
            doc("Alice likes Tea_Time 100%", tags=("drinks", "Alice"), document_id="d1"),
            doc("Bob walks the dog", tags=("pets",), document_id="d2", fact_type="experience"),
            doc("alice plays chess", tags=("games", "alice-club"), document_id="d3"),
        ],
    )


def test_list_memories_text_is_a_case_insensitive_literal_substring(store: Store) -> None:
    _seed(store)

    def texts(query: str, document_id: str | None = None) -> list[str]:
        found, total = store.list_memories(
            "b", MemoryFilter(), query=query, limit=10, offset=0, document_id=document_id
        )
        assert total == len(found)
        return sorted(m.text for m in found)

    assert texts("ALICE") == ["Alice likes Tea_Time 100%", "alice plays chess"]
    assert texts("tea_time") == ["Alice likes Tea_Time 100%"]  # '_' is literal, not a wildcard
    assert texts("100%") == ["Alice likes Tea_Time 100%"]  # so is '%'
    assert texts("e_t") == []
    assert texts("alice", document_id="d3") == ["alice plays chess"]
    # past the end of the page the total is still counted
    assert store.list_memories("b", MemoryFilter(), query="alice", limit=10, offset=5) == ([], 2)


def test_list_tags_patterns_and_counts(store: Store) -> None:
    _seed(store)
    store.insert_mental_model(model(tags=("drinks", "models-only")))
    tags, total = store.list_tags("b", source="memories", pattern=None, limit=10, offset=0)
    assert total == 5 and dict(tags) == {"drinks": 1, "Alice": 1, "pets": 1, "games": 1, "alice-club": 1}
    assert sorted(t for t, _ in store.list_tags("b", source="memories", pattern="ALI", limit=10, offset=0)[0]) == [
        "Alice",
        "alice-club",
    ]
    assert [t for t, _ in store.list_tags("b", source="memories", pattern="*club", limit=10, offset=0)[0]] == [
        "alice-club"
    ]
    assert store.list_tags("b", source="memories", pattern="zzz", limit=10, offset=0) == ([], 0)
    assert store.list_tags("b", source="memories", pattern="a", limit=1, offset=50)[1] == 3  # total past the end
    models, models_total = store.list_tags("b", source="mental_models", pattern="only", limit=10, offset=0)
    assert models == [("models-only", 1)] and models_total == 1


def test_count_in_scope_and_bank_stats(store: Store) -> None:
    _seed(store)
    assert store.count_in_scope("b", MemoryFilter()) == {"world": 2, "experience": 1}
    assert store.count_in_scope("b", MemoryFilter(fact_types=("experience",))) == {"experience": 1}
    assert store.count_memories("b") == 3
    store.submit_operation(op())
    stats = store.bank_stats("b")
    assert stats["nodes_by_fact_type"] == {"world": 2, "experience": 1} and stats["total_nodes"] == 3
    assert stats["total_documents"] == 3 and stats["operations_by_status"] == {"pending": 1}
    assert stats["pending_consolidation"] == 3 and stats["last_consolidated_at"] is None
    assert stats["last_memory_write_at"] == store.bank_last_memory_write_at("b") is not None
    empty = store.bank_stats("nobody")
    assert empty["total_nodes"] == 0 and empty["last_memory_write_at"] is None


def test_list_operations_filters_and_totals(store: Store) -> None:
    store.ensure_bank("b")
    first, second = op(), op(model_id=None, created_offset=1)
    store.submit_operation(first)
    store.submit_operation(second)
    store.insert_mental_model(model())
    store.submit_operation(op(model_id="m1", created_offset=2))
    assert store.list_operations("b", status=None, operation_type=None, limit=10, offset=0)[1] == 3
    refreshes, total = store.list_operations(
        "b", status="pending", operation_type="refresh_mental_model", limit=10, offset=0
    )
    assert total == 1 and [o.mental_model_id for o in refreshes] == ["m1"]
    assert store.list_operations("b", status="completed", operation_type=None, limit=10, offset=0) == ([], 0)
    page, total = store.list_operations("b", status=None, operation_type="batch_retain", limit=1, offset=1)
    assert total == 2 and len(page) == 1


def test_list_mental_models_tag_filters_and_total_past_the_end(store: Store) -> None:
    store.ensure_bank("b")
    store.insert_mental_model(model(model_id="m1", tags=("a", "b")))
    store.insert_mental_model(model(model_id="m2", tags=("a",)))
    store.insert_mental_model(model(model_id="m3"))

    def ids(tags: tuple[str, ...], mode: str) -> list[str]:
        found, total = store.list_mental_models("b", tags=tags, tags_match=mode, limit=10, offset=0)  # type: ignore[arg-type]
        assert total == len(found)
        return sorted(m.id for m in found)

    assert ids((), "any") == ["m1", "m2", "m3"]
    assert ids(("a",), "any") == ["m1", "m2"]
    assert ids(("a", "b"), "all") == ["m1"]
    assert ids(("a",), "exact") == ["m2"]
    assert store.list_mental_models("b", tags=("a",), tags_match="any", limit=10, offset=5) == ([], 2)
