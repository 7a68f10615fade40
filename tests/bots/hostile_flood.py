"""A bot that floods the referee: as soon as it is welcomed it sends FLOOD answers to requests
that do not exist, far beyond the referee's 500 messages a second (bursts of 1,000). The
referee must answer RATE_LIMITED, close the stream, and end the match as a disconnect. What it
is told is noted by hostile_common.Told.

It floods from the welcome, not from its first decision: it never answers a decision (its
answers would wait behind the flood anyway), and a slow machine may take a second to notice
the flood, so starting early keeps the flood, not three timeouts, the fault that ends the match.
"""

from __future__ import annotations

from hostile_common import Send, Told, hello, play

from arena.v1 import arena_pb2 as pb

FLOOD = 20_000
# One answer to a request that does not exist, serialized once: the bot spends its time
# sending, not encoding (a slow flood might not outrun the limit's refill on a busy machine).
BOGUS = pb.BotMessage(action=pb.ActionReply(request_id="flood", action_index=0))


def flood(message: pb.ServerMessage, send: Send) -> None:
    if message.WhichOneof("body") == "welcome":
        data = BOGUS.SerializeToString()
        for _ in range(FLOOD):
            send(data)


if __name__ == "__main__":
    play(hello(), flood, told=Told(once=frozenset({"error ERROR_CODE_UNKNOWN_REQUEST"})))
