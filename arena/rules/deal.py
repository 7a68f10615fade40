"""Dealing from the match seed (RULES.md §1, §6).

`deal_cards(variant, seed, game, hand)` is a pure function: the same arguments always give the
same cards in the same seats, so a match replays exactly and a deal can be replayed with the
sides swapped (duplicate play: swap which bot sits where, keep the seed).
"""

from __future__ import annotations

from arena.rules.cards import Card, full_deck
from arena.rules.seeding import SeededStream
from arena.rules.variants import Variant

Deal = tuple[tuple[Card, ...], ...]


def deal_cards(
    variant: Variant, seed: int, game: int, hand: int, gallo: int | None = None
) -> Deal:
    """Three cards per seat, seat 0 first, from a shuffle labelled (seed, game, hand); the
    `gallo` seat, if any (argentine-gallo, RULES.md §4.7), gets four. Seats take consecutive
    cards of the shuffle in seat order."""
    deck = SeededStream("deal", seed, game, hand).shuffle(full_deck(variant.deck))
    if gallo is None:
        per_seat = 3
        return tuple(
            tuple(deck[seat * per_seat : (seat + 1) * per_seat])
            for seat in range(variant.num_seats)
        )
    out: list[tuple[Card, ...]] = []
    start = 0
    for seat in range(variant.num_seats):
        size = 4 if seat == gallo else 3
        out.append(tuple(deck[start : start + size]))
        start += size
    return tuple(out)


def first_dealer(variant: Variant, seed: int, game: int) -> int:
    """The dealer of a game's first hand, chosen by the seed (RULES.md §1)."""
    return SeededStream("dealer", seed, game).below(variant.num_seats)
