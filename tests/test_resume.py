"""Kill and resume: a tournament cut short by SIGKILL or Ctrl-C, then the same command again.

Each run is the real `arena tournament` CLI in a subprocess (its own session and process
group), with deterministic bots: tests/bots/first_legal.py and the sample random bot seeded
with ARENA_BOT_SEED, each launched by the referee once per seat. The tournament has 6
matches (2 bots x 2 variants x 3 games), two at a time: once 2 are stored, at most 2 more
are in flight, so an interrupted run always leaves some to play. The test watches the
SQLite database read-only and interrupts the referee once some but not all matches are
stored and one is in flight; the run after it must finish the tournament as if nothing had
happened: the same rows as an uninterrupted run of the same config in another folder
(module fixture `reference`), but for the matches in flight when it stopped, which are dealt
anew (the runner's `attempt`: their bots saw those hands).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

import pytest
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    bot_cmd,
    expected_ids,
    explain,
    flat,
    poll,
    processes_with,
    python_bot,
    read_replay,
    safe,
    stored_count,
    stored_matches,
    write_config,
)

from arena.tournament import Store, standings
from arena.tournament.runner import file_stem

pytestmark = pytest.mark.e2e

NAME = "resumable"
BOTS = {"first": bot_cmd("first_legal"), "random": python_bot(SAMPLE_BOTS / "random_bot.py")}
VARIANTS = ("argentine-1v1", "mineiro-1v1")
GAMES = 3
TOTAL = len(VARIANTS) * GAMES  # one pair of bots
BOT_SEED = "11"
OUTCOME = (
    "variant",
    "bot0",
    "bot1",
    "seed",
    "termination",
    "winner_bot",
    "faulty_bot",
    "points0",
    "points1",
    "games0",
    "games1",
    "strikes",
    "decisions",
)


KEY = "5e" * 32  # the deals' secret, shared by the interrupted and the reference runs


def _config(folder: Path) -> Path:
    """The tournament's config in `folder`, with the same key file as every other folder (the
    deals depend on the secret: same config + same secret = same matches)."""
    key = folder / "arena.key"
    if not key.exists():
        key.write_text(KEY + "\n", encoding="ascii")
    return write_config(folder, name=NAME, bots=BOTS, variants=VARIANTS, games=GAMES,
                        concurrency=2, secret_file=key)


def _env(mark: str) -> dict[str, str]:
    return {"ARENA_BOT_SEED": BOT_SEED, "ARENA_E2E_MARK": mark}






def _start(config: Path, mark: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **_env(mark)}
    return subprocess.Popen(
        [str(ARENA), "tournament", str(config), "--no-progress"],
        cwd=config.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as in a shell
    )


def _interrupt(folder: Path, sig: signal.Signals) -> tuple[subprocess.Popen[str], str, str, str]:
    """Start the tournament in `folder`, send `sig` to its process group once 2 matches are
    stored and another has begun, and wait for it to end: (process, stdout, stderr, the
    bots' marker)."""
    mark = os.urandom(8).hex()
    process = _start(_config(folder), mark)
    database = folder / "arena.db"
    try:
        poll(  # and a match begun, not stored: in flight when stopped
            lambda: (stored_count(database) >= 2
                     and len(_begun(folder)) > stored_count(database))
            or process.poll() is not None,
            CLI_TIMEOUT,
            "the first stored matches and one in flight",
        )
        os.killpg(process.pid, sig)
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    stored = stored_count(database)
    assert 0 < stored < TOTAL, (
        f"{stored} of {TOTAL} matches were stored when the referee was stopped: the test "
        f"needs some but not all\n{err}"
    )
    return process, out, err, mark


def _rows(folder: Path) -> dict[str, dict[str, Any]]:
    rows = stored_matches(folder / "arena.db")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    return {r["id"]: r for r in rows}


def _actions(path: str) -> list[tuple[Any, ...]]:
    return [
        (ln["game"], ln["hand"], ln["seat"], ln["action"]["text"])
        for ln in read_replay(Path(path))
        if ln["type"] == "action"
    ]


def _standings(folder: Path) -> dict[str | None, list[tuple[Any, ...]]]:
    store = Store(folder / "arena.db")
    try:
        rows = store.matches(NAME)
    finally:
        store.close()
    # Latency is measured, not played: it differs from run to run.
    return {v: [astuple(replace(line, latency={})) for line in standings(rows, v)]
            for v in (*VARIANTS, None)}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tournament, played without interruption."""
    folder = tmp_path_factory.mktemp("reference")
    run = arena(
        "tournament", _config(folder), "--no-progress", cwd=folder, env=_env(os.urandom(8).hex())
    )
    assert run.returncode == 0, explain(run)
    return folder


def _check_resumed(folder: Path, reference: Path, stored_before: int) -> None:
    """Run the same command again and check the tournament is whole and the same as the
    uninterrupted one, but for the matches begun and not stored before: dealt anew."""
    begun_before = _begun(folder)
    stored_ids = set(_rows(folder))
    assert len(stored_ids) == stored_before
    assert stored_ids <= begun_before, (stored_ids, begun_before)
    mark = os.urandom(8).hex()
    again = arena("tournament", _config(folder), "--no-progress", cwd=folder, env=_env(mark))
    assert again.returncode == 0, explain(again)
    assert (
        f"resuming {NAME}: {stored_before} matches already stored, {TOTAL - stored_before} to play"
    ) in flat(again.stderr), explain(again)
    rows = _rows(folder)
    assert set(rows) == expected_ids(NAME, BOTS, VARIANTS, GAMES)
    # Replays: one per row, none half-written, each accepted by `arena replay`.
    replays = folder / "replays" / safe(NAME)
    assert not list(replays.glob("*.tmp")), "a half-written replay was left behind"
    assert sorted(p.name for p in replays.iterdir()) == sorted(f"{safe(i)}.jsonl" for i in rows)
    checks = {  # `arena replay --quiet` on every replay, all at once
        row["replay"]: subprocess.Popen(
            [str(ARENA), "replay", "--quiet", row["replay"]],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for row in rows.values()
    }
    for path, check in checks.items():
        output, _ = check.communicate(timeout=CLI_TIMEOUT)
        assert check.returncode == 0, (path, output)
        assert "replay check: OK" in output, (path, output)
    # The same tournament as the uninterrupted one, but for the matches the interrupted
    # run had begun and not stored: those are dealt anew (their bots saw those hands).
    expected = _rows(reference)
    anew = {e["match_id"]: e["attempt"] for e in _events(folder)
            if e["event"] == "match_dealt_anew"}
    assert anew, (begun_before, stored_ids)
    assert set(anew) == begun_before - stored_ids, (anew, begun_before, stored_ids)
    assert set(anew.values()) <= {2}, anew
    for match_id, row in rows.items():
        assert row["termination"] == "normal", row
        assert json.loads(row["strikes"]) == [0, 0], row
        if match_id in anew:
            assert row["seed"] != expected[match_id]["seed"], match_id
            assert read_replay(Path(row["replay"]))[0]["seed"] == str(row["seed"]), match_id
            continue
        assert [row[c] for c in OUTCOME] == [expected[match_id][c] for c in OUTCOME], match_id
        assert _actions(row["replay"]) == _actions(expected[match_id]["replay"]), match_id
    if not anew:
        assert _standings(folder) == _standings(reference)
    assert processes_with(mark) == []


def _begun(folder: Path) -> set[str]:
    """The ids of the matches the tournament in `folder` has begun (its begun marks), of the
    schedule's."""
    stems = {file_stem(i): i for i in expected_ids(NAME, BOTS, VARIANTS, GAMES)}
    return {stems[p.name] for p in (folder / "logs").rglob("begun/*/*") if p.name in stems}


def _events(folder: Path) -> list[dict[str, Any]]:
    """Every event of the tournament's log files in `folder` (both runs)."""
    return [json.loads(line) for path in sorted((folder / "logs").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("{")]


def test_sigkill_then_the_same_command_finishes_the_tournament(
    tmp_path: Path, reference: Path
) -> None:
    """SIGKILL to the referee's process group once some matches are stored (nothing can be
    cleaned up), then the same command again: it resumes from the stored matches; the
    tournament ends with exactly one row per scheduled match (none lost, none twice), one
    replay per row and no half-written one (no *.tmp left; `arena replay --quiet` accepts
    each), and the same results, actions and standings as an uninterrupted run. The bots
    of the killed referee exit on their own, even those still starting when it died (a
    launched bot does not wait for a referee that is gone: ARENA_LAUNCHED)."""
    process, _out, _err, mark = _interrupt(tmp_path, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    poll(lambda: not processes_with(mark), 30, "the killed referee's bots to exit")
    stored = stored_count(tmp_path / "arena.db")
    _check_resumed(tmp_path, reference, stored)


def test_ctrl_c_says_how_to_resume_and_leaves_no_bot_behind(
    tmp_path: Path, reference: Path
) -> None:
    """Ctrl-C (SIGINT to the referee's process group) once some matches are stored: the
    referee exits non-zero, says where the finished matches are and to run the same command
    again, and has stopped every bot it launched before exiting; the same command then
    finishes the tournament, equal to an uninterrupted run."""
    process, _out, err, mark = _interrupt(tmp_path, signal.SIGINT)
    assert process.returncode not in (0, None), err
    assert process.returncode > 0, f"killed by a signal ({process.returncode}), not an exit"
    assert "interrupted" in flat(err), err
    assert "run the same command again to resume" in flat(err), err
    assert processes_with(mark) == [], "bot processes outlived the interrupted referee"
    stored = stored_count(tmp_path / "arena.db")
    _check_resumed(tmp_path, reference, stored)


def test_resuming_under_other_rules_is_refused_naming_what_changed(tmp_path: Path) -> None:
    """A hostile review (round 4) stopped a tournament, changed decision_ms 1000 -> 200 and
    the target 15 -> 30, and ran the same command again: it resumed without a word, and one
    standings table mixed matches played both ways. Now the run is refused before anything is
    played, in one line naming each changed key with its old and new value, and the stored
    matches are kept as they were. Adding a variant or more matches per pair only adds
    matches: that resumes."""
    bots = {"first": bot_cmd("first_legal"), "second": bot_cmd("first_legal")}
    config = write_config(tmp_path, name="rules", bots=bots, variants=["argentine-1v1"],
                          games=1, concurrency=2)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    before = stored_matches(tmp_path / "arena.db")
    assert len(before) == 1
    changed = write_config(tmp_path, name="rules", bots=bots, variants=["argentine-1v1"],
                           games=1, concurrency=2, decision_ms=200,
                           options={"argentine-1v1": {"target": 30, "chicos": 1}})
    run = arena("tournament", changed, "--no-progress", cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    message = flat(run.stderr)
    assert "tournament 'rules' was begun with other settings" in message, message
    assert "options.argentine-1v1.target: 15 -> 30" in message, message
    assert "time_control.decision_ms: 1000 -> 200" in message, message
    assert "--fresh" in message, message
    assert "Traceback" not in run.stderr
    assert stored_matches(tmp_path / "arena.db") == before
    more = write_config(tmp_path, name="rules", bots=bots,
                        variants=["argentine-1v1", "mineiro-1v1"], games=2, concurrency=2)
    run = arena("tournament", more, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    after = stored_matches(tmp_path / "arena.db")
    assert len(after) == 4
    assert before[0] in after


def test_resuming_with_a_changed_program_is_refused(tmp_path: Path) -> None:
    """A bot's program file changed since the stored matches (a recompiled binary, an
    edited script) with the same command line: the resumed run is refused in one line
    naming the bot's program and both hashes (an outside walkthrough recompiled `./bot` and
    resumed without a word, one table mixing matches of two programs); put back, it
    resumes."""
    script = tmp_path / "mine.py"
    original = (TEST_BOTS / "first_legal.py").read_text(encoding="utf-8")
    script.write_text(original, encoding="utf-8")
    bots = {"mine": ["python", str(script)], "first": bot_cmd("first_legal")}
    config = write_config(tmp_path, name="prog", bots=bots, variants=["argentine-1v1"],
                          games=1, concurrency=2)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    before = stored_matches(tmp_path / "arena.db")
    script.write_text(original + "\n# version 2\n", encoding="utf-8")
    run = arena("tournament", config, "--no-progress", "--matches-per-pair", "2",
                cwd=tmp_path)
    assert run.returncode == 2, explain(run)
    message = flat(run.stderr)
    assert "was begun with other settings" in message, message
    assert re.search(r"bot 'mine'\.program: 'sha256 [0-9a-f]{16} of mine\.py' -> "
                     r"'sha256 [0-9a-f]{16} of mine\.py'", message), message
    assert stored_matches(tmp_path / "arena.db") == before
    script.write_text(original, encoding="utf-8")
    run = arena("tournament", config, "--no-progress", "--matches-per-pair", "2",
                cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert len(stored_matches(tmp_path / "arena.db")) == 2
