"""A question's filler words find nothing, over HTTP on both stores: "how is it going?" asks for news, it does not
ask for turns that say "go". On the bundled two-speaker conversation (the one ``mindbank demo`` imports), the
narrow question the demo asks was answered first by "Priya: Go on!": a three-word reply whose one word the
question shares ("going", stemmed "go"), so BM25's length normalisation put it above every turn about training."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Served

from mindbank.importers import load_locomo, locomo_items, sample_conversation_path

BASE = "/v1/default/banks/demo"
QUESTION = "What is Priya training for, and how is it going?"


def test_how_is_it_going_recalls_the_training_not_a_reply_that_says_go(served: Callable[..., Served]) -> None:
    s = served()
    conv = load_locomo(sample_conversation_path())
    s.mb.retain("demo", locomo_items(conv, list(range(1, len(conv.sessions) + 1))))
    r = s.http.post(f"{BASE}/memories/recall", json={"query": QUESTION, "max_tokens": 4096})
    assert r.status_code == 200, r.text
    texts = [x["text"] for x in r.json()["results"]]
    assert "Priya: Go on!" not in texts[:10], texts[:10]
    # the first results are about the training, each holding a word of it
    for text in texts[:3]:
        assert any(w in text.lower() for w in ("train", "race", "run", "mileage")), texts[:3]
