"""A bot below the SDK whose card texts break a naive reader (hostile review round 5,
"supercard"): Unicode digits that `str.isdigit` takes and `int` refuses ("⁷", "①") or reads
(U+0667, Arabic-Indic seven), a NUL, a text of 10,000 characters. `hostile_oddtext.py once`
answers its first decision with PLAY "⁷e" (its deck's suit) and every later one with index 0;
`always` answers every decision with the next odd text in turn."""

from __future__ import annotations

import sys

from _wire import Wire, reply

from arena.v1 import arena_pb2 as pb

ODD_RANKS = ("\u2077", "\u2460", "\u0667", "7\x00", "7" * 10_000)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "once"
    wire = Wire.from_env()
    suit = "e"
    sent = 0
    for message in wire:
        body = message.WhichOneof("body")
        if body == "game_started":
            suit = "c" if message.game_started.variant.startswith("mineiro") else "e"
        elif body == "decision":
            if mode == "always" or sent == 0:
                rank = ODD_RANKS[sent % len(ODD_RANKS)]
                card = pb.Card(text=rank + suit)
                wire.send(reply(message.decision, action=pb.Action(kind=pb.ACTION_KIND_PLAY,
                                                                     card=card)))
            else:
                wire.send(reply(message.decision, action_index=0))
            sent += 1


if __name__ == "__main__":
    main()
