"""Helpers for the end-to-end tests (tests/test_e2e_*.py): the real `arena` CLI in a
subprocess, tournament configs written under a test's tmp_path, and readers for what a run
leaves behind (the SQLite database, replay files).

Nothing here writes into the repository: every config puts its database, replays and logs next
to itself, under tmp_path. Bots are given by absolute path, so the CLI may run in any folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TEST_BOTS = REPO / "tests" / "bots"
SAMPLE_BOTS = REPO / "sample_bots"
ARENA = Path(sys.executable).parent / "arena"
JS_BOT = SAMPLE_BOTS / "js_random" / "bot.js"
HEURISTIC_BOT = SAMPLE_BOTS / "heuristic_bot.py"
ALL_VARIANTS = ("argentine-1v1", "argentine-2v2", "mineiro-1v1", "mineiro-2v2")
# Short matches: one Argentine chico to 15 (Mineiro games are always to 12).
SHORT = {"target": 15, "chicos": 1}
# The referee's variables the tests' bots read (the sandbox clears the environment).
PASS_ENV = (
    "ARENA_BOT_SEED", "ARENA_E2E_MARK", "HOSTILE_DUMP_DIR", "SPY_DUMP_DIR",
    "PYTHONDONTWRITEBYTECODE",
)
CLI_TIMEOUT = 240  # seconds: a hung run fails the test instead of hanging the suite


FIXED_KEY = "c3" * 32  # the deals' secret of the tests' tournaments (see write_config)


def python_bot(path: Path, *args: str) -> list[str]:
    """The command of a Python bot (the referee runs `python` as its own interpreter)."""
    return ["python", str(path), *args]


def bot_cmd(name: str) -> list[str]:
    """The command of one of the bots in tests/bots/ (`bot_cmd("silent")`)."""
    return python_bot(TEST_BOTS / f"{name}.py")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def write_config(
    folder: Path,
    *,
    name: str,
    bots: Mapping[str, Sequence[str]],
    variants: Sequence[str] = ALL_VARIANTS,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    games: int = 1,
    concurrency: int = 4,
    decision_ms: int = 1000,
    max_strikes: int = 3,
    seed: int = 2026,
    extra: str = "",
    writable: Sequence[str] = (),
    secret_file: Path | None = None,
    fixed_secret: bool = True,
    duplicate: bool | None = None,
) -> Path:
    """Write `folder/<name>.toml`; database, replays and logs go in `folder` too. Launched
    bots get the tests' variables (`PASS_ENV`) through the sandbox; `writable` names folders
    (relative to `folder`) they may write into (a dump folder). Unless `secret_file` is given
    or `fixed_secret` is False (the secret then lives in the database, new for every
    tournament), the deals' secret is FIXED_KEY in `<name>.key`, so a test plays the same
    deals every run. `duplicate` writes `tournament.duplicate` (unset: the default, false)."""
    if secret_file is None and fixed_secret:
        secret_file = folder / f"{name}.key"
        secret_file.write_text(FIXED_KEY + "\n", encoding="ascii")
    if options is None:
        options = {v: SHORT for v in variants if v.startswith("argentine")}
    lines = [
        "[tournament]",
        f"name = {_toml(name)}",
        f"seed = {seed}",
        f"matches_per_pair = {games}",
        f"variants = {_toml(list(variants))}",
        f"concurrency = {concurrency}",
        'database = "arena.db"',
        'replays = "replays"',
        'logs = "logs"',
        *([f"secret_file = {_toml(str(secret_file))}"] if secret_file else []),
        *([f"duplicate = {_toml(duplicate)}"] if duplicate is not None else []),
        "",
        "[time_control]",
        f"decision_ms = {decision_ms}",
        "",
        "[faults]",
        f"max_strikes = {max_strikes}",
        "",
        "[sandbox]",
        f"pass_env = {_toml(list(PASS_ENV))}",
        f"writable = {_toml(list(writable))}",
        "",
    ]
    for variant, opts in options.items():
        lines.append(f"[options.{variant}]")
        lines.extend(f"{key} = {_toml(value)}" for key, value in opts.items())
        lines.append("")
    for bot_name, command in bots.items():
        lines += ["[[bot]]", f"name = {_toml(bot_name)}", f"command = {_toml(list(command))}", ""]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + extra, encoding="utf-8")
    return path


def arena(
    *args: str | Path, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the `arena` CLI to completion; stdout and stderr captured as text. (No bytecode
    written: the bots it launches import from the repository, which the tests leave alone.)"""
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(
        [str(ARENA), *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def explain(run: subprocess.CompletedProcess[str]) -> str:
    """Both outputs of a run, for assertion messages."""
    return f"exit {run.returncode}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"


def flat(text: str) -> str:
    """`text` with every run of whitespace made one space (rich wraps long lines)."""
    return " ".join(text.split())


def stored_matches(database: Path) -> list[dict[str, Any]]:
    """Every row of the matches table, as dicts, in id order."""
    with closing(sqlite3.connect(database)) as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT * FROM matches ORDER BY id").fetchall()
        return [dict(row) for row in rows]


def against_random(
    tmp_path: Path, name: str, command: list[str], *, decision_ms: int,
    opponent: tuple[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """Two one-chico matches (argentine-1v1 to 15, both at once) of the launched bot
    `command`, called `name`, against the random sample bot (or `opponent`: a name and a
    command), played by a real `arena tournament` in `tmp_path`; returns the stored rows
    (two, asserted). Logs land in tmp_path/logs/<name>.jsonl. The set-up of the tests that
    send a hostile bot in."""
    other, other_command = opponent or ("random", python_bot(SAMPLE_BOTS / "random_bot.py"))
    bots = {name: command, other: other_command}
    config = write_config(tmp_path, name=name, bots=bots, variants=["argentine-1v1"],
                          options={"argentine-1v1": {"target": 15, "chicos": 1}},
                          games=2, concurrency=2, decision_ms=decision_ms)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 2, rows
    return rows


def safe(text: str) -> str:
    """How the runner turns a tournament name or match id into a file name: a readable
    prefix and a hash of the exact text (runner.file_stem)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', text)[:48]}-{digest}"


def expected_ids(
    tournament: str, bots: Iterable[str], variants: Iterable[str], games: int
) -> set[str]:
    """The match ids of a round robin: every pair, every variant, `games` times (each part
    escapes `%` and `:`)."""
    names = list(bots)

    def esc(part: str) -> str:
        return part.replace("%", "%25").replace(":", "%3A")

    return {
        f"{esc(tournament)}:{variant}:{esc(a)}:{esc(b)}:{k}"
        for variant in variants
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        for k in range(games)
    }


def read_replay(path: Path) -> list[dict[str, Any]]:
    """The lines of a replay file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def processes_with(mark: str) -> list[str]:
    """Command lines of the running processes whose environment has ARENA_E2E_MARK=mark
    (the tests mark every bot they launch, to find any that outlived its tournament)."""
    needle = f"ARENA_E2E_MARK={mark}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


def stored_count(database: Path) -> int:
    """How many matches `database` holds, read without writing to it (0 before it exists)."""
    if not database.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as db:
            return int(db.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def poll(condition: Callable[[], bool], timeout: float, what: str, every: float = 0.02) -> None:
    """Wait for `condition` about another process or thread (nothing to await: poll it);
    fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


@contextmanager
def tournament_with_web(
    tmp_path: Path, config: Path, name: str = ""
) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """`arena tournament CONFIG --no-progress --web 0` in its own process, its output in
    ``tmp_path/run.log``: yields the process, the web address it printed (for tournament
    `name`) and the log; on leaving, waits for the tournament to end and asserts it ended
    normally (exit 0, the log in the message if not)."""
    log = tmp_path / "run.log"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen([str(ARENA), "tournament", str(config), "--no-progress",
                                 "--web", "0"], cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 120
        pattern = rf"arena web: (http://\S+?)/t/{re.escape(name)}"
        while not (m := re.search(pattern, log.read_text())):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield proc, m.group(1), log
    finally:
        assert proc.wait(timeout=300) == 0, log.read_text()
