"""A deterministic bot (on the SDK): always the first legal action."""

from __future__ import annotations

from arena.rules import Action, SeatView
from arena.sdk import Bot, main


class FirstLegal(Bot):
    """Index 0, every time."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        return 0


if __name__ == "__main__":
    main(FirstLegal)
