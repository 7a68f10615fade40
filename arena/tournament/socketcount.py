"""How many sockets a launched seat holds (`[limits] sockets`), at a cost the seat cannot grow.

Two ways, chosen by the seat's jail (`SeatJail.own_netns`):

``netns`` — a bubblewrap seat has a network namespace of its own (``--unshare-all``) and can
make no other (``--disable-userns``: no nested user namespace, so no nested network one).
Every socket its processes create lives in that namespace, whatever process holds it, even
one in flight in a message (SCM_RIGHTS) that no descriptor table shows. The kernel shows a
namespace's sockets in ``/proc/<pid>/net/*`` of any process inside it (the files follow the
namespace of `pid`, not the reader's): ``sockstat`` gives their total in one line
(``sockets: used N``, every family), ``unix`` lists the Unix ones. A connection from inside
the seat to the referee's socket puts BOTH its ends in the seat's namespace (the kernel makes
the listener's end in the connecting socket's namespace); the referee's end names the
referee's socket path and is not the seat's: it is left out. So a count is two small reads
of one process's files, stopped after `most + 1` sockets: it does not grow with the seat's
processes or descriptors.

``descriptors`` — without a namespace of its own (sandbox mode "none", or a bwrap that cannot
forbid nested user namespaces) the seat's descriptors are examined, each with one ``stat``
of ``/proc/<pid>/fd/<n>`` (a socket is S_ISSOCK; no ``readlink``, whose cost grows with
the depth of the path a descriptor names), distinct sockets counted once, stopped at
`most + 1`. At most `DESCRIPTOR_BUDGET` descriptors and processes are examined per count: a
seat that holds more has NOT been counted, and is treated as flooding (`Count.over_budget`).
The seat's processes are those of its cgroup when it has one (a double-forked orphan too),
else `root` and its descendants.
(Continuing next time where a count stopped would let a seat spread its sockets over more
processes than one count reaches and never be seen whole.)

Every count measures the CPU it cost the thread that ran it (`SocketCounter.cpu_s`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["DESCRIPTOR_BUDGET", "Count", "SocketCounter"]

DESCRIPTOR_BUDGET = 4096
"""Descriptors (and processes) one count examines at most without a network namespace: some
milliseconds of CPU; an honest bot holds a few dozen."""

_READ = 16384  # one read of /proc/<pid>/net/unix: about 150 lines


@dataclass(frozen=True, slots=True)
class Count:
    """One count of a seat's sockets."""

    sockets: int  # sockets found; the count stops once it passes `most`
    how: str  # "netns" or "descriptors"
    examined: int  # lines read (netns) or descriptors and processes examined (descriptors)
    over_budget: bool = False  # descriptors: more than DESCRIPTOR_BUDGET; not counted whole
    cpu_s: float = 0.0  # CPU time this count cost the thread that ran it


def _netns_of(pid: int | str) -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


