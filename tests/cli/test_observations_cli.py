"""``mindbank observations history|scopes|clear`` and ``mindbank memories clear`` against a live server."""

from __future__ import annotations

import pytest
from test_cli import Cli

from mindbank.service.facade import MindBank


@pytest.fixture
def cli(idle_server: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(idle_server, capsys)


def test_observations(cli: Cli, mindbank: MindBank) -> None:
    assert cli("retain", "Xavier: I live in Paris with my partner.", "--tag", "user:xavier")[0] == 0
    mindbank.run_pending()
    assert cli("retain", "Xavier: I moved to Berlin with my partner.", "--tag", "user:xavier")[0] == 0
    mindbank.run_pending()
    code, out, _ = cli("observations", "scopes")
    assert code == 0 and "user:xavier" in out and "1 of 1" in out
    (observation,) = mindbank.list_memories("b", types=["observation"])[0]
    code, out, _ = cli("observations", "history", observation.id)
    assert code == 0 and "was: Xavier: I live in Paris with my partner." in out
    assert "+ " in out and "Xavier: I moved to Berlin with my partner." in out
    (change,) = cli.json("observations", "history", observation.id)
    paris = change["previous_source_memory_ids"][0]
    code, out, _ = cli("observations", "history", paris)
    assert code == 0 and "no changes recorded" in out
    code, out, _ = cli("observations", "clear", "--memory", paris)
    assert code == 0 and "deleted 1 observation(s)" in out
    mindbank.run_pending()
    assert cli.json("observations", "clear")["deleted_count"] == 1


def test_memories(cli: Cli, mindbank: MindBank) -> None:
    for text in ("Xavier: I live in Paris with my partner.", "Xavier: I moved to Berlin with my partner."):
        assert cli("retain", text)[0] == 0
        mindbank.run_pending()
    with pytest.raises(SystemExit) as refused:
        cli("memories", "clear", "--type", "opinion")
    assert refused.value.code == 2
    code, out, _ = cli("memories", "clear", "--type", "world")
    assert code == 0 and "Deleted 2 world memories" in out
    code, out, _ = cli("memories", "clear")  # the observation its facts left, until consolidation detached them
    assert code == 0 and "Deleted 1 memory from bank 'b'" in out
    code, out, _ = cli("memories", "clear")
    assert code == 0 and "Deleted 0 memories" in out
