"""A bot that answers every decision with a malformed action: a PLAY of a card that is not a
card in any deck. The referee must count it as an illegal action (a protocol violation)."""

from __future__ import annotations

from _wire import Wire, reply

from arena.v1 import arena_pb2 as pb

GARBAGE = pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(text="not-a-card"))

if __name__ == "__main__":
    wire = Wire.from_env()
    for message in wire:
        if message.WhichOneof("body") == "decision":
            wire.send(reply(message.decision, action=GARBAGE))
