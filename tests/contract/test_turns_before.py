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
from mindbank.store.base import Store


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
