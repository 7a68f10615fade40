"""A random bot that thinks for a while before each decision (the web's live test needs a
tournament slow enough to be watched): `pondering.py MS [calm]`, default 20 ms.

`calm`: it plays a card whenever it may, else declines (no quiero, or runs), and never calls.
Every hand is then worth at most 2 points to either side (an envido declined, a truco
declined, a fold, or the hand played), so a game to 30 takes at least 15 hands, of which
this bot opens at least 7 (the deal alternates): a match of three chicos takes at least 14
of its decisions (over 100 in practice), at MS milliseconds each. A floor on how long a
match lasts, whatever the deal and the other bot do: a test that joins a match half-way
needs one."""

from __future__ import annotations

import random
import sys
import time

from arena.rules import Action, ActionKind, SeatView
from arena.sdk import Bot, main

PONDER_S = (int(sys.argv.pop(1)) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20) / 1000
CALM = len(sys.argv) > 1 and sys.argv[1] == "calm" and bool(sys.argv.pop(1))
_rng = random.Random(1)
_CALM_ORDER = (ActionKind.PLAY, ActionKind.NO_QUIERO, ActionKind.RUN, ActionKind.DECLINE_HAND)


class PonderingBot(Bot):
    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        time.sleep(PONDER_S)
        if CALM:
            for kind in _CALM_ORDER:
                choices = [i for i, action in enumerate(legal) if action.kind == kind]
                if choices:
                    return _rng.choice(choices)
        return _rng.randrange(len(legal))


if __name__ == "__main__":
    main(PonderingBot)
