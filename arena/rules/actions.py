"""The closed set of actions a seat can take (RULES.md §4.2-§4.5, §5).

`ActionKind` numbers are stable: the wire protocol uses the same numbers. Legal actions are
always listed in `ActionKind` order, and card plays in the order of the cards in the hand.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from arena.rules.cards import Card


class ActionKind(enum.IntEnum):
    """Every kind of action. Some exist only in some variants; numbers never change."""

    PLAY = 1  # play a card (Action.card)
    PLAY_FACE_DOWN = 2  # blind iron hand: play the card at Action.slot without seeing it
    DISCARD = 3  # gallo: discard a card face down before the hand (issue: complete Argentine)
    FLOR = 10  # sing flor (Argentine with flor)
    ENVIDO = 11
    REAL_ENVIDO = 12
    FALTA_ENVIDO = 13
    TRUCO = 20  # Argentine truco, or Mineiro's first request (worth 4)
    RETRUCO = 21
    VALE_CUATRO = 22
    SIX = 23  # Mineiro seis
    TEN = 24  # Mineiro dez
    TWELVE = 25  # Mineiro doze
    QUIERO = 30  # Argentine: accept a truco-level or envido-level call
    NO_QUIERO = 31  # Argentine: reject it
    CON_FLOR_QUIERO = 32
    CON_FLOR_ME_ACHICO = 33
    CONTRAFLOR = 34
    CONTRAFLOR_AL_RESTO = 35
    ACCEPT = 40  # Mineiro: accept a request
    RUN = 41  # Mineiro: run from a request (corro)
    PLAY_HAND = 42  # Mineiro hand of ten: play it (worth 4)
    DECLINE_HAND = 43  # Mineiro hand of ten: decline it (the other side scores 2)
    FOLD = 50  # Argentine: me voy al mazo


ENVIDO_CALLS: Final = frozenset(
    {ActionKind.ENVIDO, ActionKind.REAL_ENVIDO, ActionKind.FALTA_ENVIDO}
)
TRUCO_CALLS: Final = frozenset(
    {
        ActionKind.TRUCO,
        ActionKind.RETRUCO,
        ActionKind.VALE_CUATRO,
        ActionKind.SIX,
        ActionKind.TEN,
        ActionKind.TWELVE,
    }
)


@dataclass(frozen=True, slots=True)
class Action:
    """One action. `card` is set for PLAY and DISCARD, `slot` for PLAY_FACE_DOWN."""

    kind: ActionKind
    card: Card | None = None
    slot: int | None = None

    def __str__(self) -> str:
        name = _KIND_TEXT[self.kind]
        if self.card is not None:
            return f"{name} {self.card}"
        if self.slot is not None:
            return f"{name} #{self.slot}"
        return name


_KIND_TEXT: Final = {kind: kind.name.lower().replace("_", " ") for kind in ActionKind}
"""How `Action.__str__` names each kind ("real envido")."""


def play(card: Card) -> Action:
    """Shorthand for playing `card`."""
    return Action(ActionKind.PLAY, card=card)


def call(kind: ActionKind) -> Action:
    """Shorthand for an action that carries nothing but its kind."""
    return Action(kind)
