"""A bot (on the SDK) whose `act` raises on every call: the SDK answers the first legal action
for it, so it never times out nor answers illegally, but none of its answers is its own."""

from __future__ import annotations

from arena.rules import Action, SeatView
from arena.sdk import Bot, main


class Raising(Bot):
    """A bug on every decision."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        raise ZeroDivisionError("deliberate test bug in act()")


if __name__ == "__main__":
    main(Raising)
