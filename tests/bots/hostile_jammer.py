"""A launched bot that jams the launched bots' door: as it starts, it opens `--connections`
idle connections to its ARENA_SERVER (the unix socket every launched seat shares) and keeps
them; it says hello `--hold` seconds later (well within the connect deadline) and plays the
first legal action (`--pause` seconds each, well within the deadline).
Enough of them fill that listener's connection cap and keep other matches' seats out. The
referee must kill it (`[limits] sockets`) and charge it, and nobody else.

``--stash``: the connections are then sent, in one SCM_RIGHTS message, into one end of a
socketpair nobody reads, and closed: held in flight, in no descriptor table (a count of the
seat's descriptors sees the pair, two sockets). ``--nested``: first it tries to move into a
user and network namespace of its own (unshare), where a count of its sandbox's namespace
would not see its connections; it says on stderr whether it could.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import socket
import sys
import time

from _wire import Wire, reply

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--hold", type=float, default=3.0)  # before its hello
    parser.add_argument("--pause", type=float, default=0.1)  # per decision
    parser.add_argument("--stash", action="store_true")
    parser.add_argument("--nested", action="store_true")
    args = parser.parse_args()
    if args.nested:
        libc = ctypes.CDLL(None, use_errno=True)
        done = libc.unshare(0x10000000 | 0x40000000)  # CLONE_NEWUSER | CLONE_NEWNET
        why = "" if done == 0 else os.strerror(ctypes.get_errno())
        print(f"jammer: nested namespace {'made' if done == 0 else 'refused: ' + why}",
              file=sys.stderr, flush=True)
    path = os.environ["ARENA_SERVER"].removeprefix("unix:")
    held: list[socket.socket] = []
    for _ in range(args.connections):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        held.append(s)
    if args.stash:
        stash, peer = socket.socketpair()
        for start in range(0, len(held), 200):  # SCM_MAX_FD: 253 per message
            socket.send_fds(stash, [b"x"], [s.fileno() for s in held[start:start + 200]])
        for s in held:
            s.close()
        held = [stash, peer]
        print("jammer: connections stashed in flight", file=sys.stderr, flush=True)
    time.sleep(args.hold)
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            time.sleep(args.pause)
            wire.send(reply(message.decision, action_index=0))
