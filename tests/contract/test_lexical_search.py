"""Recall's lexical arm on both backends: stemming, stopwords, the preceding-text field and its weight, the field
kept up to date by writes and imports, and phrases (query word pairs) ranking a phrase above scattered words."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from test_memory_neighbours import T0, turn
from test_transfer_store import _read_all, _rows

from mindbank.domain.text import keyword_terms, query_phrases
from mindbank.engine.recall import FusionParams, RecallRequest, recall
from mindbank.store.base import ImportTarget, MemoryFilter, Store
from mindbank.store.postgres import migrate as postgres_migrate
from mindbank.store.sqlite import migrate as sqlite_migrate

S = timedelta(seconds=1)


class _NoEmbedder:
    """The BM25 retriever never embeds; this fails loudly if it does."""

    dimension = 4
    name = "none"

    def embed(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("the lexical arm embedded a text")


def _texts(store: Store, query: str, *, phrases: bool = False) -> list[str]:
    request = RecallRequest(query=query, retriever="bm25")
    hits = recall(store, _NoEmbedder(), "b", request, fusion=FusionParams(phrases=phrases))  # type: ignore[arg-type]
    return [h.memory.text for h in hits]


def _search(store: Store, terms: list[str]) -> list[str]:
    hits = store.keyword_search("b", terms, 10, MemoryFilter())
    return [m.text for m in store.get_memories("b", [i for i, _ in hits])]


def test_stems_match_other_forms_of_a_word(store: Store) -> None:
    store.write_documents(
        "b", [turn("Mel: I painted a sunset", T0, context="a"), turn("Mel: we run every day", T0, context="b")]
    )
    assert _texts(store, "Who has been painting?") == ["Mel: I painted a sunset"]
    assert _texts(store, "paints") == ["Mel: I painted a sunset"]


def test_stopwords_of_the_query_match_nothing(store: Store) -> None:
    store.write_documents(
        "b",
        [turn("Ann: what is it that you would do there?", T0, context="a"), turn("Bo: the pottery class", T0)],
    )
    assert keyword_terms("What would you do at the pottery class?") == ["pottery", "class"]
    assert _texts(store, "What would you do at the pottery class?") == ["Bo: the pottery class"]
    assert _texts(store, "what would you do there?") == []  # only stopwords: no lexical match at all


def test_a_reply_is_found_by_the_words_of_the_turn_it_answers(store: Store) -> None:
    store.write_documents(
        "b",
        [
            turn("Ann: what did you paint last week?", T0),
            turn("Bo: a sunset over the lake", T0 + S),
            turn("Cy: nothing to see", T0, context="other"),
        ],
    )
    texts = _texts(store, "paint")
    # the turn that says the word outranks the reply that only follows it (the preceding field weighs 0.3)
    assert texts == ["Ann: what did you paint last week?", "Bo: a sunset over the lake"]
    # the first turn of a context has nothing before it; another context lends nothing
    assert _texts(store, "nothing") == ["Cy: nothing to see"]


def test_a_turn_written_between_two_becomes_its_successors_preceding_text(store: Store) -> None:
    store.write_documents("b", [turn("Ann: hello there", T0), turn("Bo: a sunset over the lake", T0 + 2 * S)])
    assert _search(store, ["hello"]) == ["Ann: hello there", "Bo: a sunset over the lake"]
    store.write_documents("b", [turn("Ann: what did you paint?", T0 + S)])  # said between the two
    assert _search(store, ["paint"]) == ["Ann: what did you paint?", "Bo: a sunset over the lake"]
    assert _search(store, ["hello"]) == ["Ann: hello there", "Ann: what did you paint?"]
    # a replaced document takes its preceding text anew and lends it to its successor
    store.write_documents("b", [turn("Ann: what did you paint?", T0 + S)])
    assert _search(store, ["sunset"]) == ["Bo: a sunset over the lake"]


def test_an_import_sets_the_preceding_text(store: Store, another_store: Store) -> None:
    store.write_documents("b", [turn("Ann: what did you paint?", T0), turn("Bo: a sunset over the lake", T0 + S)])
    source = _read_all(store, "b")
    another_store.import_rows(ImportTarget("b", source["bank"][0], False), _rows(source))
    assert _search(another_store, ["paint"]) == ["Ann: what did you paint?", "Bo: a sunset over the lake"]


def test_a_phrase_of_the_query_ranks_above_its_words_scattered(store: Store) -> None:
    filler = [turn(f"Dee: unrelated remark number {n}", T0 + n * S, context=f"f{n}") for n in range(8)]
    scattered = "Ann: our group is a support"
    phrase = "Bo: I joined a support group last year with two old friends from work"  # longer: BM25 favours Ann
    store.write_documents("b", [turn(scattered, T0, context="a"), turn(phrase, T0, context="c"), *filler])
    assert query_phrases("Where is a support group?") == ["support group"]
    assert _texts(store, "Where is a support group?", phrases=True)[0] == phrase
    assert _texts(store, "Where is a support group?", phrases=False)[0] == scattered  # the pair off: words only


def test_migration_0097_indexes_the_preceding_text_of_memories_already_stored(store: Store) -> None:
    """A database from before migration 0097 (one-field index) gets every stored fact's preceding text and a rebuilt
    index: the reply is found by the question's words after the migration, not before."""
    store.write_documents("b", [turn("Ann: what did you paint?", T0), turn("Bo: a sunset over the lake", T0 + S)])
    postgres = type(store).__name__ == "PostgresStore"
    backend = postgres_migrate if postgres else sqlite_migrate
    shipped = {number: text for number, _, text in backend.migrations()}
    with store._tx() as conn:  # type: ignore[attr-defined]
        if postgres:  # back to the 0001 column: the generated tsvector goes with the column it reads
            conn.execute("ALTER TABLE memory_units DROP COLUMN preceding_text CASCADE")
            conn.execute(
                "ALTER TABLE memory_units ADD COLUMN text_tsv tsvector "
                "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
            )
            conn.execute("CREATE INDEX idx_memory_units_fts ON memory_units USING gin (text_tsv)")
        else:  # back to the 0001 / 0004 index over the text alone
            for name in ("memory_units_ai", "memory_units_ad", "memory_units_au"):
                conn.execute(f"DROP TRIGGER {name}")
            conn.execute("DROP TABLE memory_fts_vocab")
            conn.execute("DROP TABLE memory_fts")
            conn.execute("ALTER TABLE memory_units DROP COLUMN preceding_text")
            for statement in sqlite_migrate._statements(shipped[1] + "\n" + shipped[4]):
                if "memory_fts" in statement:
                    conn.execute(statement)
            conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')")
    assert _search(store, ["paint"]) == ["Ann: what did you paint?"]
    with store._tx() as conn:  # type: ignore[attr-defined]
        if postgres:
            conn.execute(shipped[97])
        else:
            for statement in sqlite_migrate._statements(shipped[97]):
                conn.execute(statement)
    assert _search(store, ["paint"]) == ["Ann: what did you paint?", "Bo: a sunset over the lake"]
    assert _search(store, ["sunset"]) == ["Bo: a sunset over the lake"]


