"""A bot that answers its first decision with a message of 100 KiB, over the referee's 64 KiB
limit for a bot's message (under gRPC's own, twice that): the referee refuses it in-band
(MESSAGE_TOO_LARGE, naming its size), ends the stream (RESOURCE_EXHAUSTED), and ends the
match as a disconnect. What it is told is noted by hostile_common.Told.
"""

from __future__ import annotations

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

SIZE = 100 << 10

if __name__ == "__main__":
    told = Told()

    def on_message(message: pb.ServerMessage, send: Send) -> None:
        if message.WhichOneof("body") != "decision":
            return
        d = message.decision
        huge = pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(text="x" * SIZE))
        answer = pb.ActionReply(
            request_id=d.request_id, match_id=d.match_id, seat=d.seat, action=huge
        )
        send(pb.BotMessage(action=answer).SerializeToString())

    play(hello(), on_message, told=told)
