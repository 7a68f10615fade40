"""Launched bots: one process per seat, in its own process group, logs captured, never orphaned.

The referee starts the bot's command with ARENA_SERVER, ARENA_TOKEN (a one-off token for this
seat), ARENA_BOT_NAME and ARENA_LAUNCHED=1 in its environment, stdout and stderr going to a
per-seat log file. (ARENA_LAUNCHED tells the SDK not to wait for a referee that is not there:
bots run in their own sessions, so one whose referee was killed must notice by itself.)
Each process runs under `BotLimits` (CPU time, address space, open files). When the seat is
done the process is asked to exit (it sees its stream end), then sent
SIGTERM, then SIGKILL, to its whole process group.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.errors import ConfigError


@dataclass(frozen=True, slots=True)
class BotLimits:
    """Resource limits of each launched bot process (0 = no limit)."""

    cpu_seconds: int = 300  # CPU time for the whole process (one seat of one match)
    memory_mb: int = 2048  # address space
    open_files: int = 256  # file descriptors

    def apply(self, pid: int) -> None:
        """Set the limits on process `pid` (Linux prlimit: no code runs in the forked child,
        which is not safe beside gRPC's threads)."""
        if self.cpu_seconds:
            resource.prlimit(pid, resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 5))
        if self.memory_mb:
            size = self.memory_mb * 1024 * 1024
            resource.prlimit(pid, resource.RLIMIT_AS, (size, size))
        if self.open_files:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (self.open_files, self.open_files))


def resolve_command(command: tuple[str, ...], cwd: Path) -> list[str]:
    """The argv to run: `python` means this interpreter; the program must exist."""
    argv = list(command)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    elif os.sep not in argv[0]:
        found = shutil.which(argv[0])
        if found is None:
            raise ConfigError(f"bot command {argv[0]!r} is not on PATH")
        argv[0] = found
    elif not (cwd / argv[0]).exists():
        raise ConfigError(f"bot command {argv[0]!r} does not exist (relative to {cwd})")
    return argv


class SeatProcess:
    """A running bot process for one seat."""

    def __init__(self, process: trio.Process, log_path: Path) -> None:
        self.process = process
        self.log_path = log_path

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: Path,
        server: str,
        token: str,
        bot_name: str,
        log_path: Path,
        limits: BotLimits | None = None,
        tls_ca: Path | None = None,
    ) -> SeatProcess:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update(
            ARENA_SERVER=server, ARENA_TOKEN=token, ARENA_BOT_NAME=bot_name, ARENA_LAUNCHED="1"
        )
        if tls_ca is not None:
            env["ARENA_TLS_CA"] = str(tls_ca.resolve())  # the certificate to trust
        with log_path.open("ab") as log_file:
            process = await trio.lowlevel.open_process(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        with contextlib.suppress(ProcessLookupError):
            (limits or BotLimits()).apply(process.pid)
        return cls(process, log_path)

    @property
    def exited(self) -> bool:
        return self.process.returncode is not None

    def tail(self, lines: int = 8) -> str:
        """The last lines the bot printed (for error reports)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def stop(self, grace: float = 2.0) -> int | None:
        """Wait up to `grace` for a clean exit, then SIGTERM, then SIGKILL the group."""
        with trio.move_on_after(grace):
            await self.process.wait()
        if self.process.returncode is None:
            self._signal(signal.SIGTERM)
            with trio.move_on_after(1.0):
                await self.process.wait()
        # Kill the whole group even after a clean exit: children must not outlive the bot.
        self._signal(signal.SIGKILL)
        with trio.CancelScope(shield=True):
            await self.process.wait()
        return self.process.returncode
