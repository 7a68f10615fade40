"""An honest bot that computes before each decision: `cruncher.py MS` (default 30) burns MS
milliseconds of its own CPU time, then plays the first legal action. Its time depends on the
CPU it gets, not on the clock (tests/test_hostile.py's CPU-fairness test)."""

from __future__ import annotations

import sys
import time

from arena.sdk import Bot, main

CPU_S = (int(sys.argv[1]) if len(sys.argv) > 1 else 30) / 1000


class Cruncher(Bot):
    def act(self, view: object, legal: tuple[object, ...]) -> int:
        start = time.process_time()
        while time.process_time() - start < CPU_S:
            pass
        return 0


if __name__ == "__main__":
    main(Cruncher)
