"""Chunking and fact splitting of the extractive engine."""

from __future__ import annotations

from mindbank.domain.text import split_chunks, split_facts


def test_turns_become_chunks_and_paragraphs_stay_whole() -> None:
    text = "Ann: Hello there.\nBen: Hi Ann!\n\nA paragraph that\nwraps over lines.\n\n\n"
    assert split_chunks(text) == ["Ann: Hello there.", "Ben: Hi Ann!", "A paragraph that wraps over lines."]
    assert split_chunks("  \n\n ") == []


def test_short_chunk_is_one_fact() -> None:
    assert split_facts("Ann: I adopted a cat. Her name is Miso.") == ["Ann: I adopted a cat. Her name is Miso."]


def test_long_chunk_splits_on_sentences_and_repeats_the_speaker() -> None:
    sentence = "I walked along the river for a long time today. "
    facts = split_facts("Ann: " + sentence * 12, max_words=30)
    assert len(facts) > 1
    assert all(f.startswith("Ann: ") for f in facts)
    assert all(len(f.split()) <= 31 for f in facts)
    assert " ".join(f.removeprefix("Ann: ") for f in facts) == (sentence * 12).strip()
