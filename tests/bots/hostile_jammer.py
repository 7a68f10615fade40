"""A launched bot that jams the launched bots' door: as it starts, it opens `--connections`
idle connections to its ARENA_SERVER (the unix socket every launched seat shares) and keeps
them; it says hello `--hold` seconds later (well within the connect deadline) and plays the
first legal action (`--pause` seconds each, well within the deadline).
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
    parser.add_argument("--hold", type=float, default=3.0)  # before its hello
    parser.add_argument("--pause", type=float, default=0.1)  # per decision
    args = parser.parse_args()
    path = os.environ["ARENA_SERVER"].removeprefix("unix:")
    held: list[socket.socket] = []
    for _ in range(args.connections):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        held.append(s)
    time.sleep(args.hold)
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            time.sleep(args.pause)
            wire.send(reply(message.decision, action_index=0))
