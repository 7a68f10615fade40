"""A bot that plays sensible Truco by rules of thumb (strategy in `heuristic.py`).

Run it like any Python bot: `python sample_bots/heuristic_bot.py --server HOST:PORT --token T`.
Deterministic: the same view always gets the same action.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from arena.rules import Action, SeatView
from arena.sdk import Bot, main

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # imported as a module (tests), not run as a script
    sys.path.insert(0, _HERE)
from heuristic import choose, fallback  # noqa: E402 (needs the path above)


class HeuristicBot(Bot):
    """Envido by value, truco by estimated chance to win the tricks, cheap card play."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> Action:
        try:
            return choose(view, legal)
        except Exception:  # a strategy bug must not cost the match: answer sensibly instead
            traceback.print_exc(file=sys.stderr)
            return fallback(legal)


if __name__ == "__main__":
    main(HeuristicBot)
