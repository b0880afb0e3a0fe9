"""The main job end to end: the demo on the bundled sample and on a real LoCoMo file, and `mindbank import`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from mindbank.cli import main
from mindbank.config import Settings
from mindbank.demo import run_demo
from mindbank.service.facade import MindBank


def test_demo_on_the_bundled_sample_passes_its_checks() -> None:
    out = io.StringIO()
    assert run_demo(console=Console(file=out, width=120)) == 0
    text = out.getvalue()
    assert "all checks passed" in text
    assert "What matters to Priya" in text and "[mem:" in text
    # the narrow model opens with its answer: the first lines printed name the training and quote Priya on it
    narrow = text.split("What is Priya training for, and how is it going? — first lines:")[1].split("─")[0]
    assert "Training" in narrow and "Priya:" in narrow


def test_demo_on_a_locomo_conversation(conv26: Path) -> None:
    out = io.StringIO()
    assert run_demo(str(conv26), console=Console(file=out, width=120)) == 0
    assert "Caroline" in out.getvalue() and "Melanie" in out.getvalue()


def test_import_command_loads_jsonl_chat(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    chat = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "I moved to Lisbon last month.", "timestamp": "2025-05-01T10:00:00Z"},
        {"role": "assistant", "content": "Lisbon is lovely in spring.", "timestamp": "2025-05-01T10:00:05Z"},
    ]
    chat.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    db = tmp_path / "cli.db"
    assert main(["import", str(chat), "--bank", "chat", "--database", str(db)]) == 0
    mb = MindBank.open(Settings(database_url=str(db)), embedder=embedder)
    try:
        hits = mb.recall("chat", "Where did the user move?")
        assert "Lisbon" in hits[0].memory.text
        assert {h.memory.fact_type for h in hits} == {"world", "experience"}
    finally:
        mb.close()
    assert main(["import", str(tmp_path / "missing.jsonl"), "--bank", "x", "--database", str(db)]) == 2


def test_console_script_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mindbank.cli", "--help"], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0 and "demo" in result.stdout and "import" in result.stdout
