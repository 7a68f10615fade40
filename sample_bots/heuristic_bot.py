"""A bot that plays sensible Truco by rules of thumb (strategy in `heuristic.py`).

Run it like any Python bot: `python sample_bots/heuristic_bot.py --server HOST:PORT --token T`.
Deterministic: the same view always gets the same action. In team games it tells its partners
what it holds with the classic signs (señas), once a hand, with its first action.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from arena.rules import Action, SeatView, envido_value
from arena.rules.cards import Deck, Suit
from arena.sdk import Bot, Signal, SignalKind, main

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # imported as a module (tests), not run as a script
    sys.path.insert(0, _HERE)
from heuristic import choose, fallback  # noqa: E402 (needs the path above)

# The classic signs for the top cards of the Spanish deck, best first.
_SIGNS = (
    ((1, Suit.SWORDS), SignalKind.ANCHO_DE_ESPADA),
    ((1, Suit.CLUBS), SignalKind.ANCHO_DE_BASTO),
    ((7, Suit.SWORDS), SignalKind.SIETE_DE_ESPADA),
    ((7, Suit.COINS), SignalKind.SIETE_DE_ORO),
)


def sign_for(view: SeatView) -> Signal | None:
    """The sign to show partners: only in a team game (someone else on the seat's side), only
    with the seat's first action of the hand, only in the Spanish deck."""
    side_of = view.side_of or view.team_of
    side = view.side if view.side >= 0 else view.team
    partners = [s for s, x in enumerate(side_of) if x == side and s != view.seat]
    if not partners or any(m.seat == view.seat for m in view.moves) or not view.hand:
        return None
    if view.hand[0].deck is not Deck.SPANISH:
        return None
    held = {(c.rank, c.suit) for c in view.hand}
    for card, kind in _SIGNS:
        if card in held:
            return Signal(kind)
    if any(c.rank == 3 for c in view.hand):
        return Signal(SignalKind.TRES)
    envido = envido_value(list(view.hand))
    if envido >= 28:
        return Signal(SignalKind.ENVIDO, value=envido)
    return Signal(SignalKind.NADA)


class HeuristicBot(Bot):
    """Envido by value, truco by estimated chance to win the tricks, cheap card play."""

    signals = True  # the match may have signals "off": then the bot keeps quiet

    def on_match_start(self, info: object) -> None:
        options = getattr(info, "options", None)
        self.signals = getattr(options, "signals", "team") != "off"

    def act(
        self, view: SeatView, legal: tuple[Action, ...]
    ) -> Action | tuple[Action, Signal | None]:
        try:
            action = choose(view, legal)
        except Exception:  # a strategy bug must not cost the match: answer sensibly instead
            traceback.print_exc(file=sys.stderr)
            return fallback(legal)
        sign = sign_for(view) if self.signals else None
        return (action, sign) if sign is not None else action



if __name__ == "__main__":
    main(HeuristicBot)
