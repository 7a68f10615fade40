"""A bot that answers every decision correctly, wrapped in noise the referee must refuse.

For each decision it sends, back to back: an answer to a request that does not exist
(UNKNOWN_REQUEST), the right request for a seat it does not hold (NOT_YOUR_SEAT), the real
answer (the first legal action), and the real answer again (DUPLICATE_ANSWER). Only the real
answer may count: its matches must end normally or by the other bot's fault, with no strike
for it. What it is told is noted by hostile_common.Told.
"""

from __future__ import annotations

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb


def answer(request_id: str, match_id: str, seat: int) -> bytes:
    reply = pb.ActionReply(request_id=request_id, match_id=match_id, seat=seat, action_index=0)
    return pb.BotMessage(action=reply).SerializeToString()


def noisy(message: pb.ServerMessage, send: Send) -> None:
    if message.WhichOneof("body") != "decision":
        return
    d = message.decision
    send(answer(f"no-such-request-{d.request_id}", d.match_id, d.seat))  # UNKNOWN_REQUEST
    send(answer(d.request_id, d.match_id, d.seat + 1))  # NOT_YOUR_SEAT
    send(answer(d.request_id, d.match_id, d.seat))  # the answer
    send(answer(d.request_id, d.match_id, d.seat))  # DUPLICATE_ANSWER


if __name__ == "__main__":
    play(hello(), noisy, told=Told())
