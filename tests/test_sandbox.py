"""The sandbox of launched bots (arena/tournament/sandbox.py, cgroups.py, launcher.py).

From the outside first: a HOSTILE bot process (tests/bots/hostile_escape.py) plays a real
tournament (the `arena tournament` CLI in a subprocess, a real SQLite file, real bot
processes) beside honest bots. It hunts tokens in /proc, opens the config and the database by
their absolute paths, leaves a setsid grandchild, floods stdout with 50 MiB and allocates
4 GB. Then the parts one by one: a stock JVM under the default limits, the private temp dir,
mode "none" still killing a setsid grandchild through the seat's cgroup, refusing to run
without bubblewrap unless allowed, and the config keys.

bubblewrap is required (`make install` installs it as root); these tests do not skip
without it, they fail.
"""

from __future__ import annotations

import ast
import os
import re
import secrets
import shutil
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import pytest
import trio
from test_e2e_support import (
    JS_BOT,
    SAMPLE_BOTS,
    TEST_BOTS,
    arena,
    explain,
    python_bot,
    stored_matches,
    write_config,
)

from arena.errors import ConfigError
from arena.tournament.cgroups import find_cgroups
from arena.tournament.config import parse_config
from arena.tournament.launcher import (
    TAIL_BYTES,
    BotLimits,
    SeatProcess,
    program_dir,
    resolve_command,
)
from arena.tournament.sandbox import Sandbox

MIB = 1024 * 1024


def _with_marker(marker: str) -> list[str]:
    """Command lines of host processes that have `marker` in their argv."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv:
            found.append(b" ".join(argv).decode(errors="replace"))
    return found


def _gone(marker: str, seconds: float = 10) -> list[str]:
    """Processes with `marker` still there after up to `seconds` (SIGKILL is asynchronous)."""
    deadline = time.monotonic() + seconds
    while (left := _with_marker(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.e2e
def test_hostile_bot_finds_nothing_takes_nothing_leaves_nothing(tmp_path: Path) -> None:
    """In a real tournament, a hostile launched bot sees no other process (so no token, no
    seed), cannot open the config file or arena.db by absolute path, leaves no setsid
    grandchild and no temp file behind, gets a log capped at 10 MiB + the 64 KiB tail with
    the marker line, cannot allocate 4 GB, and no honest bot is ever charged a fault."""
    marker = f"arena-escape-{secrets.token_hex(6)}"
    name = "escape"
    config_path = tmp_path / f"{name}.toml"
    database = tmp_path / "arena.db"
    # The hostile bot's own folder holds the config, the database, logs and replays (as
    # sample_bots/ holds tournament.toml): the sandbox must leave them out of its view.
    shutil.copy(TEST_BOTS / "hostile_escape.py", tmp_path / "hostile_escape.py")
    bots = {
        "hostile": ["python", "hostile_escape.py", str(config_path), str(database), marker],
        "random": python_bot(SAMPLE_BOTS / "random_bot.py"),
        "js-random": ["node", str(JS_BOT)],
    }
    write_config(tmp_path, name=name, bots=bots, variants=["argentine-1v1"], games=1,
                 concurrency=2)
    assert config_path.exists()
    # Given by a relative path (as `make run` does): the bots' folder is relative too.
    run = arena("tournament", config_path.name, "--no-progress", cwd=tmp_path,
                env={"ARENA_BOT_SEED": "5"})
    assert run.returncode == 0, explain(run)

    logs = sorted((tmp_path / "logs").rglob("*.hostile.log"))
    assert len(logs) == 2, logs  # the hostile bot played two matches, one seat each
    for log in logs:
        data = log.read_bytes()
        head = data[: data.index(b"SCAN DONE")].decode()
        # Nothing found: no token anywhere, no other process but the sandbox's own init.
        assert "FOUND" not in head, head
        others = [line for line in head.splitlines() if line.startswith("PROC other")]
        assert all(line.split(" ", 3)[3].startswith(shutil.which("bwrap") or "bwrap")
                   for line in others), others
        assert len(others) <= 1, others
        assert f"absent {config_path}" in head, head
        assert f"absent {database}" in head, head
        # Output capped: 10 MiB, one marker line, then the tail of the rest.
        assert len(data) <= 10 * MIB + TAIL_BYTES + 1024, len(data)
        assert data.count(b"[arena] output truncated after 10485760 bytes") == 1
        # 4 GB was not granted (killed by the cgroup, or MemoryError).
        assert b"ALLOC 4096 MiB" not in data, data[-2000:]
    assert not _gone(marker), "a setsid grandchild outlived the tournament"
    assert not list(Path(tempfile.gettempdir()).glob(f"arena-run-*/seat-*/{marker}"))

    rows = stored_matches(database)
    assert len(rows) == 3
    assert all(row["faulty_bot"] in (None, "hostile") for row in rows), rows
    honest = [r for r in rows if "hostile" not in (r["bot0"], r["bot1"])]
    assert honest
    assert all(r["termination"] == "normal" for r in honest), honest
    with closing(sqlite3.connect(database)) as db:
        (config_json,) = db.execute("SELECT config FROM tournaments").fetchone()
    assert '"sandbox": "bubblewrap"' in config_json
    assert '"unsandboxed": false' in config_json


def _run_seat(
    argv: list[str], folder: Path, sandbox: Sandbox, *, wait_for: Path | None = None,
    limits: BotLimits | None = None, env: dict[str, str] | None = None,
) -> SeatProcess:
    """Start one seat, let it run to its end (or until `wait_for` exists), then stop it."""

    async def main() -> SeatProcess:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                argv, cwd=folder, server="127.0.0.1:9", token="tok", bot_name="b",
                log_path=folder / "seat.log", nursery=nursery, sandbox=sandbox,
                bot_dir=folder, limits=limits, env=env,
            )
            with trio.fail_after(120):
                if wait_for is None:
                    await p.process.wait()
                else:
                    while not wait_for.exists():
                        await trio.sleep(0.05)
            await p.stop(grace=0.5)
        return p

    return trio.run(main)


def test_a_stock_jvm_starts_under_the_default_limits(tmp_path: Path) -> None:
    """A Java program starts and runs in the bubblewrap sandbox under the default limits
    (2048 MB of real memory: a JVM reserves far more address space than that)."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: nothing to start")
    (tmp_path / "Hello.java").write_text(
        'class Hello { public static void main(String[] a) {'
        ' System.out.println("hello from java " + Runtime.getRuntime().maxMemory()); } }\n'
    )
    argv = resolve_command(("java", "Hello.java"), tmp_path)
    p = _run_seat(argv, tmp_path, Sandbox("bubblewrap"))
    assert p.process.returncode == 0, p.tail(20)
    assert "hello from java" in p.tail(), p.tail(20)


