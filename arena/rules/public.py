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


def witness_view(match: Match) -> SeatView:
    """The view of a seat that sees every public move: any seat but the gallo (whose own
    moves list its discard's card). Private to that seat: strip it with `public_view`."""
    view = match.view(0)
    return match.view(1) if view.gallo == 0 else view


def public_view(match: Match, witness: SeatView | None = None) -> SeatView:
    """The table as a spectator may see it now (from `witness`, the `witness_view` of this
    moment, when the caller has it already)."""
    view = witness if witness is not None else witness_view(match)
    return dataclasses.replace(
        view, seat=NOBODY, team=NOBODY, side=NOBODY, hand=(), hand_size=0, partner_cards=(),
        discard=None, legal_actions=(), signals=(),
    )


def held(match: Match) -> tuple[int, ...]:
    """How many unplayed cards each seat holds (public: everyone sees the backs)."""
    return tuple(match.view(seat).hand_size for seat in range(match.num_seats))
