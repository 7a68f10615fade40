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
import contextlib
import errno
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
    others: tuple[Path, ...] = (),
) -> SeatProcess:
    """Start one seat, let it run to its end (or until `wait_for` exists), then stop it."""

    async def main() -> SeatProcess:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                argv, cwd=folder, server="127.0.0.1:9", token="tok", bot_name="b",
                log_path=folder / "seat.log", nursery=nursery, sandbox=sandbox,
                bot_dir=folder, limits=limits, env=env, others=others,
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


def test_nothing_outside_tmp_is_writable_in_the_sandbox(tmp_path: Path) -> None:
    """A bot's own folder holding another bot's (hidden, so the folder is built entry by
    entry on the sandbox's root) and outside /tmp (where a host folder under /tmp would land
    in the private /tmp instead): a new file there, or at the root, is refused (EROFS); /tmp
    takes it. An outside walkthrough wrote 300 MB into its "read-only" folder: onto the
    sandbox's root tmpfs, outside tmp_mb."""
    base = Path(tempfile.mkdtemp(prefix="arena-rofs-", dir="/var/tmp"))
    try:
        own = base / "bot"
        (own / "other").mkdir(parents=True)  # another bot's folder, inside this one
        script = own / "write.py"
        script.write_text(
            "import os\n"
            "for path in ('new-file', '/at-root', '/tmp/in-tmp'):\n"
            "    try:\n"
            "        open(path, 'w').write('x')\n"
            "        print('WROTE', path)\n"
            "    except OSError as e:\n"
            "        print('REFUSED', path, e.errno)\n"
        )
        p = _run_seat([sys.executable, str(script)], own, Sandbox("bubblewrap"),
                      others=(own / "other",))
        tail = p.tail()
        assert f"REFUSED new-file {errno.EROFS}" in tail, tail
        assert f"REFUSED /at-root {errno.EROFS}" in tail, tail
        assert "WROTE /tmp/in-tmp" in tail, tail
        assert not (own / "new-file").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


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
    """A sandboxed seat's HOME is /tmp, a fresh private writable dir: a tmpfs of its own,
    so nothing it writes lands in the referee's run folder on the host, and it is gone with
    the seat. The bot's own folder is read-only."""
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
    run_root = tmp_path / "run"
    run_root.mkdir()
    p = _run_seat([sys.executable, str(script)], tmp_path,
                  Sandbox("bubblewrap", temp_root=run_root))
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
    assert p.jail.temp is None
    assert not list(run_root.iterdir())


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
    # written in turn (a fake file keeps the last write): memory and pids, then cpu, which
    # may not be delegated where memory is
    assert (own / "cgroup.subtree_control").read_text() == "+cpu"
    assert roots.cpu_shared
    seat = roots.seat(memory_mb=2048, pids_max=512)
    assert (seat.dirs[0] / "memory.max").read_text() == str(2048 * MIB)
    assert (seat.dirs[0] / "memory.swap.max").read_text() == "0"
    assert (seat.dirs[0] / "pids.max").read_text() == "512"
    assert seat.join_prefix()[:2] == ["/bin/sh", "-c"]
    assert str(seat.dirs[0] / "cgroup.procs") in seat.join_prefix()[2]

    (own / "cgroup.controllers").write_text("cpu pids\n")
    assert cgroups.find_cgroups(tmp_path) is None


