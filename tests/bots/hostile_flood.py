"""A bot that floods the referee: at its first decision request it sends FLOOD answers to
requests that do not exist, far beyond the referee's allowance of stray messages (200
banked) and its 500 messages a second (bursts of 1,000). The referee must answer
RATE_LIMITED, close the stream, and end the match as a disconnect. What it is told is noted
by hostile_common.Told.

It never answers a decision. The stray-message allowance counts messages, not time, so the
flood is caught at its 201st message however slowly a busy referee reads it: the flood, not
three timeouts, is the fault that ends the match. It floods once it holds a seat (at its first
decision), so the match has begun and the referee records a disconnect mid-match.
"""

from __future__ import annotations

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

FLOOD = 20_000
# One answer to a request that does not exist, serialized once: the bot spends its time
# sending, not encoding (a slow flood might not outrun the limit's refill on a busy machine).
BOGUS = pb.BotMessage(action=pb.ActionReply(request_id="flood", action_index=0))


_flooded = False


def flood(message: pb.ServerMessage, send: Send) -> None:
    global _flooded
    if message.WhichOneof("body") == "decision" and not _flooded:
        _flooded = True
        data = BOGUS.SerializeToString()
        for _ in range(FLOOD):
            send(data)


if __name__ == "__main__":
    play(hello(), flood, told=Told(once=frozenset({"error ERROR_CODE_UNKNOWN_REQUEST"})))
