"""A bot (on the SDK) that plays a few legal decisions, then dies mid-match with os._exit
while the referee waits for its answer: the match must end at once as a DISCONNECT.

It never raises and never accepts a call (it plays a card when it can, otherwise the last
legal action: a no quiero or a fold), so its opponent cannot win the match before it dies.
"""

from __future__ import annotations

import os
import sys

from arena.rules import Action, ActionKind, SeatView
from arena.sdk import Bot, main

ANSWERED_BEFORE_DYING = 2
_asked = 0


class Disconnect(Bot):
    """Answers ANSWERED_BEFORE_DYING requests, then exits on the next one."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        global _asked
        _asked += 1
        if _asked > ANSWERED_BEFORE_DYING:
            print("disconnect: dying now, mid-match", file=sys.stderr, flush=True)
            os._exit(1)
        plays = [i for i, a in enumerate(legal) if a.kind is ActionKind.PLAY]
        return plays[0] if plays else len(legal) - 1


if __name__ == "__main__":
    main(Disconnect)