def test_cgroup_v1_seats_get_a_cpu_group_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a cgroup v1 host (a fake tree here: memory, pids and cpu hierarchies), a seat's
    cgroup is made in each writable hierarchy, cpu included: the seat is then one entity of
    the CPU scheduler whatever it forks (hostile review round 5: busy setsid children, one
    autogroup each, took the CPU from honest seats). Its shell joins all three."""
    from arena.tournament import cgroups

    for hierarchy in ("memory", "pids", "cpu"):
        (tmp_path / hierarchy / "ref").mkdir(parents=True)
    monkeypatch.setattr(cgroups, "_own_paths",
                        lambda: {"memory": "/ref", "pids": "/ref", "cpu": "/ref"})
    roots = cgroups.find_cgroups(tmp_path)
    assert roots is not None
    assert (roots.version, roots.cpu_shared) == (1, True)
    seat = roots.seat(memory_mb=64, pids_max=16)
    assert [d.parent.parent.name for d in seat.dirs] == ["memory", "pids", "cpu"]
    assert all(d.is_dir() for d in seat.dirs)
    for folder in seat.dirs:
        assert str(folder / "cgroup.procs") in seat.join_commands()


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
    assert program_dir(["./bot", "bots/x.py"], tmp_path) == tmp_path.resolve()


def test_only_the_program_chooses_a_bots_folder(tmp_path: Path) -> None:
    """A file named as an argument the program never runs does not make its folder the
    bot's (hostile review round 5: `python -c CODE alice/bot.py` read alice's folder, and
    `python -c CODE ~/.ssh/known_hosts` the organizer's keys, bound into the sandbox); nor
    does a link named as the program lead to where it points: the bot's folder is the link's
    (the sandbox keeps links as links)."""
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "bot.py").write_text("")
    secret = tmp_path / "dotssh"
    secret.mkdir()
    (secret / "known_hosts").write_text("")
    (tmp_path / "mallory").mkdir()
    (tmp_path / "mallory" / "model.py").symlink_to(secret / "known_hosts")
    for command in (
        ["python", "-c", "import os", "alice/bot.py"],
        ["python", "-c", "import os", str(secret / "known_hosts")],
        ["/usr/bin/env", "python3", "-c", "x", "alice/bot.py"],
        ["sh", "-c", "exec python3 \"$0\"", "alice/bot.py"],
        ["python", "-W", "ignore", "-c", "x", str(secret / "known_hosts")],
        # round 6: an option's own argument is not the program
        ["python", "-X", "alice/bot.py", "-c", "import os"],
        ["python", "-uX", "alice/bot.py", "-c", "import os"],
        ["python", "-W", "alice/bot.py", "-m", "mallory"],
        ["python", "--check-hash-based-pycs", "alice/bot.py", "-c", "x"],
        ["python", "-Z", "alice/bot.py"],  # an option python may add one day: not guessed
        ["node", "--require", "alice/bot.py", "-e", "x"],
        ["node", "-r", "alice/bot.py", "-e", "x"],
        ["node", "--unknown-flag", "alice/bot.py"],
        ["java", "-cp", "alice/bot.py", "Main"],
        ["java", "-cp", "-jar", "alice/bot.py"],
        ["/usr/bin/env", "-u", "alice/bot.py", "python3", "-c", "x"],
        ["/usr/bin/env", "-S", "python3 alice/bot.py"],
        ["bash", "-o", "alice/bot.py", "-c", "x"],
    ):
        assert program_dir(command, tmp_path) == tmp_path.resolve(), command
    assert program_dir(["python", "mallory/model.py"], tmp_path) == tmp_path / "mallory"


def test_an_interpreters_options_are_read_as_it_reads_them(tmp_path: Path) -> None:
    """The program after an interpreter's options that take no argument, or carry theirs in
    the same word (or `--`): python, node, java, env and a shell, each as it reads them."""
    (tmp_path / "bots").mkdir()
    for name in ("x.py", "x.js", "x.jar", "x.sh"):
        (tmp_path / "bots" / name).write_text("")
    bots = (tmp_path / "bots").resolve()
    for command in (
        ["python", "-u", "bots/x.py"],
        ["python", "-OO", "-B", "bots/x.py", "-c", "the program's own argument"],
        ["python", "-uBs", "bots/x.py"],
        ["python", "-Xdev", "-Wignore", "bots/x.py"],
        ["python", "-X", "dev", "-W", "ignore", "bots/x.py"],
        ["python", "--check-hash-based-pycs", "never", "bots/x.py"],
        ["python", "--", "bots/x.py"],
        ["node", "bots/x.js"],
        ["node", "--max-old-space-size=512", "--expose-gc", "bots/x.js"],
        ["node", "--", "bots/x.js"],
        ["java", "-Xmx256m", "-Dseed=1", "-jar", "bots/x.jar"],
        ["java", "-cp", "lib", "-jar", "bots/x.jar"],
        ["/usr/bin/env", "A=1", "B=2", "python", "-u", "bots/x.py"],
        ["bash", "bots/x.sh"],
    ):
        assert program_dir(command, tmp_path) == bots, command


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


LOCK_PROBE = """\
import ctypes, errno, fcntl, os, struct, sys
def code(fn):
    try:
        fn()
        return "OK"
    except OSError as exc:
        return errno.errorcode[exc.errno]
