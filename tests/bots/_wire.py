"""Raw gRPC plumbing for the test bots that must misbehave below the SDK (arena.v1 only).

    wire = Wire.from_env()          # dials ARENA_SERVER, says hello with its token (ARENA_TOKEN_FD)
    for message in wire:            # every ServerMessage, until the referee ends the stream
        ...
        wire.send(reply)

The referee launches each test bot like any other: ARENA_SERVER, ARENA_TOKEN_FD and
ARENA_BOT_NAME are in the environment.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator

import grpc

from arena.sdk import token_from_env
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


class Wire:
    """One `Referee.Play` stream: iterate to read, `send` to answer."""

    def __init__(self, server: str, token: str, name: str) -> None:
        self._outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        self._outbox.put(
            pb.BotMessage(hello=pb.Hello(bot_name=name, token=token, protocol_version=1))
        )
        self.server = server
        self._channel = grpc.insecure_channel(server)
        self._responses = pb_grpc.RefereeStub(self._channel).Play(self._outgoing())

    @classmethod
    def from_env(cls) -> Wire:
        return cls(
            os.environ["ARENA_SERVER"],
            token_from_env(),
            os.environ.get("ARENA_BOT_NAME", "test-bot"),
        )

    def _outgoing(self) -> Iterator[pb.BotMessage]:
        while (message := self._outbox.get()) is not None:
            yield message

    def send(self, message: pb.BotMessage) -> None:
        self._outbox.put(message)

    def __iter__(self) -> Iterator[pb.ServerMessage]:
        """Every message until the stream ends (normally, or with an error status)."""
        try:
            yield from self._responses
        except grpc.RpcError:
            return
        finally:
            self._outbox.put(None)
            self._channel.close()


def reply(decision: pb.DecisionRequest, **choice: object) -> pb.BotMessage:
    """An answer to `decision` echoing its ids, with `action_index=` or `action=`."""
    return pb.BotMessage(
        action=pb.ActionReply(
            request_id=decision.request_id,
            match_id=decision.match_id,
            seat=decision.seat,
            **choice,
        )
    )
