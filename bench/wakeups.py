"""Syscalls, wake-ups and CPU per decision at 1 stream, by kind and by thread: the raw grpc.aio
server against the referee on each gRPC host (``python -m bench wakeups``).

The same bot client and servers as `referee_path` (one stream unless ``BENCH_STREAMS`` says
otherwise; the referee's modes from ``BENCH_MODES``, default ``thread,pump``). Each side runs
twice:

- plain, reading /proc/self/task/*/{stat,status} as the client starts and stops counting:
  CPU µs per decision (``µs``, in clock ticks: coarse, so count for seconds) and voluntary
  context switches (``wk``, wake-ups: a thread that went to sleep and was woken) per
  decision, per thread, grouped as ``loop`` (the thread that runs the handlers: trio's for
  the referee, asyncio's for raw), ``aio`` (the referee's ``arena-grpc`` thread),
  ``poller`` (grpc.aio's completion-queue thread, Python: it wakes the asyncio loop through
  a socketpair) and ``core`` (gRPC's own C threads: its TCP poller, timers, executor);
- under ``strace -ttt -yy`` attached to every thread of the server's process (not the
  client's) just before the client starts: every syscall between the client's start and stop
  of counting, per decision, by kind, with the file each one touches (``-yy``): ``epoll``
  (epoll_wait/epoll_pwait, on any epoll fd: trio's, asyncio's, gRPC's), ``epoll_ctl``,
  ``futex wait`` / ``futex wake`` (GIL and condition hand-overs between threads), ``efd
  r/w`` (read/write on an eventfd: wake-ups of gRPC's pollers), ``pipe r/w``
  (read/write/recv/send on a socketpair or pipe: asyncio's self-pipe, trio's wake-up socket,
  grpc.aio's loop wake-up), ``sendmsg`` / ``recvmsg`` (on the client's connection: the wire
  itself), ``getpid`` (asyncio's running-loop check) and the rest.

Counts under strace are exact whatever the load (strace slows every syscall, not the count
of them; a thread that polls in a loop would poll more, so ``epoll`` is an upper bound);
CPU and wake-ups come from the plain runs and move with the load. The client is always a
separate process. Without strace the syscall columns say so and the rest still runs.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from contextlib import suppress
from pathlib import Path
from typing import Any

from bench import referee_path

MODES = tuple(
    m for m in os.environ.get("BENCH_MODES", "thread,pump").split(",") if m
)
STREAMS = tuple(
    int(n) for n in os.environ.get("BENCH_STREAMS", "1").split(",") if n
)
KINDS = ("epoll", "epoll_ctl", "futex wait", "futex wake", "efd r/w", "pipe r/w", "sendmsg",
         "recvmsg", "getpid", "other")
GROUPS = ("loop", "aio", "poller", "core")
_LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(\w+)\((.*)$")
_FD = re.compile(r"^\d+<([^>]*)>")


def _kind(name: str, args: str) -> str:
    if name in ("epoll_wait", "epoll_pwait", "epoll_pwait2"):
        return "epoll"
    if name in ("epoll_ctl", "getpid"):
        return name
    if name == "futex":
        return "futex wake" if "FUTEX_WAKE" in args else "futex wait"
    if name in ("sendmsg", "recvmsg"):
        fd = _FD.match(args)
        if fd is not None and fd.group(1).startswith(("TCP", "UNIX:[/", "UNIX-STREAM:[/")):
            return name
    if name in ("read", "write", "recvfrom", "sendto", "recvmsg", "sendmsg"):
        fd = _FD.match(args)
        target = fd.group(1) if fd is not None else ""
        if "eventfd" in target:
            return "efd r/w"
        if target.startswith(("UNIX", "pipe")):  # a socketpair or a pipe: a self-pipe
            return "pipe r/w"
    return "other"


def _threads() -> dict[int, str]:
    """This process's threads: native id -> group (loop / aio / core / other)."""
    python = {t.native_id: t for t in threading.enumerate() if t.native_id is not None}
    groups = {}
    for task in Path("/proc/self/task").iterdir():
        tid = int(task.name)
        thread = python.get(tid)
        if thread is None:
            groups[tid] = "core"  # gRPC's own C threads
        elif thread is threading.main_thread():
            groups[tid] = "loop"
        elif thread.name == referee_path.THREAD_NAME:
            groups[tid] = "aio"
        elif "_poll_wrapper" in thread.name:
            groups[tid] = "poller"  # grpc.aio's completion queue thread (Python)
        else:
            groups[tid] = "other"  # the bench's own: the thread waiting for the client
    return groups


