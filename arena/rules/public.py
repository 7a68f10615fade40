"""What a spectator may see: the table as every seat at it knows it (RULES.md §4.8).

`public_view(match)` is a `SeatView` that holds only what is public — the cards played, the
calls and answers, envido announcements, flor payouts, scores — and nothing any single seat
holds alone: no hand, no partner's cards, no gallo's discard (its DISCARD move is listed
without the card, as the other seats see it), no sign, no legal actions. Its `seat`, `team`
and `side` are -1: it is nobody's view. `held(match)` says how many cards each seat holds.
The web's live page and the gRPC `Spectator` service both show exactly this.
"""

from __future__ import annotations

import dataclasses

from arena.rules.state import Match
from arena.rules.views import SeatView

NOBODY = -1  # `seat`, `team` and `side` of a spectator's view


def public_view(match: Match) -> SeatView:
    """The table as a spectator may see it now."""
    gallo = match.view(0).gallo
    witness = 0 if gallo != 0 else 1  # a seat that is not the gallo sees the public moves
    view = match.view(witness)
    return dataclasses.replace(
        view, seat=NOBODY, team=NOBODY, side=NOBODY, hand=(), hand_size=0, partner_cards=(),
        discard=None, legal_actions=(), signals=(),
    )


def held(match: Match) -> tuple[int, ...]:
    """How many unplayed cards each seat holds (public: everyone sees the backs)."""
    return tuple(match.view(seat).hand_size for seat in range(match.num_seats))
