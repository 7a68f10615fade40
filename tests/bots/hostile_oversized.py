"""A bot that answers its first decision with a message of 2 MiB, over the referee's 1 MiB
limit: gRPC must refuse it (RESOURCE_EXHAUSTED), the stream fails, and the referee must end
the match as a disconnect. What it is told is noted by hostile_common.Told.
"""

from __future__ import annotations

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

SIZE = 2 << 20

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
