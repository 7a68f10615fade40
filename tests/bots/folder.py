"""The weakest bot (on the SDK): folds (me voy al mazo) whenever it may, refuses every call,
declines the hand of ten, and otherwise plays its first legal action."""

from __future__ import annotations

from arena.rules import Action, ActionKind, SeatView
from arena.sdk import Bot, main

_GIVE_UP = (ActionKind.FOLD, ActionKind.NO_QUIERO, ActionKind.RUN, ActionKind.DECLINE_HAND)


def give_up(legal: tuple[Action, ...]) -> int:
    """The index of the first giving-up action in `legal`, else 0."""
    for kind in _GIVE_UP:
        for index, action in enumerate(legal):
            if action.kind is kind:
                return index
    return 0


class Folder(Bot):
    """Gives up every hand it can."""

    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        return give_up(legal)


if __name__ == "__main__":
    main(Folder)
