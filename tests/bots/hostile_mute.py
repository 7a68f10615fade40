"""A bot that opens its `Referee.Play` stream and never says anything, not even hello.

The referee must drop the stream at its hello deadline (`[faults] hello_ms`) with BAD_HELLO;
the bot then prints what it was told on stderr (the forfeit detail quotes it) and exits with
status 5, before ever taking its seat.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

done = threading.Event()


def nothing() -> Iterator[pb.BotMessage]:
    """The requests: none, until the bot is done."""
    done.wait()
    yield from ()


def say(text: str) -> None:
    print(f"hostile_mute: {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    channel = grpc.insecure_channel(os.environ["ARENA_SERVER"])
    try:
        for message in pb_grpc.RefereeStub(channel).Play(nothing()):
            if message.WhichOneof("body") == "error":
                say(f"told {pb.ErrorCode.Name(message.error.code)}: {message.error.message}")
    except grpc.RpcError as exc:
        say(f"stream ended: {exc.code().name}")
    done.set()
    channel.close()
    sys.exit(5)
