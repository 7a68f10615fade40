"""A bot that answers every decision correctly, but only after its deadline has passed.

Each decision is answered (index 0) `LATE_BY` seconds after `time_left_ms` has run out, from a
timer, while the bot keeps reading its stream: every decision is a timeout for the referee,
and every late answer is refused in-band with LATE_ANSWER (noted by hostile_common.Told).
"""

from __future__ import annotations

import threading

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

LATE_BY = 0.25  # seconds after the deadline


def answer_late(message: pb.ServerMessage, send: Send) -> None:
    if message.WhichOneof("body") != "decision":
        return
    d = message.decision
    answer = pb.BotMessage(
        action=pb.ActionReply(
            request_id=d.request_id, match_id=d.match_id, seat=d.seat, action_index=0
        )
    )
    late = threading.Timer(d.time_left_ms / 1000 + LATE_BY, send, [answer.SerializeToString()])
    late.daemon = True
    late.start()


if __name__ == "__main__":
    play(hello(), answer_late, told=Told())
