"""Bot processes started from a thread that lives as long as the referee.

A sandboxed seat runs under ``bwrap --die-with-parent``: bubblewrap asks the kernel to SIGKILL
it when its parent dies (``PR_SET_PDEATHSIG``). For the kernel the "parent" is the *thread*
that forked it, not the process. ``trio.lowlevel.open_process`` forks from one of trio's
cached worker threads, and a cached thread exits after 10 s without work: every seat it had
started was then killed in the middle of its match, and an honest bot was charged with a
disconnect (several at the same instant, whenever the machine was quiet enough for the thread
to idle out).

Here every bot process is forked by one daemon thread, ``arena-spawner``, started on first use
and never ended: a seat now dies with the referee's process, as ``--die-with-parent`` means,
and never earlier. Its exit is awaited through a pidfd (Linux ≥ 5.3; a short poll elsewhere).
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_start_lock = threading.Lock()
POLL_S = 0.02  # how often exit is polled where there is no pidfd


def _serve() -> None:
    while True:
        _jobs.get()()


def _on_spawner(job: Callable[[], None]) -> None:
    """Run `job` on the spawner thread (started on first use)."""
    global _spawner
    with _start_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_serve, name="arena-spawner", daemon=True)
            _spawner.start()
    _jobs.put(job)


def spawner_thread() -> threading.Thread | None:
    """The thread that forks bot processes (None before the first one)."""
    return _spawner


class ChildProcess:
    """A child process: its pid, its exit status, and its output as a trio stream."""

    def __init__(self, popen: subprocess.Popen[bytes], stdout: trio.lowlevel.FdStream | None):
        self._popen = popen
        self.stdout = stdout
        self._pidfd: int | None = None
        self._exited: trio.Event | None = None  # set by the one task waiting on the pidfd
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):  # no pidfd here: wait() polls
            self._pidfd = None

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: killed by that signal), None while it runs."""
        code = self._popen.poll()
        if code is not None:
            self._close_pidfd()
        return code

    def kill(self) -> None:
        self._popen.kill()

    async def wait(self) -> int:
        """Wait for the process to exit and return its status (several tasks may wait)."""
        while (code := self.returncode) is None:
            if self._exited is not None:  # another task watches the pidfd
                await self._exited.wait()
                continue
            if self._pidfd is None:
                await trio.sleep(POLL_S)
                continue
            self._exited = trio.Event()
            try:
                await trio.lowlevel.wait_readable(self._pidfd)
            finally:
                exited, self._exited = self._exited, None
                exited.set()
        return code

    def _close_pidfd(self) -> None:
        if self._pidfd is not None and self._exited is None:
            fd, self._pidfd = self._pidfd, None
            os.close(fd)


async def open_process(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
    capture_output: bool = True,
    start_new_session: bool = True,
) -> ChildProcess:
    """Start `argv` from the spawner thread: stdin from /dev/null; stdout and stderr together
    on a pipe (`ChildProcess.stdout`) when `capture_output`, else inherited."""
    read_end: int | None = None
    write_end: int | None = None
    if capture_output:
        read_end, write_end = os.pipe()
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()
    result: list[Any] = []

    def spawn() -> None:
        try:
            result.append(subprocess.Popen(
                list(argv), cwd=cwd, env=None if env is None else dict(env),
                stdin=subprocess.DEVNULL,
                stdout=write_end if write_end is not None else None,
                stderr=subprocess.STDOUT if write_end is not None else None,
                pass_fds=tuple(pass_fds), start_new_session=start_new_session,
            ))
        except BaseException as exc:  # handed to the waiting task
            result.append(exc)
        with contextlib.suppress(trio.RunFinishedError):  # the referee stopped: nobody waits
            token.run_sync_soon(done.set)

    try:
        _on_spawner(spawn)
        with trio.CancelScope(shield=True):  # a fork in flight is never abandoned
            await done.wait()
    finally:
        if write_end is not None:
            os.close(write_end)
    started = result[0]
    if isinstance(started, BaseException):
        if read_end is not None:
            os.close(read_end)
        raise started
    stdout = trio.lowlevel.FdStream(read_end) if read_end is not None else None
    return ChildProcess(started, stdout)
