"""A bot (on the SDK) that calls envido, accepts every call, and once an envido has been
settled in the hand answers with an out-of-range action_index: with max_strikes = 1 its match
ends by a fault in the middle of a hand that has already scored (tests/test_replay.py)."""

from __future__ import annotations

from arena.rules import Action, ActionKind, SeatView
from arena.sdk import Bot, main


class EnvidoThenIllegal(Bot):
    def act(self, view: SeatView, legal: tuple[Action, ...]) -> int:
        if view.envido is not None:
            return len(legal) + 7  # the envido is in the books: now a fault
        kinds = [action.kind for action in legal]
        for wanted in (ActionKind.QUIERO, ActionKind.ENVIDO):
            if wanted in kinds:
                return kinds.index(wanted)
        return 0


if __name__ == "__main__":
    main(EnvidoThenIllegal)
