"""Shared helpers for the rules scenario tests (no tests here).

A scenario stacks the deck with `stacked(...)` and scripts every action with `run(match, ...)`,
one step per action, written `"<seat> <action>"`: the seat that must be to act, then a card in
the deck's notation (`"0 1e"`, `"1 4c"`), an action kind name (`"1 quiero"`, `"0 real_envido"`),
a face-down slot (`"0 #2"`) or the gallo's discard (`"1 discard:4o"`). Every step goes through
`match.apply`, so a step that is not legal fails the test with `IllegalActionError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.rules import (
    Action,
    ActionKind,
    Award,
    AwardReason,
    Card,
    Deck,
    Match,
    call,
    find_variant,
    parse_cards,
    play,
)


def cards(text: str, deck: Deck = Deck.SPANISH) -> tuple[Card, ...]:
    """Cards in notation, e.g. `cards("1e 7o 12b")`."""
    return parse_cards(text, deck)


def card(text: str, deck: Deck = Deck.SPANISH) -> Card:
    """One card in notation."""
    (only,) = parse_cards(text, deck)
    return only


def stacked(
    variant: str,
    *hands: str,
    dealer: int,
    scores: tuple[int, ...] | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
) -> Match:
    """A match whose first hand deals `hands` (seat 0 first) with `dealer` dealing."""
    deck = find_variant(variant).deck
    deal = tuple(cards(hand, deck) for hand in hands)
    return Match(variant, options, seed, dealer=dealer, scores=scores, deals={(0, 0): deal})


def action(match: Match, text: str) -> Action:
    """The action written `text` (a card, `#slot`, or an ActionKind name) for `match`."""
    if text.startswith("#"):
        return Action(ActionKind.PLAY_FACE_DOWN, slot=int(text[1:]))
    if text.startswith("discard:"):
        return Action(ActionKind.DISCARD, card=card(text[len("discard:") :], match.variant.deck))
    name = text.upper()
    if name in ActionKind.__members__:
        return call(ActionKind[name])
    return play(card(text, match.variant.deck))


def run(match: Match, *steps: str) -> None:
    """Apply each `"<seat> <action>"` step, checking first that `seat` is to act."""
    for step in steps:
        seat_text, action_text = step.split()
        assert match.to_act == int(seat_text), (
            f"step {step!r}: seat {match.to_act} is to act, not seat {seat_text}"
        )
        match.apply(action(match, action_text))


def kinds(match: Match) -> list[ActionKind]:
    """The kinds of the legal actions of the seat to act, in order."""
    return [a.kind for a in match.legal_actions()]


def last_awards(match: Match) -> tuple[Award, ...]:
    """The awards of the last finished hand."""
    return match.record().hands[-1].awards


def award(team: int, points: int, reason: AwardReason) -> Award:
    """Shorthand for an expected award."""
    return Award(team, points, reason)
