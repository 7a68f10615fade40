"""An honest bot that thinks long once: the first legal action every time, but before its
third decision (`thinker.py SECONDS N`: its Nth) it thinks for SECONDS (default 12), well
inside a generous decision_ms. Nothing else happens meanwhile: the referee is idle while it
thinks."""

from __future__ import annotations

import sys
import time

from arena.rules import Action, SeatView
from arena.sdk import Bot, main

THINK_S = float(sys.argv.pop(1)) if len(sys.argv) > 1 else 12.0
AT = int(sys.argv.pop(1)) if len(sys.argv) > 1 else 3


class Thinker(Bot):
    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        self.decisions += 1
        if self.decisions == AT:
            time.sleep(THINK_S)
        return 0


if __name__ == "__main__":
    main(Thinker)