def test_private_temp_dir_is_home_and_is_deleted(tmp_path: Path) -> None:
    """A sandboxed seat's HOME is /tmp, a fresh private writable dir; it is deleted when the
    seat stops. The bot's own folder is read-only."""
    script = tmp_path / "home.py"
    script.write_text(
        "import os, pathlib\n"
        "home = pathlib.Path(os.environ['HOME'])\n"
        "(home / 'mine').write_text('x')\n"
        "print('HOME', home, sorted(p.name for p in home.iterdir()))\n"
        "try:\n"
        "    open('written-from-inside', 'w')\n"
        "    print('OWN DIR WRITABLE')\n"
        "except OSError as e:\n"
        "    print('own dir read-only', type(e).__name__)\n"
    )
    p = _run_seat([sys.executable, str(script)], tmp_path, Sandbox("bubblewrap"))
    found = re.search(r"HOME /tmp \[(.*)\]", p.tail())
    assert found is not None, p.tail()
    names = {n.strip().strip("'") for n in found[1].split(",")}
    assert "mine" in names, p.tail()
    # Besides what the bot wrote, only the (empty) mount points of folders bound read-only
    # into the sandbox that live under /tmp: the test's own folder, and the checkout and its
    # interpreter when the repository was cloned under /tmp (as CI may do).
    bound = [tmp_path, Path(sys.modules["arena"].__file__ or "/").resolve(),
             Path(sys.prefix).resolve()]
    mounts = {b.relative_to("/tmp").parts[0] for b in bound if b.is_relative_to("/tmp")}
    assert names - {"mine"} <= mounts, (names, mounts)
    assert "own dir read-only" in p.tail(), p.tail()
    assert not (tmp_path / "written-from-inside").exists()
    assert not p.jail.temp.exists()


def test_mode_none_kills_a_setsid_grandchild_through_the_cgroup(tmp_path: Path) -> None:
    """Without a sandbox, a bot's grandchild that left the process group (setsid) is still
    killed when the seat stops: it is in the seat's cgroup."""
    if find_cgroups() is None:
        pytest.skip("no writable cgroup here: mode none cannot track a setsid grandchild")
    marker = f"arena-setsid-{secrets.token_hex(6)}"
    ready = tmp_path / "ready"
    script = tmp_path / "detach.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: time.sleep(60)',"
        f" {marker!r}], start_new_session=True, stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL)\n"
        "time.sleep(0.5)\n"
        f"open({str(ready)!r}, 'w').close()\n"
        "time.sleep(600)\n"
    )
    _run_seat([sys.executable, str(script)], tmp_path, Sandbox("none"), wait_for=ready)
    assert not _gone(marker), "the setsid grandchild outlived its seat"


