"""A random bot that thinks for a while before each decision (the web's live test needs a
tournament slow enough to be watched): `pondering.py MS`, default 20 ms."""

from __future__ import annotations

import random
import sys
import time

from arena.rules import Action, SeatView
from arena.sdk import Bot, main

PONDER_S = (int(sys.argv.pop(1)) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20) / 1000
_rng = random.Random(1)


class PonderingBot(Bot):
    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        time.sleep(PONDER_S)
        return _rng.randrange(len(legal))


if __name__ == "__main__":
    main(PonderingBot)
