"""A bot that plays a uniformly random legal action (seeded with --seed for repeatability)."""

from __future__ import annotations

import os
import random

from arena.rules import Action, SeatView
from arena.sdk import Bot, main

_rng = random.Random(os.environ.get("ARENA_BOT_SEED"))


class RandomBot(Bot):
    """Every legal action is equally likely."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        return _rng.randrange(len(legal))


if __name__ == "__main__":
    main(RandomBot)