def raw(nr, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    done = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return "OK" if done >= 0 else errno.errorcode[ctypes.get_errno()]
fd = os.open(sys.argv[1], os.O_RDONLY)
lock = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, 0, 1, 0)
results = {
    "F_SETLK": code(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock)),
    "F_GETLK": code(lambda: fcntl.fcntl(fd, fcntl.F_GETLK, lock)),
    "F_OFD_SETLK": code(lambda: fcntl.fcntl(fd, 37, lock)),
    "flock": code(lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
    "F_NOTIFY": code(lambda: fcntl.fcntl(os.open("/usr/bin", os.O_RDONLY), 1026, 1)),
    "inotify_init1": raw(294, 0),
    "inotify_init": raw(253),
    # F_SETLK with bits above the 32 the kernel reads: still F_SETLK for the kernel.
    "F_SETLK_high_bits": raw(72, fd, (1 << 32) | fcntl.F_SETLK, 0),
    "x32_flock": raw(0x40000000 | 73, fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
    "F_GETFL": code(lambda: fcntl.fcntl(fd, fcntl.F_GETFL)),
}
print("RESULTS", sorted(results.items()), flush=True)
"""


def _probe_results(seat: SeatProcess) -> dict[str, str]:
    """The last RESULTS line of a seat's log, as a dict."""
    line = seat.tail().split("RESULTS ")[-1].splitlines()[0]
    return dict(ast.literal_eval(line))


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe makes x86_64 syscalls")
def test_a_sandboxed_seat_can_take_no_file_lock_and_watch_no_file(tmp_path: Path) -> None:
    """From inside the sandbox, on its own program file: fcntl F_SETLK / F_GETLK /
    F_OFD_SETLK / F_NOTIFY, flock, inotify_init(1), F_SETLK with junk in the upper bits of
    the command, and flock through the x32 calling convention all fail with EPERM (the
    seccomp filter), while other fcntl commands work. The same probe run without the filter
    gets its locks: it does detect them."""
    probe = tmp_path / "locks.py"
    probe.write_text(LOCK_PROBE)
    argv = [sys.executable, str(probe), str(probe)]
    sandbox = Sandbox("bubblewrap")
    results = _probe_results(_run_seat(argv, tmp_path, sandbox))
    assert results.pop("F_GETFL") == "OK", results
    assert results == dict.fromkeys(results, "EPERM"), results

    sandbox.seccomp = None  # the control: the same probe without the filter
    unfiltered = _probe_results(_run_seat(argv, tmp_path, sandbox))
    for name in ("F_SETLK", "F_GETLK", "F_OFD_SETLK", "flock", "inotify_init1"):
        assert unfiltered[name] == "OK", unfiltered


LOCK_SENDER = """\
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
sent = []
for name, take in (("lockf", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 7)),
                   ("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))):
    try:
        take()
        sent.append(name)
    except OSError as exc:
        sent.append(f"{name}:{exc.errno}")
with open(sys.argv[2], "w") as f:  # a folder bound read-write: the test sees it at once
    f.write(" ".join(["SENT", *sent]))
time.sleep(60)
"""
LOCK_RECEIVER = """\
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
seen = []
try:
    query = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 7, 1, 0)
    answer = struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, query))
    seen.append("F_GETLK:" + ("locked" if answer[0] != fcntl.F_UNLCK else "free"))
except OSError as exc:
    seen.append(f"F_GETLK:error{exc.errno}")
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    seen.append("flock:free")
except BlockingIOError:
    seen.append("flock:locked")
except OSError as exc:
    seen.append(f"flock:error{exc.errno}")
print("SEEN", *seen, flush=True)
"""


def _lock_channel(tmp_path: Path, sandbox: Sandbox, shared: str) -> tuple[str, str]:
    """Two seats of one sandbox: the first locks `shared` and holds on; once it has said so
    the second probes the same file. What each said."""
    (tmp_path / "sender.py").write_text(LOCK_SENDER)
    (tmp_path / "receiver.py").write_text(LOCK_RECEIVER)
    said = tmp_path / "said" / "sent"
    said.unlink(missing_ok=True)

    async def main() -> tuple[str, str]:
        async with trio.open_nursery() as nursery:
            seats = []
            for role in ("sender", "receiver"):
                if seats:
                    with trio.fail_after(60):
                        while not said.exists() or not said.read_text():
                            await trio.sleep(0.05)
                seats.append(await SeatProcess.start(
                    [sys.executable, str(tmp_path / f"{role}.py"), shared, str(said)],
                    cwd=tmp_path,
                    server="127.0.0.1:9", token="tok", bot_name=role,
                    log_path=tmp_path / f"{role}.log", nursery=nursery, sandbox=sandbox,
                    bot_dir=tmp_path))
            with trio.fail_after(60):
                await seats[1].process.wait()
            for seat in seats:
                await seat.stop(grace=0)
        return said.read_text(), seats[1].tail()

    return trio.run(main)


@pytest.mark.parametrize("shared", ["sender.py", "/usr/bin/sh"])
def test_two_sandboxed_seats_cannot_signal_through_a_lock(tmp_path: Path, shared: str) -> None:
    """The channel itself, between two live seats: one takes read locks (fcntl and flock) on
    a file both sandboxes bind read-only (the bot's own program, or /usr/bin/sh), the other
    looks for them (F_GETLK, a non-blocking exclusive flock). With the seccomp filter the
    first cannot lock and the second cannot look: no signal. Without the filter (the
    control) the second sees both locks, as the hostile review's bots did."""
    path = str(tmp_path / shared) if not shared.startswith("/") else shared
    (tmp_path / "said").mkdir()
    sandbox = Sandbox("bubblewrap", writable=[tmp_path / "said"])
    sent, seen = _lock_channel(tmp_path, sandbox, path)
    assert sent == "SENT lockf:1 flock:1", sent  # EPERM
    assert "SEEN F_GETLK:error1 flock:error1" in seen, seen

    sandbox.seccomp = None
    sent, seen = _lock_channel(tmp_path, sandbox, path)
    assert sent == "SENT lockf flock", sent
    assert "SEEN F_GETLK:locked flock:locked" in seen, seen


def _run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the classic-BPF `program` returns for one call (a small interpreter of the
    instructions the filter uses), with struct seccomp_data laid out as the kernel does."""
    import struct

    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    code = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == 0x54:  # and #k
            acc &= k
        elif op == 0x15:  # jeq #k
            pc += jt if acc == k else jf
        elif op == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")


def test_the_lock_filter_covers_each_calling_convention() -> None:
    """The filter, instruction by instruction, for calls this machine cannot make: on x86_64
    the 32-bit calls (int 0x80: flock 143, fcntl 55, fcntl64 221 with F_SETLK64, inotify 291
    and 332, fanotify 338) and x32 calls are refused like the 64-bit ones; aarch64 has its
    own numbers (flock 32, fcntl 25, inotify_init1 26, fanotify_init 262); an unknown
    calling convention is refused outright; a machine without a table gets no filter."""
    from arena.tournament import seccomp

    allow, eperm = seccomp.RET_ALLOW, seccomp.RET_ERRNO | 1
    x86_64, i386, aarch64 = 0xC000003E, 0x40000003, 0xC00000B7
    program = seccomp.lock_filter("x86_64")
    assert program is not None
    cases = [
        (73, x86_64, (), eperm), (72, x86_64, (3, 6), eperm), (72, x86_64, (3, 38), eperm),
        (72, x86_64, (3, (7 << 32) | 5), eperm), (72, x86_64, (3, 1), allow),
        (253, x86_64, (), eperm), (294, x86_64, (), eperm), (300, x86_64, (), eperm),
        (0x40000000 | 73, x86_64, (), eperm), (0x40000000 | 1, x86_64, (), allow),
        (0, x86_64, (), allow), (143, i386, (), eperm), (55, i386, (3, 7), eperm),
        (221, i386, (3, 13), eperm), (221, i386, (3, 3), allow), (291, i386, (), eperm),
        (332, i386, (), eperm), (338, i386, (), eperm), (3, i386, (), allow),
        (73, 0x40000028, (), eperm), (3, 0x40000028, (), eperm),  # 32-bit ARM: unknown
    ]
    for nr, arch, args, expected in cases:
        assert _run_filter(program, nr, arch, args) == expected, (nr, hex(arch), args)
    arm = seccomp.lock_filter("aarch64")
    assert arm is not None
    for nr, args, expected in [(32, (), eperm), (25, (3, 6), eperm), (25, (3, 36), eperm),
                               (25, (3, 1), allow), (26, (), eperm), (262, (), eperm),
                               (73, (), allow), (63, (), allow)]:
        assert _run_filter(arm, nr, aarch64, args) == expected, (nr, args)
    assert _run_filter(arm, 32, x86_64) == eperm  # x86_64 calls on an aarch64 filter
    assert seccomp.lock_filter("riscv64") is None


def test_a_seat_filling_its_tmp_gets_enospc_not_the_host_disk(tmp_path: Path) -> None:
    """A sandboxed seat writing past its /tmp cap (`[limits] tmp_mb`, 16 MiB here) gets
    ENOSPC after about that much: its /tmp is a tmpfs of its own, not a folder on the
    referee's disk (a bot filled that disk and the referee could no longer store results).
    Nothing of it is left on the host."""
    script = tmp_path / "fill.py"
    script.write_text(
        "import os\n"
        "written = 0\n"
        "with open('/tmp/fill', 'wb', buffering=0) as f:\n"
        "    try:\n"
        "        while written < 64 << 20:\n"
        "            written += f.write(b'x' * 65536)\n"
        "        print('WROTE ALL', written)\n"
        "    except OSError as exc:\n"
        "        print('STOPPED', written, exc.errno)\n"
    )
    run_root = tmp_path / "run"
    run_root.mkdir()
    p = _run_seat([sys.executable, str(script)], tmp_path,
                  Sandbox("bubblewrap", temp_root=run_root), limits=BotLimits(tmp_mb=16))
    found = re.search(r"STOPPED (\d+) (\d+)", p.tail())
    assert found is not None, p.tail()
    assert int(found[2]) == 28  # ENOSPC
    assert 15 * MIB <= int(found[1]) <= 16 * MIB, found[1]
    assert not list(run_root.iterdir())
    assert p.jail.temp is None


def test_a_seat_can_fill_neither_dev_nor_more_than_tmp_mb_of_dev_shm(tmp_path: Path) -> None:
    """bwrap's /dev is a tmpfs of half the host's memory, and it was writable: a hostile
    review (round 6) wrote 600 MiB to /dev and 600 MiB to /dev/shm past a full /tmp, until
    the memory cgroup killed the seat (and nothing bounds tmpfs pages without one). Now /dev
    is read-only but for its devices (writing to /dev/null still works), and /dev/shm is a
    tmpfs of `tmp_mb` like /tmp (16 MiB here: ENOSPC after that)."""
    script = tmp_path / "devfill.py"
    script.write_text(
        "import os\n"
        "try:\n"
        "    open('/dev/newfile', 'wb').write(b'x')\n"
        "    print('DEV WRITABLE')\n"
        "except OSError as exc:\n"
        "    print('DEV REFUSED', exc.errno)\n"
        "with open('/dev/null', 'wb') as null:\n"
        "    null.write(b'x' * 1000)\n"
        "print('NULL OK')\n"
        "written = 0\n"
        "with open('/dev/shm/fill', 'wb', buffering=0) as f:\n"
        "    try:\n"
        "        while written < 64 << 20:\n"
        "            written += f.write(b'x' * 65536)\n"
        "        print('SHM WROTE ALL', written)\n"
        "    except OSError as exc:\n"
        "        print('SHM STOPPED', written, exc.errno)\n"
    )
    run_root = tmp_path / "run"
    run_root.mkdir()
    p = _run_seat([sys.executable, str(script)], tmp_path,
                  Sandbox("bubblewrap", temp_root=run_root), limits=BotLimits(tmp_mb=16))
    tail = p.tail()
    assert "DEV REFUSED 30" in tail, tail  # EROFS
    assert "NULL OK" in tail, tail
    found = re.search(r"SHM STOPPED (\d+) (\d+)", tail)
    assert found is not None, tail
    assert int(found[2]) == 28  # ENOSPC
    assert int(found[1]) <= 16 * MIB, found[1]


SEAT_OOM = """\
import os, sys, time
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
try:
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("0")
    print("LOWERED", flush=True)
except OSError as exc:
    print("KEPT", type(exc).__name__, flush=True)
print("READY", open("/proc/self/oom_score_adj").read().strip(), flush=True)
open(sys.argv[1], "w").close()  # a folder bound read-write: the test sees it at once
time.sleep(60)
"""


def _descendants(root: int) -> list[int]:
    """`root` and every process below it (host pids, from /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def test_every_process_of_a_seat_is_the_oom_killers_first_choice(tmp_path: Path) -> None:
    """Read from the host: every process of a sandboxed seat (bwrap, the bot, the child it
    forked) has oom_score_adj 1000, and the bot cannot write its own back down (its /proc is
    read-only); so when the seats together exhaust the machine, the kernel kills a seat's
    process, not the referee (whose own adjustment is lowered when it may)."""
    script = tmp_path / "oom.py"
    script.write_text(SEAT_OOM)
    (tmp_path / "said").mkdir()
    ready = tmp_path / "said" / "ready"

    async def main() -> tuple[str, dict[int, str]]:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                [sys.executable, str(script), str(ready)], cwd=tmp_path,
                server="127.0.0.1:9", token="tok", bot_name="b",
                log_path=tmp_path / "seat.log", nursery=nursery,
                sandbox=Sandbox("bubblewrap", writable=[ready.parent]), bot_dir=tmp_path,
            )
            with trio.fail_after(60):
                while not ready.exists():
                    await trio.sleep(0.05)
            scores = {}
            for pid in _descendants(p.pid):
                with contextlib.suppress(OSError):
                    scores[pid] = Path(f"/proc/{pid}/oom_score_adj").read_text().strip()
            await p.stop(grace=0)
            return p.tail(), scores

    out, scores = trio.run(main)
    assert "KEPT OSError" in out, out
    assert "READY 1000" in out, out
    assert len(scores) >= 3, scores  # bwrap, (its init,) the bot, the bot's child
    assert set(scores.values()) == {"1000"}, scores
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"


def test_the_referee_lowers_its_own_oom_score_adj_when_it_starts_a_sandbox() -> None:
    """A referee started at oom_score_adj 500 (a raise any process may make) lowers it when
    it builds its sandbox: to -800 with CAP_SYS_RESOURCE, else as low as it may (0); either
    way far below its seats' 1000."""
    code = (
        "from pathlib import Path\n"
        "Path('/proc/self/oom_score_adj').write_text('500')\n"
        "from arena.tournament.sandbox import Sandbox\n"
        "Sandbox('bubblewrap')\n"
        "print('ADJ', Path('/proc/self/oom_score_adj').read_text().strip())\n"
    )
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found = re.search(r"^ADJ (-?\d+)$", done.stdout, re.M)
    assert found is not None, done.stdout
    assert int(found[1]) in (-800, 0), done.stdout
