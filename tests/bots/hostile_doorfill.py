"""A launched bot that keeps the launched bots' door full, so that its opponent, started
after it, cannot get in and forfeits.

It opens `--streams` streams to its ARENA_SERVER (the launched bots' unix socket, which its
opponent shares) that never send anything, opens another each time the referee closes one
(`--refills` in all), and plays its own seat honestly, the first legal action, on one more
stream. The referee must let the opponent in all the same: at a full door a newcomer closes
the stream that has been silent longest. What the silent streams were told is noted by
hostile_common.Told (`silent <STATUS>`, once per status).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
from _wire import Wire, reply
from hostile_common import Told

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

_stop = threading.Event()


def _nothing() -> Iterator[pb.BotMessage]:
    _stop.wait()
    yield from ()


class Filler:
    """The silent streams: each on a connection of its own (the referee lets a launched
    bot's connection hold two streams; the sockets stay under `[limits] sockets`), read on a
    thread of its own (gRPC gives a stream's final status only once its messages are read),
    and opened again once it ends."""

    def __init__(self, server: str, refills: int, told: Told) -> None:
        self._server = server
        self._refills = refills
        self._told = told
        self._lock = threading.Lock()

    def open(self) -> None:
        channel = grpc.insecure_channel(self._server,
                                        options=[("grpc.use_local_subchannel_pool", 1)])
        call = pb_grpc.RefereeStub(channel).Play(_nothing())
        threading.Thread(target=self._read, args=(channel, call), daemon=True).start()

    def _read(self, channel: grpc.Channel, call: Any) -> None:
        try:
            for _message in call:
                pass
            self._told.line("silent OK")
        except grpc.RpcError as exc:
            self._told.line(f"silent {exc.code().name}")
        channel.close()
        with self._lock:
            if _stop.is_set() or self._refills <= 0:
                return
            self._refills -= 1
        self.open()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--refills", type=int, default=300)
    args = parser.parse_args()
    told = Told(once=frozenset({"silent OK", "silent RESOURCE_EXHAUSTED",
                                "silent DEADLINE_EXCEEDED", "silent CANCELLED",
                                "silent UNAVAILABLE"}))
    filler = Filler(os.environ["ARENA_SERVER"], args.refills, told)
    for _ in range(args.streams):
        filler.open()
    time.sleep(0.3)  # the flood is in before this bot says hello
    wire = Wire.from_env()
    for message in wire:
        told.message(message)
        if message.WhichOneof("body") == "decision":
            wire.send(reply(message.decision, action_index=0))
    _stop.set()