@pytest.mark.e2e
def test_auto_without_bubblewrap_refuses_unless_allowed(tmp_path: Path) -> None:
    """mode "auto" where bwrap is missing: exit 2 with one line saying how to install it;
    with allow_unsandboxed = true the tournament runs, says so loudly, and the tournament
    row records it."""
    bots = {"a": python_bot(SAMPLE_BOTS / "random_bot.py"),
            "b": python_bot(SAMPLE_BOTS / "random_bot.py")}
    config = write_config(tmp_path, name="nobwrap", bots=bots, variants=["argentine-1v1"])
    no_bwrap = {"PATH": str(tmp_path / "empty-path")}
    run = arena("tournament", config, "--no-progress", cwd=tmp_path, env=no_bwrap)
    assert run.returncode == 2, explain(run)
    message = " ".join(run.stderr.split())
    assert "bwrap (bubblewrap) is not installed" in message
    assert "apt-get install bubblewrap" in message
    assert not (tmp_path / "replays").exists()

    text = config.read_text().replace("[sandbox]\n", "[sandbox]\nallow_unsandboxed = true\n")
    config.write_text(text)
    run = arena("tournament", config, "--no-progress", cwd=tmp_path, env=no_bwrap)
    assert run.returncode == 0, explain(run)
    assert "WITHOUT a sandbox" in " ".join(run.stderr.split())
    with closing(sqlite3.connect(tmp_path / "arena.db")) as db:
        (config_json,) = db.execute("SELECT config FROM tournaments").fetchone()
    assert '"unsandboxed": true' in config_json


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"sandbox": {"mode": "jail"}}, "sandbox.mode: must be one of auto, bubblewrap, none"),
        ({"sandbox": {"allow_unsandboxed": "yes"}}, "sandbox.allow_unsandboxed: must be true"),
        ({"sandbox": {"pass_env": "HOME"}}, "sandbox.pass_env: must be a list"),
        ({"sandbox": {"writable": ["no-such-dir"]}}, "sandbox.writable: folder"),
        ({"limits": {"log_mb": -1}}, "limits.log_mb: must be at least 0"),
        ({"bot0": {"env": {"K": 1}}}, "bot[0].env: must be a table of strings"),
        ({"bot0": {"dir": "nowhere"}}, "bot[0].dir: folder"),
    ],
)
def test_sandbox_config_errors_name_the_field(
    tmp_path: Path, raw: dict[str, dict[str, object]], message: str
) -> None:
    """A bad [sandbox], [limits] log_mb or [[bot]] dir/env is refused naming the field."""
    bot0 = {"name": "a", "command": ["python", "a.py"], **raw.pop("bot0", {})}
    config = {**raw, "bot": [bot0, {"name": "b", "command": ["python", "b.py"]}]}
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_config(config, base=tmp_path)


def test_only_chosen_variables_reach_the_sandbox(tmp_path: Path) -> None:
    """`[[bot]] env` and `[sandbox] pass_env` are the only variables beside PATH, LANG/LC_*,
    TZ, HOME/TMPDIR and ARENA_*; the referee's other variables do not get in."""
    os.environ["ARENA_TEST_PASSED"] = "passed"
    os.environ["ARENA_TEST_SECRET"] = "secret"
    try:
        script = tmp_path / "env.py"
        script.write_text("import os\nprint('ENV', sorted(os.environ))\n")
        p = _run_seat([sys.executable, str(script)], tmp_path,
                      Sandbox("bubblewrap", pass_env=["ARENA_TEST_PASSED"]),
                      env={"BOT_OWN": "1"})
    finally:
        del os.environ["ARENA_TEST_PASSED"], os.environ["ARENA_TEST_SECRET"]
    names = ast.literal_eval(p.tail().split("ENV ", 1)[1])
    assert "ARENA_TEST_PASSED" in names
    assert "ARENA_TEST_SECRET" not in names
    assert "ARENA_TOKEN" not in names
    assert "ARENA_TOKEN_FD" in names
    assert "BOT_OWN" in names
    allowed = {"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE", "PWD", "BOT_OWN"}
    assert all(n in allowed or n.startswith(("ARENA_", "LC_")) for n in names), names


