"""Recall brings in the turn said right after a matching turn (the reply that holds the answer) though it shares no
word with the query, over HTTP on both stores: the lexical arm finds it by the words of the turn it answers (its
preceding-text field), and the neighbour lift ranks it right after that turn."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Served

BASE = "/v1/default/banks/b"
TURNS = [
    {"content": "Ann: What did you paint last week?", "timestamp": "2024-03-10T09:00:00Z", "context": "chat 1"},
    {"content": "Bo: A sunset over the lake, with purple clouds.", "timestamp": "2024-03-10T09:00:05Z",
     "context": "chat 1"},
    {"content": "Bo: The train was late again this morning.", "timestamp": "2024-05-02T08:00:00Z", "context": "chat 2"},
]  # fmt: skip


def test_the_reply_to_a_matching_turn_is_recalled_by_the_words_it_answers(served: Callable[..., Served]) -> None:
    s = served()
    assert s.http.post(f"{BASE}/memories", json={"items": TURNS}).status_code == 200
    # the floor keeps only the question turn in the dense pool; the reply shares no word with the query
    body = {"query": "What did you paint last week?", "min_scores": {"semantic": 0.6}}
    r = s.http.post(f"{BASE}/memories/recall", json=body)
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["text"] for x in results] == [
        "Ann: What did you paint last week?",
        "Bo: A sunset over the lake, with purple clouds.",
    ]
    question, reply = results[0]["scores"], results[1]["scores"]
    assert reply["semantic"] is None and 0 < reply["keyword"] < question["keyword"] and reply["final"] > 0
