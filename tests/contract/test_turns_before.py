"""Consolidation reads each turn with the other speaker's turn before it, on both backends
(``engine/consolidate/rounds.py`` ``turns_before``): the nearest earlier moment of the same context, said by another
speaker; observations (which carry their facts' contexts and dates) and other sessions are not turns; many
moments are read in bounded calls."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from test_memory_neighbours import AXIS, T0, _memory, turn

from mindbank.domain.records import NewMemory
from mindbank.engine.consolidate import rounds
from mindbank.engine.consolidate.rounds import turns_before
from mindbank.engine.synthesis.exchange import previous_turns
from mindbank.store.base import MemoryFilter, Store


@pytest.mark.parametrize("per_call", [rounds.TURN_ANCHORS, 1])
def test_each_turn_is_read_with_the_other_speakers_turn_before_it(
    store: Store, per_call: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rounds, "TURN_ANCHORS", per_call)  # one moment a call: the reads are joined
    s = timedelta(seconds=1)
    ids = store.write_documents(
        "b",
        [
            turn("Audrey: What was your favorite book when you were a kid?", T0),
            turn("Andrew: I loved Charlotte's Web.", T0 + s),
            turn("Andrew: I still read it to my kids.", T0 + 2 * s),
            turn("Audrey: We adopted a puppy.", T0 + 3 * s, context="chat 2"),
            turn("Andrew: Far later, in the same session.", T0 + timedelta(hours=2)),
            turn("No speaker here.", T0 + 4 * s),
        ],
    )
    question, answer, own, other_session, late, unspoken = (found[0] for found in ids)
    # an observation at the question's moment is not a turn: it stands beside its fact, never for the turn before
    store.write_consolidation(
        "b",
        creates=[_memory_as_observation("Audrey: (an observation of the question turn)", answer)],
        updates=[],
        consolidated_ids=[],
    )
    units = {m.id: m for m in store.get_memories("b", [answer, own, other_session, late, unspoken])}
    previous = turns_before(store, "b", list(units.values()))
    # the same speaker's turn before is not a turn replied to; another session or a turn hours away has none
    assert previous == {answer: "Audrey: What was your favorite book when you were a kid?"}
    assert question  # written first, the turn the answer replies to


def _memory_as_observation(text: str, source: str) -> NewMemory:
    """An observation dated at the question's moment in its session, as consolidation writes one."""
    base = _memory(text, T0, "chat 1", AXIS, (), "", "")
    return replace(base, fact_type="observation", document_id=None, chunk_id=None, source_memory_ids=(source,),
                   proof_count=1)  # fmt: skip


def test_the_pieces_of_a_long_turn_read_back_in_the_order_they_were_written(store: Store) -> None:
    # a turn split in pieces is one write: every piece has the same moment and stamp, and only the store's write
    # order says which came first (the turn before ends with its last piece: the question a reply answers)
    s = timedelta(seconds=1)
    ids = store.write_documents(
        "b", [turn("Jon: I found a studio with great light.", T0, pieces=4), turn("Gina: Been to Rome once.", T0 + s)]
    )
    pieces, reply = ids[0], ids[1][0]
    read = {m.id: m for m in store.get_memories("b", [*pieces, reply])}
    assert [read[i].seq for i in pieces] == sorted(read[i].seq for i in pieces)
    assert len({read[i].seq for i in pieces}) == 4
    listed, _ = store.list_memories("b", MemoryFilter(), query=None, limit=10, offset=0)
    assert {m.id: m.seq for m in listed} == {i: read[i].seq for i in read}
    joined = previous_turns([read[reply]], list(read.values()))[reply]
    assert joined == "Jon: " + " ".join(f"I found a studio with great light. ({n})" for n in range(4))
