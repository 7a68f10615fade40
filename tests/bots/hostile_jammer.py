"""A launched bot that jams the launched bots' door: once it holds its seat (its first
decision), it opens `--connections` idle connections to its ARENA_SERVER (the unix socket
every launched seat shares) and keeps them, while it goes on playing the first legal action
(`--pause` seconds each, well within the deadline, so its matches last).
Enough of them fill that listener's connection cap and keep other matches' seats out. The
referee must kill it (`[limits] sockets`) and charge it, and nobody else.
"""

from __future__ import annotations

import argparse
import os
import socket
import time

from _wire import Wire, reply

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.1)  # per decision: a long match
    args = parser.parse_args()
    path = os.environ["ARENA_SERVER"].removeprefix("unix:")
    held: list[socket.socket] = []
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            if not held:
                for _ in range(args.connections):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(path)
                    held.append(s)
            time.sleep(args.pause)
            wire.send(reply(message.decision, action_index=0))
