"""Launched bot processes (mode "none", no sandbox): resource limits, captured output, the
token through a file descriptor, and no orphans."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import trio

from arena.errors import ConfigError
from arena.tournament.launcher import BotLimits, SeatProcess, resolve_command
from arena.tournament.sandbox import Sandbox


def test_memory_limit_stops_a_hog(tmp_path: Path) -> None:
    """A bot allocating (and touching) beyond memory_mb dies or fails inside its own seat
    (cgroup: killed by the kernel; fallback: MemoryError at the address-space cap)."""
    script = tmp_path / "hog.py"
    script.write_text(
        "print('start', flush=True)\n"
        "x = bytearray(1300 * 1024 * 1024)\nprint('allocated', flush=True)\n"
    )

    async def main() -> tuple[int | None, str]:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                [sys.executable, str(script)], cwd=tmp_path, server="x", token="t",
                bot_name="b", log_path=tmp_path / "hog.log", limits=BotLimits(memory_mb=300),
                nursery=nursery,
            )
            await p.process.wait()
            await p.stop()
        return p.process.returncode, p.tail()

    code, tail = trio.run(main)
    assert code != 0
    assert "start" in tail
    assert "allocated" not in tail


def test_environment_and_output_capture(tmp_path: Path) -> None:
    """The bot gets ARENA_SERVER and ARENA_BOT_NAME, and its token only through the pipe at
    ARENA_TOKEN_FD — nowhere in its environment; stdout and stderr go to its log file."""
    script = tmp_path / "env.py"
    script.write_text(
        "import os, sys\n"
        "from arena.sdk import token_from_env\n"
        "environ = open('/proc/self/environ', 'rb').read()\n"
        "print('in-environ' if b'sekrit-tok' in environ else 'not-in-environ')\n"
        "print(os.environ['ARENA_SERVER'], token_from_env(), 'ARENA_TOKEN' in os.environ)\n"
        "print(os.environ['ARENA_BOT_NAME'], file=sys.stderr)\n"
    )

    async def main() -> str:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                [sys.executable, str(script)], cwd=tmp_path, server="127.0.0.1:9",
                token="sekrit-tok", bot_name="envbot", log_path=tmp_path / "env.log",
                nursery=nursery,
            )
            await p.stop()
        return p.tail()

    tail = trio.run(main)
    assert "not-in-environ" in tail
    assert "127.0.0.1:9 sekrit-tok False" in tail
    assert "envbot" in tail


def test_stop_kills_the_whole_process_group(tmp_path: Path) -> None:
    """A bot that ignores SIGTERM and leaves a child behind is killed with its child."""
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                [sys.executable, str(script)], cwd=tmp_path, server="x", token="t",
                bot_name="b", log_path=tmp_path / "s.log", nursery=nursery,
            )
            with trio.fail_after(10):
                while not pid_file.exists() or not pid_file.read_text():
                    await trio.sleep(0.05)
            child = int(pid_file.read_text())
            await p.stop(grace=0.2)
        return child

    child = trio.run(main)
    # The child was in the bot's process group and got SIGKILL: it dies as soon as it is
    # scheduled (a zombie until reaped). Allow the kernel a moment to deliver the signal.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
            if "zombie" in Path(f"/proc/{child}/status").read_text().lower():
                return
        except (ProcessLookupError, FileNotFoundError):
            return
        time.sleep(0.02)
    pytest.fail(f"the bot's child {child} outlived the bot")


def test_missing_program_is_a_config_error(tmp_path: Path) -> None:
    """A command whose program does not exist is refused before anything starts."""
    with pytest.raises(ConfigError, match="not on PATH"):
        resolve_command(("no-such-program-xyz",), tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_command(("./missing.sh",), tmp_path)


def test_output_is_capped_with_a_marker_and_the_tail(tmp_path: Path) -> None:
    """A bot printing far more than [limits] log_mb leaves a log of at most the cap, one
    marker line and the last 64 KiB: its first and its very last lines are both kept."""
    script = tmp_path / "flood.py"
    script.write_text(
        "import sys\n"
        "print('FIRST LINE', flush=True)\n"
        "line = b'x' * 1023 + b'\\n'\n"
        "for _ in range(5 * 1024):\n"
        "    sys.stdout.buffer.write(line)\n"
        "print('LAST LINE', flush=True)\n"
    )

    async def main() -> SeatProcess:
        async with trio.open_nursery() as nursery:
            p = await SeatProcess.start(
                [sys.executable, str(script)], cwd=tmp_path, server="x", token="t",
                bot_name="b", log_path=tmp_path / "flood.log", limits=BotLimits(log_mb=1),
                nursery=nursery, sandbox=Sandbox("none"),
            )
            await p.stop(grace=30)
        return p

    p = trio.run(main)
    data = (tmp_path / "flood.log").read_bytes()
    assert len(data) <= 1024 * 1024 + 64 * 1024 + 200
    assert data.startswith(b"FIRST LINE\n")
    assert data.count(b"[arena] output truncated after 1048576 bytes") == 1
    assert data.rstrip().endswith(b"LAST LINE")
    assert p.tail(1) == "LAST LINE"


def test_a_seat_log_played_again_keeps_the_earlier_attempts(tmp_path: Path) -> None:
    """A match played again (its worker died, or the referee was stopped and the tournament
    resumed) writes its seats' logs under the same names; the earlier attempts' files are
    moved aside as NAME.log.1, .2, ... so their output is not lost (a hostile review, round
    4, found the first attempt's bot output overwritten)."""
    from arena.tournament.runner import _keep_earlier

    log = tmp_path / "m.seat0.bot.log"
    _keep_earlier(log)  # nothing yet: nothing moved
    assert list(tmp_path.iterdir()) == []
    for attempt in ("first", "second"):
        log.write_text(attempt, encoding="utf-8")
        _keep_earlier(log)
        assert not log.exists()
    assert (tmp_path / "m.seat0.bot.log.1").read_text(encoding="utf-8") == "first"
    assert (tmp_path / "m.seat0.bot.log.2").read_text(encoding="utf-8") == "second"
