"""A launched bot that takes the CPU (hostile review round 5, "cpuhog"). Before it imports
anything (gRPC's threads do not mix with fork) it forks `hostile_hog.py N` (default 120)
children, each in a session of its own (setsid: one scheduler autogroup each, so a kernel
sharing the CPU by session gives every child as much as a whole honest seat), niced, and
stopped. From its first decision on they spin while its opponent thinks: it stops them
(SIGSTOP) while it decides and lets them go (SIGCONT) just after it answers. It plays the
first legal action. With each seat one entity of the CPU scheduler (its cgroup), the
spinners share one seat's part, its own, and nobody else's."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 120
CHILDREN: list[int] = []
for _ in range(N):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        # Niced: in a session of its own the nice value weighs only inside that session (its
        # autogroup keeps a whole seat's weight); inside the seat's cgroup it lets the hog's
        # own process decide in time, so its matches last and its opponent plays them.
        os.nice(19)
        os.kill(os.getpid(), signal.SIGSTOP)
        while True:
            pass
    CHILDREN.append(pid)

import threading  # noqa: E402

from arena.sdk import Bot, main  # noqa: E402


def _signal(sig: int) -> None:
    for child in CHILDREN:
        with contextlib.suppress(OSError):
            os.kill(child, sig)


class Hog(Bot):
    def act(self, view: object, legal: tuple[object, ...]) -> int:
        _signal(signal.SIGSTOP)
        threading.Timer(0.005, _signal, (signal.SIGCONT,)).start()  # once it has answered
        return 0


if __name__ == "__main__":
    main(Hog)
