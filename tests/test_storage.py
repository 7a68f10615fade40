"""Storage off the match path (issue 9, finding 4), through the real CLI with real bots.

Before: SQLite commits and replay writes ran on the trio thread that drives every match. A
database locked by another process for longer than the busy timeout froze the referee, then
it exited 1 with a traceback and lost the matches in flight; a full disk did the same and
left partial `.tmp` replay files. Now one storage worker does every write: a locked database
pauses storing (with a warning) while matches keep playing, and everything is stored once
the lock is released; a disk that stays full stops the tournament cleanly (exit 1, one clear
line saying how to resume, no `.tmp` left), and the same command later finishes it with
every match stored exactly once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_e2e_support import (
    ARENA,
    CLI_TIMEOUT,
    arena,
    bot_cmd,
    explain,
    read_replay,
    stored_count,
    stored_matches,
    write_config,
)

from arena.replay import load_replay, verify_replay

pytestmark = pytest.mark.e2e

BOTS = {"first": bot_cmd("first_legal"), "second": bot_cmd("first_legal")}
LOCK_S = 6.0  # how long the other process holds the database: 30 x the busy timeout

LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""




def _start(config: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(ARENA), "tournament", str(config), "--no-progress"],
        cwd=config.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def _wait_for(condition: object, what: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + CLI_TIMEOUT
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, f"the referee ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@contextlib.contextmanager
def _running(config: Path) -> Iterator[subprocess.Popen[str]]:
    process = _start(config)
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


def test_a_database_locked_by_another_process_pauses_storing_but_not_the_matches(
    tmp_path: Path,
) -> None:
    """Another process holds `BEGIN EXCLUSIVE` on the database for 6 s, 30 times the
    configured busy timeout (200 ms), while a real tournament runs. The referee is not
    frozen: matches keep finishing while the lock is held (their finished_at falls inside
    the lock window); the console says storing paused and resumed, the log has a
    `storage_paused` warning; once the lock is released every match is stored (one row and
    one replay per match) and the run exits 0. (12 matches, two at a time: the lock is taken
    once the first is stored, with ten or more still to play, so at least two end inside the
    6 s window however fast the machine; the test asserts both.)"""
    games = 12
    config = write_config(
        tmp_path, name="locked", bots=BOTS, variants=["argentine-1v1"], games=games,
        concurrency=2, extra="\n[storage]\nbusy_timeout_ms = 200\nretry_ms = 120000\n",
    )
    database = tmp_path / "arena.db"
    with _running(config) as process:
        _wait_for(lambda: stored_count(database) >= 1, "the first stored match", process)
        with subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(database), str(LOCK_S)],
            stdout=subprocess.PIPE, text=True,
        ) as locker:
            assert locker.stdout is not None
            assert locker.stdout.readline().strip() == "locked"
            lock_start = time.time()
            stored_at_lock = stored_count(database)
            assert locker.wait(timeout=CLI_TIMEOUT) == 0
            lock_end = time.time()
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    run = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    assert process.returncode == 0, explain(run)
    assert stored_at_lock < games, "the tournament ended before the lock: make it longer"
    rows = stored_matches(database)
    assert len(rows) == games == len({r["id"] for r in rows})
    assert len({r["replay"] for r in rows}) == games
    during = [r for r in rows if lock_start < r["finished_at"] < lock_end]
    assert len(during) >= 2, (
        f"only {len(during)} matches finished during the {LOCK_S} s lock: the referee froze"
    )
    assert "storing paused: the database is locked" in err, explain(run)
    assert "storing resumed" in err, explain(run)
    assert "Traceback" not in err
    log_text = (tmp_path / "logs" / "locked.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in log_text.splitlines()]
    paused = [e for e in events if e.get("event") == "storage_paused"]
    assert paused
    assert all(e["level"] == "warning" and e["reason"] == "locked" for e in paused)
    for row in rows[:3]:
        verify_replay(load_replay(Path(row["replay"])))


@contextlib.contextmanager
def _small_disk(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted on `folder` (root only; skipped where mounting is
    impossible)."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_stops_the_tournament_cleanly_and_it_resumes_later(tmp_path: Path) -> None:
    """The database and replays live on an 8 MiB tmpfs that a filler file leaves almost full.
    When it fills up, storing retries for storage.retry_ms (1 s) and then the tournament
    stops cleanly: exit 1, one error line saying what failed and to run the same command
    again, no traceback, no `.tmp` replay left. After space is freed, the same command
    finishes the tournament: every match stored exactly once, each with its replay."""
    games = 12  # ~32 KiB a replay: the 160 KiB left fill up within the first 5 or 6
    with _small_disk(tmp_path / "disk", "8m") as disk:
        filler = disk / "filler"
        with filler.open("wb") as out:
            out.write(b"\0" * (8 * 1024 * 1024 - 160 * 1024))
        config = write_config(
            tmp_path, name="full", bots=BOTS, variants=["argentine-1v1"], games=games,
            concurrency=2, extra="\n[storage]\nbusy_timeout_ms = 200\nretry_ms = 1000\n",
        )
        text = config.read_text(encoding="utf-8")
        text = text.replace('database = "arena.db"', 'database = "disk/arena.db"')
        text = text.replace('replays = "replays"', 'replays = "disk/replays"')
        config.write_text(text, encoding="utf-8")

        first = arena("tournament", config, "--no-progress", cwd=tmp_path)
        assert first.returncode == 1, explain(first)
        assert "Traceback" not in first.stderr, explain(first)
        errors = [ln for ln in first.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1, explain(first)
        assert "storing results failed" in errors[0], explain(first)
        assert "run the same command again to resume" in errors[0], explain(first)
        assert not list((disk / "replays").rglob("*.tmp")), "a partial replay was left"
        stored = stored_count(disk / "arena.db")
        assert 0 <= stored < games

        filler.unlink()
        second = arena("tournament", config, "--no-progress", cwd=tmp_path)
        assert second.returncode == 0, explain(second)
        # (On a loaded machine the disk can fill before the first match is stored: the same
        # command then starts the tournament over, saying so, and stores every match once.)
        if stored:
            assert f"resuming full: {stored} matches already stored" in second.stderr
        else:
            assert f"full: {games} matches to play" in second.stderr
        rows = stored_matches(disk / "arena.db")
        assert len(rows) == games == len({r["id"] for r in rows})
        replays = sorted((disk / "replays").rglob("*.jsonl"))
        assert len(replays) == games
        assert not list((disk / "replays").rglob("*.tmp"))
        for row in rows:
            lines = read_replay(Path(row["replay"]))
            assert lines[0]["match_id"] == row["id"]
            assert lines[-1]["type"] == "result"