def test_a_write_links_preceding_text_by_id_without_walking_the_bank(store: Store) -> None:
    """Setting the preceding text after a write finds the rows to update by id (the memory index), so a write into a
    large bank costs what it writes, not what the bank holds. SQLite plans without table statistics, so its plan is
    asserted; PostgreSQL chooses by statistics (on a 40-row table any index will do), so there only the result is
    checked, and its plan at 20,000 memories is in docs/benchmarks.md ("Writes into a large bank")."""
    from mindbank.store.sqlite.search_queries import SEARCH_Q
    from mindbank.store.sqlite.store import SQLiteStore

    store.write_documents("b", [turn(f"Ann: the {_word(i)} garden", T0 + i * S, context="a") for i in range(40)])
    # the reply is still found by the words of the turn before it (the preceding text was set)
    assert _texts(store, _word(6))[:2] == [f"Ann: the {_word(6)} garden", f"Ann: the {_word(7)} garden"]
    if not isinstance(store, SQLiteStore):
        return
    mid = store.list_memories("b", MemoryFilter(), query=None, limit=1, offset=0)[0][0].id
    with store._read() as conn:
        sql = "EXPLAIN QUERY PLAN " + SEARCH_Q["link_preceding"].format(marks="?")
        plan = [r[3] for r in conn.execute(sql, ("b", mid, "b", mid))]
    assert plan[0].startswith("SEARCH memory_units USING INDEX sqlite_autoindex_memory_units_1 (id=?)"), plan


def _word(i: int) -> str:
    """A made-up word, distinct for each ``i`` < 676."""
    return "zq" + chr(97 + i % 26) + chr(97 + i // 26)


def test_a_preceding_text_holds_only_the_last_pieces_of_a_long_moment(store: Store) -> None:
    """Facts sharing one moment (a long turn, a document retained in one piece) lend the next fact of the context
    only their last ``PRECEDING_PIECES``, so a fact never carries a whole document as its preceding text."""
    from mindbank.store.lexical import PRECEDING_PIECES

    pieces = [turn(f"Ann: the {_word(i)} chapter", T0, context="a") for i in range(PRECEDING_PIECES + 12)]
    store.write_documents("b", [*pieces, turn("Bo: thanks for the summary", T0 + S, context="a")])
    last, first = _word(PRECEDING_PIECES + 11), _word(0)
    assert _texts(store, last) == [f"Ann: the {last} chapter", "Bo: thanks for the summary"]
    assert _texts(store, first) == [f"Ann: the {first} chapter"]