def test_cgroup_v2_limits_are_written_where_memory_is_delegated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a pure cgroup v2 host (a fake /sys/fs/cgroup tree here), a seat's cgroup gets
    memory.max in bytes, memory.swap.max 0 and pids.max, and the controllers are enabled for
    the children; without a delegated memory controller there is no cgroup (the fallback)."""
    from arena.tournament import cgroups

    own = tmp_path / "referee.scope"
    own.mkdir()
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(cgroups, "_own_paths", lambda: {"": "/referee.scope"})
    roots = cgroups.find_cgroups(tmp_path)
    assert roots is not None
    assert roots.version == 2
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids"
    seat = roots.seat(memory_mb=2048, pids_max=512)
    assert (seat.dirs[0] / "memory.max").read_text() == str(2048 * MIB)
    assert (seat.dirs[0] / "memory.swap.max").read_text() == "0"
    assert (seat.dirs[0] / "pids.max").read_text() == "512"
    assert seat.join_prefix()[:2] == ["/bin/sh", "-c"]
    assert str(seat.dirs[0] / "cgroup.procs") in seat.join_prefix()[2]

    (own / "cgroup.controllers").write_text("cpu pids\n")
    assert cgroups.find_cgroups(tmp_path) is None


def test_a_bots_own_folder_is_that_of_its_program(tmp_path: Path) -> None:
    """By default a bot's own folder is that of the first argument naming a file outside
    the system and the interpreter (`python bots/x.py`, `./bot`, `java -jar b/bot.jar`),
    else the config's folder."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "x.py").write_text("")
    (tmp_path / "bot").write_text("")
    assert program_dir(["python", "bots/x.py"], tmp_path) == (tmp_path / "bots").resolve()
    assert program_dir([sys.executable, "bots/x.py"], tmp_path) == (tmp_path / "bots").resolve()
    assert program_dir(["/usr/bin/env", "-S", "./bot"], tmp_path) == tmp_path.resolve()
    assert program_dir(["java", "-jar", "bots/x.py"], tmp_path) == (tmp_path / "bots").resolve()
    assert program_dir(["node", "missing.js"], tmp_path) == tmp_path.resolve()


def test_a_sandboxed_seat_outlives_the_thread_that_was_idle_when_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bwrap --die-with-parent` kills the seat when the *thread* that forked it ends. trio
    forks from a cached worker thread that ends after an idle while (10 s; 0.2 s here), which
    killed honest seats mid-match: a seat must live on, however long the referee is idle,
    until it is stopped (arena/tournament/spawn.py forks from a thread that never ends)."""
    from trio._core import _thread_cache  # the idle timeout of trio's worker threads

    monkeypatch.setattr(_thread_cache, "IDLE_TIMEOUT", 0.2)
    script = tmp_path / "sleeper.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")

    async def main() -> tuple[int | None, int | None]:
        async with trio.open_nursery() as nursery:
            await trio.to_thread.run_sync(lambda: None)  # a cached thread, idle from now
            p = await SeatProcess.start(
                [sys.executable, str(script)], cwd=tmp_path, server="127.0.0.1:9",
                token="tok", bot_name="b", log_path=tmp_path / "seat.log", nursery=nursery,
                sandbox=Sandbox("bubblewrap"), bot_dir=tmp_path,
            )
            await trio.sleep(2.0)  # every idle worker thread has ended by now
            while_idle = p.process.returncode
            await p.stop(grace=0)
            return while_idle, p.process.returncode

    while_idle, stopped = trio.run(main)
    assert while_idle is None, f"the seat died while the referee was idle: {while_idle}"
    assert stopped is not None


SYMLINK_SPY = """\
import sys
for name in sys.argv[1:]:
    try:
        with open(name, "rb") as f:
            print(name, "READ", f.read(16))
    except OSError as exc:
        print(name, "REFUSED", type(exc).__name__)
"""


def test_a_link_in_a_bots_folder_reaches_nothing_hidden_or_outside(tmp_path: Path) -> None:
    """A bot's folder that also holds hidden paths (the database, the logs: `arena match` run
    from the bot's folder) is bound entry by entry; a symbolic link among its entries stays
    a link inside the sandbox, so it reaches only what the sandbox holds: not the hidden
    database, not the hidden logs (the live seed), not a file of the host outside every
    bound folder. A link to the bot's own file still works. (bwrap bound a link's target:
    a hostile bot read the database's secret and the log's seeds, and computed every
    deal.)"""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "arena.db").write_bytes(b"SQLite format 3\0secret")
    (folder / "logs").mkdir()
    (folder / "logs" / "t.jsonl").write_text('{"event": "match_start", "seed": 42}\n')
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "host.txt").write_text("host file")
    (folder / "own.txt").write_text("my own data")
    links = {"peek_db": "arena.db", "peek_log": "logs/t.jsonl",
             "peek_host": str(outside / "host.txt"), "peek_abs_db": str(folder / "arena.db"),
             "mine": "own.txt"}
    for name, target in links.items():
        (folder / name).symlink_to(target)
    (folder / "spy.py").write_text(SYMLINK_SPY)
    sandbox = Sandbox("bubblewrap", hidden=[folder / "arena.db", folder / "logs"])
    argv = resolve_command(("python", "spy.py", *links), folder)
    p = _run_seat(argv, folder, sandbox)
    out = p.tail(40)
    for name in ("peek_db", "peek_log", "peek_host", "peek_abs_db"):
        assert f"{name} REFUSED" in out, out
    assert "mine READ b'my own data'" in out, out
    assert "secret" not in out
    assert "seed" not in out
