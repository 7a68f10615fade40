"""What counting a launched seat's sockets (`[limits] sockets`) costs the referee, before and
after `arena.tournament.socketcount`, side by side in one run.

Seats, each launched as in a contest (`SeatProcess.start`, the default limits: 256 open files,
512 processes) and left running: ``honest`` (one connection to the referee's socket, then
asleep), ``bomb`` and ``bomb-deep`` (tests/bots/hostile_fdbomb.py, the hostile review's
"fd_amplify": `BENCH_FDBOMB_PROCS` processes, 480 by default, holding ~230 descriptors each,
no socket; deep: each names a file 1,800 folders down its /tmp). Each seat is sandboxed
(``bwrap``) and, for the fallback, unsandboxed (``none``).

Counters: ``before`` (the watcher as it was, commit 01d6404: a readlink of every descriptor
of every process of the seat), ``after`` (`SocketCounter` as the launcher builds it for that
jail: the seat's network namespace when bwrap, bounded descriptors otherwise). Columns:
``cpu ms`` the referee's CPU (its thread's) per count, the median of the counts made in
`BENCH_SECONDS` (at least 2), ``max ms`` the worst, ``sockets`` what it found, ``examined``
lines or descriptors read, ``verdict`` what the watcher does with it (at most 64 sockets).
``after:netns, hop``: the same count run in a worker thread, the CPU of the trio thread
alone (handing it over, taking the answer back): more than the count itself.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import trio

from arena.rpc.peers import process_tree
from arena.tournament.launcher import BotLimits, SeatProcess
from arena.tournament.sandbox import Sandbox
from arena.tournament.socketcount import SocketCounter

REPO = Path(__file__).resolve().parent.parent
FDBOMB = REPO / "tests" / "bots" / "hostile_fdbomb.py"
MOST = 64
HONEST = """import os, socket, time
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["ARENA_SERVER"].removeprefix("unix:"))
print("connected", flush=True)
time.sleep(3600)
"""


def readlink_count(root: int) -> int:
    """The count before (launcher._sockets_of at 01d6404): every descriptor readlinked."""
    held = 0
    for pid in process_tree(root):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                    held += 1
    return held


def _accept_forever(listener: socket.socket, held: list[socket.socket]) -> None:
    with contextlib.suppress(OSError):
        while True:
            held.append(listener.accept()[0])


def _timed(count: Callable[[], tuple[int, int, str]], seconds: float) -> dict[str, object]:
    spent: list[float] = []
    found = (0, 0, "")
    deadline = time.monotonic() + seconds
    while len(spent) < 2 or time.monotonic() < deadline:
        start = time.thread_time()
        found = count()
        spent.append(time.thread_time() - start)
    sockets, examined, verdict = found
    return {"counts": len(spent), "cpu ms": statistics.median(spent) * 1000,
            "max ms": max(spent) * 1000, "sockets": sockets, "examined": examined,
            "verdict": verdict}


async def _hop(count: Callable[[], tuple[int, int, str]], seconds: float) -> dict[str, object]:
    """The same count in a worker thread (`trio.to_thread.run_sync`): the CPU it costs the
    trio thread alone, to hand it over and take the answer back."""
    spent: list[float] = []
    found = (0, 0, "")
    deadline = time.monotonic() + seconds
    while len(spent) < 2 or time.monotonic() < deadline:
        start = time.thread_time()
        found = await trio.to_thread.run_sync(count)
        spent.append(time.thread_time() - start)
    sockets, examined, verdict = found
    return {"counts": len(spent), "cpu ms": statistics.median(spent) * 1000,
            "max ms": max(spent) * 1000, "sockets": sockets, "examined": examined,
            "verdict": verdict}


async def _measure(root: Path, seconds: float) -> list[dict[str, object]]:
    path = root / "referee.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(512)
    accepted: list[socket.socket] = []
    threading.Thread(target=_accept_forever, args=(listener, accepted), daemon=True).start()
    honest = root / "honest.py"
    honest.write_text(HONEST)
    procs = os.environ.get("BENCH_FDBOMB_PROCS", "480")
    seats = {"honest": [sys.executable, str(honest)],
             "bomb": [sys.executable, str(FDBOMB), "--procs", procs, "--linger", "3600"],
             "bomb-deep": [sys.executable, str(FDBOMB), "--procs", procs, "--depth", "1800",
                           "--linger", "3600"]}
    rows: list[dict[str, object]] = []
    for mode in ("bubblewrap", "none"):
        sandbox = Sandbox(mode, socket=path, temp_root=root)
        for name, argv in seats.items():
            async with trio.open_nursery() as nursery:
                seat = await SeatProcess.start(
                    argv, cwd=root, server=f"unix:{path}", token="t", bot_name=name,
                    log_path=root / f"{name}.{mode}.log", nursery=nursery,
                    limits=BotLimits(sockets=0), sandbox=sandbox,
                    bot_dir=root if name == "honest" else FDBOMB.parent)
                # Started: its descriptors opened, its children forked (its output reaches
                # its log only when it is done).
                want = 1 if name == "honest" else int(procs)
                for _ in range(240):  # the deep folders take a while on a loaded machine
                    if len(process_tree(seat.pid)) >= want + 1:
                        break
                    await trio.sleep(0.25)
                await trio.sleep(0.5)
                cgroup = seat.jail.cgroup
                counter = SocketCounter(seat.pid, MOST, own_netns=seat.jail.own_netns,
                                        referee_path=seat.jail.referee_socket,
                                        members=cgroup.pids if cgroup is not None else None)

                def before(pid: int = seat.pid) -> tuple[int, int, str]:
                    held = readlink_count(pid)
                    return held, 0, "kill" if held > MOST else "ok"

                def after(counter: SocketCounter = counter) -> tuple[int, int, str]:
                    found = counter.count()
                    kill = found.sockets > MOST or found.over_budget
                    verdict = ("kill (over budget)" if found.over_budget else
                               "kill" if kill else "ok")
                    return found.sockets, found.examined, verdict

                sandboxed = "bwrap" if mode == "bubblewrap" else "none"
                for label, count in (("before", before), (f"after:{counter.how}", after)):
                    rows.append({"seat": name, "sandbox": sandboxed, "counter": label,
                                 **_timed(count, seconds)})
                if name == "honest" and mode == "bubblewrap":
                    rows.append({"seat": name, "sandbox": sandboxed,
                                 "counter": "after:netns, hop", **await _hop(after, seconds)})
                counter.close()
                await seat.stop(grace=0)
    listener.close()
    return rows


def part(seconds: float) -> list[dict[str, object]]:
    root = tempfile.mkdtemp(prefix="sockcount", dir="/tmp")
    try:
        return trio.run(_measure, Path(root), min(seconds, 3.0))
    finally:  # the deep folders are deeper than shutil.rmtree recurses
        subprocess.run(["rm", "-rf", "--one-file-system", "--", root], check=False)
