"""The complete Argentine variants end to end: flor, gallo, 3v3 and 4v4 through the real CLI,
referee and bot processes (Python heuristic bot and the JavaScript bot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.store import Store

ROOT = Path(__file__).resolve().parent.parent
NEW_VARIANTS = ("argentine-2v2-flor", "argentine-gallo", "argentine-3v3", "argentine-4v4")


@pytest.mark.e2e
def test_new_variants_play_to_the_end_with_python_and_js_bots(tmp_path: Path) -> None:
    """Every new variant plays to a normal end with seats filled from both sides; gallo seats
    the first bot alone and the second in the pair's two seats, alternating between games;
    every replay (private gallo discard and signals included) verifies."""
    options = "\n".join(
        f'[options.{v}]\ntarget = 15\nchicos = 1\n' for v in NEW_VARIANTS
    )
    config = tmp_path / "new.toml"
    config.write_text(
        f"""
[tournament]
name = "new"
games = 2
variants = {json.dumps(list(NEW_VARIANTS))}
concurrency = 2

{options}

[[bot]]
name = "heuristic"
command = ["python", "{ROOT / 'sample_bots' / 'heuristic_bot.py'}"]

[[bot]]
name = "js"
command = ["node", "{ROOT / 'sample_bots' / 'js_random' / 'bot.js'}"]
"""
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", str(config), "--no-progress"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = Store(tmp_path / "arena.db").matches("new")
    assert sorted(r.variant for r in rows) == sorted(NEW_VARIANTS * 2)
    assert {r.termination for r in rows} == {"normal"}
    assert all(r.winner_bot in (0, 1) for r in rows)
    seats = {len(r.seat_bots) for r in rows}
    assert seats == {3, 4, 6, 8}
    for row in rows:
        if row.variant == "argentine-gallo":
            assert row.seat_bots == (row.bot0, row.bot1, row.bot1)
    assert {r.bot0 for r in rows if r.variant == "argentine-gallo"} == {"heuristic", "js"}
    replays = sorted((tmp_path / "replays").glob("new-*/*.jsonl"))  # new-<hash>/
    assert len(replays) == len(rows)
    for replay in replays:
        check = subprocess.run(
            [sys.executable, "-m", "arena.cli", "replay", "--quiet", str(replay)],
            capture_output=True, text=True, timeout=60,
        )
        assert check.returncode == 0, check.stdout + check.stderr
