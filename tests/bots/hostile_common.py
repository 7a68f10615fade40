"""Shared by the hostile test bots (tests/bots/hostile_*.py): a log of what the bot was told.

Each hostile bot writes one line per noteworthy message it receives to a file in the folder
named by $HOSTILE_DUMP_DIR (when set): ``<bot name>.<pid>-<random>.log`` (sandboxed bots
all have pid 2), lines such as
``error ERROR_CODE_LATE_ANSWER`` or ``status RESOURCE_EXHAUSTED``. The test reads them back to
check which in-band errors each hostile bot was sent.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.sdk import token_from_env
from arena.v1 import arena_pb2 as pb


class Told:
    """Appends what the referee told this bot process to its dump file (flushed per line).
    Lines in `once` are written the first time only (a flood's thousands of replies)."""

    def __init__(self, once: frozenset[str] = frozenset()) -> None:
        folder = os.environ.get("HOSTILE_DUMP_DIR")
        name = os.environ.get("ARENA_BOT_NAME", "hostile")
        self._file = None
        self._once = once
        self._seen: set[str] = set()
        if folder:
            path = Path(folder) / f"{name}.{os.getpid()}-{secrets.token_hex(6)}.log"
            self._file = path.open("a", encoding="utf-8")

    def line(self, text: str) -> None:
        if text in self._once:
            if text in self._seen:
                return
            self._seen.add(text)
        if self._file is not None:
            self._file.write(text + "\n")
            self._file.flush()

    def message(self, message: Any) -> None:
        """Note an in-band error or the end of a match."""
        body = message.WhichOneof("body")
        if body == "error":
            self.line(f"error {pb.ErrorCode.Name(message.error.code)}")
        elif body == "game_over":
            self.line(f"game_over {message.game_over.outcome.termination}")


Send = Callable[[bytes], None]


def play(
    first: bytes,
    on_message: Callable[[Any, Send], None],
    *,
    told: Told,
    server: str | None = None,
) -> None:
    """Open `Referee.Play` with a raw-bytes request serializer (so a bot can send bytes that
    are not a BotMessage at all), send `first`, and call ``on_message(message, send)`` for
    every ServerMessage; `send` takes bytes. The final gRPC status is noted as
    ``status <CODE>``."""
    import queue

    import grpc

    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    outbox.put(first)
    channel = grpc.insecure_channel(server or os.environ["ARENA_SERVER"])
    call = channel.stream_stream(
        "/arena.v1.Referee/Play",
        request_serializer=None,  # requests are sent as the bytes they are
        response_deserializer=pb.ServerMessage.FromString,
    )
    try:
        for message in call(iter(outbox.get, None)):
            told.message(message)
            on_message(message, outbox.put)
        told.line("status OK")
    except grpc.RpcError as exc:
        told.line(f"status {exc.code().name}")
    finally:
        outbox.put(None)
        channel.close()


def hello(token: str | None = None) -> bytes:
    """A serialized hello with its token (ARENA_TOKEN_FD or ARENA_TOKEN, or `token`) and
    ARENA_BOT_NAME."""
    return pb.BotMessage(
        hello=pb.Hello(
            bot_name=os.environ.get("ARENA_BOT_NAME", "hostile"),
            token=token_from_env() if token is None else token,
            protocol_version=1,
        )
    ).SerializeToString()
