"""One cgroup per launched seat: memory limited by real use, a pids limit, one equal share of
contended CPU, and a way to kill every process of the seat, however it detached itself
(setsid, double fork).

The CPU: without a cpu controller the kernel shares the CPU between sessions (scheduler
autogroups), and a bot's children that each call setsid() weigh like whole seats (a hostile
review, round 5, struck honest bots and other matches so). With the seat's cgroup in the cpu
hierarchy (v1) or the cpu controller enabled for the seats (v2), each seat is one entity of
the scheduler at the default weight, whatever it forks.

Where the kernel lets us, a seat gets a child of the referee's own cgroup:

- cgroup v2 (a pure v2 host: ``/sys/fs/cgroup/cgroup.controllers``): ``memory.max``,
  ``memory.swap.max`` = 0, ``pids.max``; stopped with ``cgroup.kill``. The memory controller
  must be delegated to the referee's cgroup (root, or e.g. ``systemd-run --scope -p
  Delegate=yes``); the referee moves itself into a leaf ``arena-referee`` when it must;
- cgroup v1 (the ``memory`` and ``pids`` hierarchies): ``memory.limit_in_bytes`` (and
  ``memory.memsw.limit_in_bytes`` when swap accounting is on), ``pids.max``; stopped by
  SIGKILLing every pid in ``cgroup.procs`` until it is empty.

The seat's process joins its cgroup before it runs any bot code: the launcher execs through
`join_commands` (run by the ``sh`` of `arena.tournament.sandbox.launch_prefix`, which writes
its own pid into ``cgroup.procs``, then execs the rest).
`find_cgroups` returns None where no controller is writable; the caller falls back to
RLIMIT_AS (see `arena.tournament.sandbox`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import signal
from dataclasses import dataclass
from pathlib import Path

import trio

_ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class CgroupRoots:
    """Where seat cgroups are made: one folder per hierarchy (v2: one; v1: memory, pids)."""

    version: int
    memory: Path  # the referee's own cgroup in the memory hierarchy (v2: the unified one)
    pids: Path | None  # v1 only: the referee's cgroup in the pids hierarchy, when writable
    # v1 only: the referee's cgroup in the cpu hierarchy, when writable (v2: `cpu_shared`)
    cpu: Path | None = None
    cpu_shared: bool = False  # each seat is one entity of the CPU scheduler (see `seat`)

    def sweep(self) -> None:
        """Remove the seat cgroups a referee killed with SIGKILL left behind (named after
        their dead referee's pid); their processes died with that referee's sandboxes, and
        any that did not are killed now."""
        for parent in (self.memory, self.pids, self.cpu):
            if parent is None:
                continue
            for folder in parent.glob("arena-seat-*-*"):
                owner = folder.name.split("-")[2]
                if owner.isdigit() and not _alive(int(owner)):
                    stale = SeatCgroup(self.version, (folder,))
                    for pid in stale.pids():
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
                    stale.remove()

    def seat(self, memory_mb: int, pids_max: int) -> SeatCgroup:
        """A new cgroup for one seat with these limits (0 = none). Where the CPU controller
        is ours (`cpu_shared`), the seat is also one entity of the CPU scheduler with the
        default weight, whatever it forks: otherwise the kernel shares the CPU between
        sessions (autogroups), and a bot whose busy children each called setsid() took the
        CPU from honest seats and other matches (hostile review, round 5)."""
        name = f"arena-seat-{os.getpid()}-{next(_counter)}"
        dirs = [self.memory / name]
        if self.pids is not None:
            dirs.append(self.pids / name)
        if self.cpu is not None:
            dirs.append(self.cpu / name)
        for folder in dirs:
            folder.mkdir()
        group = SeatCgroup(self.version, tuple(dirs))
        try:
            group.limit(memory_mb, pids_max)
        except OSError:
            group.remove()
            raise
        return group


@dataclass(frozen=True, slots=True)
class SeatCgroup:
    """A seat's cgroup folders (the first is the one whose ``cgroup.procs`` is watched)."""

    version: int
    dirs: tuple[Path, ...]

    def limit(self, memory_mb: int, pids_max: int) -> None:
        main = self.dirs[0]
        if memory_mb:
            size = str(memory_mb * 1024 * 1024)
            if self.version == 2:
                (main / "memory.max").write_text(size)
                with contextlib.suppress(OSError):  # no swap: the limit is real memory
                    (main / "memory.swap.max").write_text("0")
            else:
                (main / "memory.limit_in_bytes").write_text(size)
                memsw = main / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    memsw.write_text(size)
        if pids_max:
            for folder in self.dirs:
                if self.version == 2 or (folder / "pids.max").exists():
                    (folder / "pids.max").write_text(str(pids_max))

    def oom_kills(self) -> int:
        """How many of the seat's processes the kernel killed over its memory limit (v2:
        ``memory.events``, v1: ``memory.oom_control``, kernels 4.13 and later; 0 if unknown)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.dirs[0] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def join_commands(self) -> str:
        """Shell commands that move the shell running them into this cgroup."""
        return " && ".join(
            f"echo $$ > {shlex.quote(str(folder / 'cgroup.procs'))}" for folder in self.dirs
        )

    def join_prefix(self) -> list[str]:
        """An argv prefix that moves the process into this cgroup, then execs the rest."""
        return ["/bin/sh", "-c", f'{self.join_commands()} && exec "$@"', "arena-seat"]

    def pids(self) -> list[int]:
        """Every process still in the cgroup."""
        found: set[int] = set()
        for folder in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    async def kill(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process of the seat; True once the cgroup is empty."""
        kill_file = self.dirs[0] / "cgroup.kill"
        with trio.move_on_after(timeout):
            while True:
                pids = self.pids()
                if not pids:
                    return True
                if self.version == 2 and kill_file.exists():
                    with contextlib.suppress(OSError):
                        kill_file.write_text("1")
                else:  # v1: kill what is there, again until nothing is left (forks race)
                    for pid in pids:
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(pid, signal.SIGKILL)
                await trio.sleep(0.01)
        return not self.pids()

    def remove(self) -> None:
        """Delete the (empty) cgroup folders."""
        for folder in self.dirs:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(","):
                paths[name] = path
    return paths


def _writable(folder: Path) -> bool:
    probe = folder / f"arena-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def find_cgroups(root: Path = _ROOT) -> CgroupRoots | None:
    """Where this process may make seat cgroups with a memory controller, or None."""
    own = _own_paths()
    if (root / "cgroup.controllers").exists():  # pure cgroup v2
        folder = root / own.get("", "/").lstrip("/")
        control = folder / "cgroup.subtree_control"
        try:
            if "memory" not in (folder / "cgroup.controllers").read_text().split():
                return None  # memory is not delegated to us
            if "memory" not in control.read_text().split():
                try:
                    control.write_text("+memory +pids")
                except OSError:
                    # "No internal processes": move ourselves into a leaf, then enable the
                    # controllers for the children (works when we were alone in our cgroup,
                    # e.g. a systemd scope with Delegate=yes).
                    leaf = folder / "arena-referee"
                    leaf.mkdir(exist_ok=True)
                    (leaf / "cgroup.procs").write_text(str(os.getpid()))
                    control.write_text("+memory +pids")
        except OSError:
            return None  # not delegated, or other processes share our cgroup
        shared = "cpu" in control.read_text().split()
        if not shared and "cpu" in (folder / "cgroup.controllers").read_text().split():
            with contextlib.suppress(OSError):  # not delegated: seats share CPU by session
                control.write_text("+cpu")
                shared = True
        return CgroupRoots(2, folder, None, cpu_shared=shared) if _writable(folder) else None
    if "memory" in own and (root / "memory").is_dir():
        memory = root / "memory" / own["memory"].lstrip("/")
        if not _writable(memory):
            return None
        pids: Path | None = None
        if "pids" in own and (root / "pids").is_dir():
            candidate = root / "pids" / own["pids"].lstrip("/")
            pids = candidate if _writable(candidate) else None
        cpu: Path | None = None
        if "cpu" in own and (root / "cpu").is_dir():
            candidate = root / "cpu" / own["cpu"].lstrip("/")
            cpu = candidate if _writable(candidate) else None
        return CgroupRoots(1, memory, pids, cpu, cpu_shared=cpu is not None)
    return None
