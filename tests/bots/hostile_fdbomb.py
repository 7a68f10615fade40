"""A launched bot that makes counting its sockets expensive (hostile review round 3,
"fd_amplify"): as it starts it opens as many descriptors as its RLIMIT_NOFILE allows, none a
socket, each naming one file at the bottom of `--depth` nested one-letter folders in its own
/tmp (0: /dev/null), then forks `--procs` - 1 idle children that inherit them. It costs the
bot nothing; a referee that examines every descriptor of every process of the seat (and
resolves each one's path) pays for all of them at every count. Then it says hello and plays
the first legal action, `--pause` seconds per decision (and stays `--linger` seconds after
its stream ends: bench/socket_count.py has no referee to play with).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import sys
import time

from _wire import Wire, reply


def descriptors(depth: int, spare: int = 24) -> list[int]:
    if depth:
        folder = os.open(os.environ.get("HOME", "/tmp"), os.O_RDONLY)
        for _ in range(depth):
            with contextlib.suppress(FileExistsError):
                os.mkdir("a", dir_fd=folder)
            deeper = os.open("a", os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = deeper
        first = os.open("f", os.O_CREAT | os.O_RDONLY, 0o600, dir_fd=folder)
        os.close(folder)
    else:
        first = os.open("/dev/null", os.O_RDONLY)
    held = [first]
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    while len(held) < soft - spare:
        try:
            held.append(os.dup(first))
        except OSError:
            break
    return held


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--procs", type=int, default=480)
    parser.add_argument("--depth", type=int, default=0)
    parser.add_argument("--pause", type=float, default=0.05)  # per decision
    parser.add_argument("--linger", type=float, default=0.0)  # alive that long after its stream
    args = parser.parse_args()
    held = descriptors(args.depth)
    children = 0
    for _ in range(args.procs - 1):
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        except OSError:
            break
        children += 1
    print(f"fdbomb: {len(held)} descriptors x {children + 1} processes, depth {args.depth}",
          file=sys.stderr, flush=True)
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            time.sleep(args.pause)
            wire.send(reply(message.decision, action_index=0))
    time.sleep(args.linger)