class SocketCounter:
    """Counts the sockets of the seat whose processes all descend from `root`."""

    def __init__(self, root: int, most: int, *, own_netns: bool,
                 referee_path: str | None = None,
                 members: Callable[[], Iterable[int]] | None = None) -> None:
        self.root = root
        self.members = members  # every process of the seat (its cgroup), orphans included
        self.most = most
        self.own_netns = own_netns
        self.referee_path = referee_path  # the referee's ends of connections name it
        self._proc: int | None = None  # a /proc/<pid> folder inside the seat's namespace
        self.counts = 0
        self.cpu_s = 0.0
        self.max_cpu_s = 0.0
        self.max_examined = 0

    @property
    def how(self) -> str:
        return "netns" if self.own_netns else "descriptors"

    def count(self) -> Count:
        """Count now (synchronous: run it where its cost is acceptable, see the module)."""
        start = time.thread_time()
        found = self._count_netns() if self.own_netns else self._count_descriptors()
        spent = time.thread_time() - start
        self.counts += 1
        self.cpu_s += spent
        self.max_cpu_s = max(self.max_cpu_s, spent)
        self.max_examined = max(self.max_examined, found.examined)
        return Count(found.sockets, found.how, found.examined, found.over_budget, spent)

    def close(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(OSError):
                os.close(self._proc)
            self._proc = None

    # -- netns ---------------------------------------------------------------------------

    def _inside(self) -> int | None:
        """A /proc/<pid> folder (an open descriptor: it never names a reused pid) of the
        first process under `root` in another network namespace than `root`'s: bwrap's
        child, the sandbox's first process, there as long as the sandbox is."""
        if self._proc is not None:
            return self._proc
        try:
            outer = _netns_of(self.root)
            pid: int | str = self.root
            for _ in range(4):  # root (bwrap) -> its child, already in the namespace
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    children = f.read().split()
                if not children:
                    return None  # not started yet: nothing to count
                pid = children[0]
                if _netns_of(pid) != outer:
                    self._proc = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY)
                    # Still that process (its pid not reused meanwhile), seen through the
                    # descriptor from now on.
                    if os.stat("ns/net", dir_fd=self._proc).st_ino != outer:
                        return self._proc
                    self.close()
                    return None
        except (OSError, ValueError):
            return None
        return None

    def _count_netns(self) -> Count:
        proc = self._inside()
        if proc is None:
            return Count(0, "netns", 0)
        try:
            fd = os.open("net/sockstat", os.O_RDONLY, dir_fd=proc)
            try:
                head = os.read(fd, 256).split(b"\n", 1)[0]
            finally:
                os.close(fd)
            used = int(head.rsplit(b" ", 1)[1])  # b"sockets: used 5"
            unix_total, unix_own, lines, complete = self._unix(proc)
        except (OSError, ValueError, IndexError):
            return Count(0, "netns", 0)  # the seat is gone (its /proc went with it)
        if not complete:
            return Count(unix_own, "netns", lines)
        # The other families (TCP, UDP, netlink...) from the total; both reads are one moment
        # only to a few sockets' difference.
        return Count(unix_own + max(0, used - unix_total), "netns", lines)

    def _unix(self, proc: int) -> tuple[int, int, int, bool]:
        """(Unix sockets listed, those not the referee's end, lines read, read to the end):
        reading stops once the seat's own pass `most`, or once the referee's ends pass
        `most` too (each one a connection from the seat: a flood counted as the seat's)."""
        referee = self.referee_path.encode() if self.referee_path else None
        total = own = theirs = 0
        fd = os.open("net/unix", os.O_RDONLY, dir_fd=proc)
        try:
            rest = b""
            first = True
            while chunk := os.read(fd, _READ):
                *lines, rest = (rest + chunk).split(b"\n")
                if first:
                    lines, first = lines[1:], False  # the header
                for line in lines:
                    total += 1
                    fields = line.split(None, 7)
                    if referee is not None and len(fields) == 8 and fields[7] == referee:
                        theirs += 1
                    else:
                        own += 1
                if own > self.most:
                    return total, own, total, False
                if theirs > self.most:
                    return total, theirs, total, False
        finally:
            os.close(fd)
        return total, own, total, True

    # -- descriptors ---------------------------------------------------------------------

    def _count_descriptors(self) -> Count:
        budget = DESCRIPTOR_BUDGET
        found: set[tuple[int, int]] = set()
        todo, seen = [str(self.root)], set[str]()
        walk = True  # down from root through /proc/<pid>/task/*/children
        if self.members is not None:  # the cgroup: an orphaned (double-forked) child too
            todo, walk = [str(pid) for pid in self.members()], False
            budget -= len(todo)
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            budget -= 1
            if budget < 0:
                return Count(len(found), "descriptors", DESCRIPTOR_BUDGET, over_budget=True)
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
                tasks = os.listdir(f"/proc/{pid}/task") if walk else []
            except OSError:
                continue
            budget -= len(fds) + len(tasks)
            if budget < 0:
                return Count(len(found), "descriptors", DESCRIPTOR_BUDGET, over_budget=True)
            for fd in fds:
                with contextlib.suppress(OSError):
                    st = os.stat(f"/proc/{pid}/fd/{fd}")
                    if stat.S_ISSOCK(st.st_mode):
                        found.add((st.st_dev, st.st_ino))
            if len(found) > self.most:
                break
            for task in tasks:
                with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
                    todo.extend(f.read().split())
        return Count(len(found), "descriptors", DESCRIPTOR_BUDGET - max(budget, 0))
