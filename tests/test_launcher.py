"""Launched bot processes: resource limits, captured output, and no orphans."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import trio

from arena.errors import ConfigError
from arena.tournament.launcher import BotLimits, SeatProcess, resolve_command


def test_memory_limit_stops_a_hog(tmp_path: Path) -> None:
    """A bot allocating beyond memory_mb fails inside its own process; its output is kept."""
    script = tmp_path / "hog.py"
    script.write_text("x = bytearray(600 * 1024 * 1024)\nprint('allocated')\n")

    async def main() -> tuple[int | None, str]:
        p = await SeatProcess.start(
            [sys.executable, str(script)], cwd=tmp_path, server="x", token="t", bot_name="b",
            log_path=tmp_path / "hog.log", limits=BotLimits(memory_mb=300),
        )
        await p.process.wait()
        return p.process.returncode, p.tail()

    code, tail = trio.run(main)
    assert code != 0
    assert "MemoryError" in tail
    assert "allocated" not in tail


def test_environment_and_output_capture(tmp_path: Path) -> None:
    """The bot gets ARENA_SERVER, ARENA_TOKEN and ARENA_BOT_NAME; stdout and stderr go to
    its log file."""
    script = tmp_path / "env.py"
    script.write_text(
        "import os, sys\n"
        "print(os.environ['ARENA_SERVER'], os.environ['ARENA_TOKEN'])\n"
        "print(os.environ['ARENA_BOT_NAME'], file=sys.stderr)\n"
    )

    async def main() -> str:
        p = await SeatProcess.start(
            [sys.executable, str(script)], cwd=tmp_path, server="127.0.0.1:9", token="tok",
            bot_name="envbot", log_path=tmp_path / "env.log",
        )
        await p.stop()
        return p.tail()

    tail = trio.run(main)
    assert "127.0.0.1:9 tok" in tail
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
        p = await SeatProcess.start(
            [sys.executable, str(script)], cwd=tmp_path, server="x", token="t", bot_name="b",
            log_path=tmp_path / "s.log",
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
