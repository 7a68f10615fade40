"""A bot (on the SDK) that answers every decision with an out-of-range action_index."""

from __future__ import annotations

from arena.rules import Action, SeatView
from arena.sdk import Bot, main


class Illegal(Bot):
    """Always one past the end of the legal actions, and then some."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        return len(legal) + 7


if __name__ == "__main__":
    main(Illegal)
