"""The floor run cold, and trio's share of it (docs/ARCHITECTURE.md, "Why one stream costs
so much more than sixteen"): `python -m bench.cold_path`.

- ``hot`` / ``idle``: `referee_path.measure_floor`'s CPU µs per decision as it is (every
  answer at once) and with the thread asleep 0.3 ms (`time.sleep`) before each answer, as a
  referee's thread is at 1 stream while the bot thinks; alternated, ``BENCH_ROUNDS`` rounds
  (default 2) of ``BENCH_SECONDS`` (default 3) each.
- ``trio %``: the share of the floor's profiled time (cProfile, 8 seeded matches of
  `floor_instructions`) spent in trio's and outcome's own functions.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import time
from typing import Any

from bench import floor_instructions as fi
from bench.referee_path import measure_floor

IDLE_S = 0.0003


def _floor(idle: bool, seconds: float) -> float:
    plain = fi.Answered.wait
    if idle:
        async def wait(self: Any) -> Any:
            time.sleep(IDLE_S)  # the thread idle, as while a bot thinks
            return await plain(self)

        fi.Answered.wait = wait  # type: ignore[method-assign]
    try:
        return measure_floor(seconds)
    finally:
        fi.Answered.wait = plain  # type: ignore[method-assign]


def trio_share(matches: int = 8) -> float:
    """Percent of the floor's profiled time in trio's (and outcome's) own functions."""
    fi._play(1)
    profile = cProfile.Profile()
    profile.enable()
    fi._play(matches)
    profile.disable()
    stats: Any = pstats.Stats(profile).stats
    total = sum(entry[2] for entry in stats.values())
    ours = sum(entry[2] for key, entry in stats.items()
               if "/trio/" in key[0] or "outcome" in key[0])
    return 100 * ours / total


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "3"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "2"))
    for _ in range(rounds):
        for idle in (False, True):
            print(f"{'idle' if idle else 'hot':>4}: {_floor(idle, seconds):6.1f} CPU µs/decision")
    print(f"trio %: {trio_share():.0f} of the floor's profiled time")


if __name__ == "__main__":
    main()