def _read_threads() -> dict[int, tuple[float, int]]:
    """Per thread of this process: CPU seconds and voluntary context switches so far."""
    tick = os.sysconf("SC_CLK_TCK")
    seen = {}
    for task in Path("/proc/self/task").iterdir():
        with suppress(OSError, ValueError):
            stat = (task / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick
            switches = 0
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    switches = int(line.split()[1])
            seen[int(task.name)] = (cpu, switches)
    return seen


class _Watch:
    """Hooked into `referee_path.run_bots` (`referee_path.WATCH`): reads /proc, or runs
    strace, between the client's start and stop of counting."""

    def __init__(self, strace: bool) -> None:
        self.strace = strace
        self.marks: dict[str, float] = {}
        self.threads: dict[str, dict[int, tuple[float, int]]] = {}
        self.groups: dict[int, str] = {}
        self.log = Path(tempfile.mkstemp(prefix="bench-strace-", suffix=".log")[1])
        self._process: subprocess.Popen[bytes] | None = None

    def __call__(self, mark: str) -> None:
        if mark == "spawn":
            self.groups = _threads()
            if self.strace:
                self._attach()
            return
        self.marks[mark] = time.time()
        self.threads[mark] = _read_threads()
        if mark == "stop" and self._process is not None:
            self._process.send_signal(signal.SIGINT)
            self._process.wait(30)
            self._process = None

    def _attach(self) -> None:
        tids = sorted(self.groups)
        command = ["strace", "-ttt", "-yy", "-s", "0", "-o", str(self.log)]
        for tid in tids:  # these threads only: not the client process forked next
            command += ["-p", str(tid)]
        self._process = subprocess.Popen(command, stderr=subprocess.PIPE)
        assert self._process.stderr is not None
        attached = 0
        deadline = time.monotonic() + 20
        while attached < len(tids) and time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if not line:
                break
            attached += b"attached" in line
        if attached < len(tids):
            raise RuntimeError(f"strace attached to {attached} of {len(tids)} threads")
        # From now on strace's stderr is not read: it says little more (detaching).

    def syscalls(self) -> Counter[str]:
        """Syscalls by kind between the client's start and stop marks."""
        start, stop = self.marks["start"], self.marks["stop"]
        counts: Counter[str] = Counter()
        with self.log.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                match = _LINE.match(line)
                if match is None or "resumed>" in line:
                    continue
                if not start <= float(match.group(2)) <= stop:
                    continue
                counts[_kind(match.group(3), match.group(4))] += 1
        self.log.unlink()
        return counts

    def per_thread(self, decisions: int) -> dict[str, tuple[float, float]]:
        """Per group: CPU µs and voluntary switches per decision."""
        out: dict[str, tuple[float, float]] = {}
        start, stop = self.threads["start"], self.threads["stop"]
        for tid, (cpu, switches) in stop.items():
            group = self.groups.get(tid, "core")
            before = start.get(tid, (0.0, 0))
            old = out.get(group, (0.0, 0.0))
            out[group] = (old[0] + (cpu - before[0]) * 1e6 / decisions,
                          old[1] + (switches - before[1]) / decisions)
        return out


def _measure(mode: str, streams: int, seconds: float, strace: bool) -> tuple[Any, _Watch]:
    watch = _Watch(strace)
    referee_path.WATCH.append(watch)
    try:
        if mode == "raw":
            result = referee_path.measure_raw(streams, seconds)
        else:
            result = referee_path.measure_referee(streams, seconds, mode)
    finally:
        referee_path.WATCH.remove(watch)
        if watch._process is not None:
            watch._process.kill()
            watch._process.wait()
    return result, watch


def part(seconds: float) -> list[dict[str, object]]:
    """One row per side: syscalls by kind per decision (strace), CPU and wake-ups per
    decision per thread group (plain)."""
    have_strace = shutil.which("strace") is not None
    if not have_strace:
        print("wakeups: strace is not installed (apt-get install strace): syscall columns "
              "are '-'; CPU and wake-ups are still measured")
    rows: list[dict[str, object]] = []
    for streams in STREAMS:
        for mode in ("raw", *MODES):
            plain, watch = _measure(mode, streams, seconds, strace=False)
            decisions = max(plain.tally.decisions, 1)
            threads = watch.per_thread(decisions)
            row: dict[str, object] = {"streams": streams, "side": mode,
                                      "dec/s": plain.tally.rate}
            for group in GROUPS:
                cpu, switches = threads.get(group, (0.0, 0.0))
                row[f"{group} µs"] = cpu if group in threads else "-"
                row[f"{group} wk"] = switches if group in threads else "-"
            if have_strace:
                traced, watch = _measure(mode, streams, seconds, strace=True)
                counts = watch.syscalls()
                per = 1 / max(traced.tally.decisions, 1)
                for kind in KINDS:
                    row[kind] = counts[kind] * per
                row["syscalls"] = sum(counts.values()) * per
            else:
                for kind in (*KINDS, "syscalls"):
                    row[kind] = "-"
            rows.append(row)
    return rows


if __name__ == "__main__":
    from bench.__main__ import format_table

    print(format_table("wakeups", part(float(os.environ.get("BENCH_SECONDS", "3")))))
