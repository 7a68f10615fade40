"""Plain immutable data that leaves the engine: awards, views, events, summaries, results.

A `SeatView` holds exactly what one seat may know (RULES.md §4.8): its own cards, the cards
played, the calls and answers, public envido announcements, scores, whose turn it is, and its
partners' cards during a Mineiro hand of ten. Nothing in here ever holds another seat's unplayed
cards, the deck, or the seed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arena.rules.actions import Action, ActionKind
from arena.rules.cards import Card


class AwardReason(enum.IntEnum):
    """Why points were scored. Numbers are stable (the wire uses them)."""

    HAND = 1  # won the hand's tricks: the truco part at its current value
    TRUCO_REJECTED = 2  # a truco-level call (or Mineiro request) was rejected / run from
    FOLD = 3  # every player of the other side folded
    ENVIDO = 4  # an accepted envido chain was won
    ENVIDO_REJECTED = 5  # an envido chain was rejected
    FLOR = 6  # flor (later issue)
    HAND_OF_TEN_DECLINED = 7  # Mineiro: the side at ten declined the hand
    IRON_HAND = 8  # Mineiro: won the iron hand, scoring what it needed to reach 12


@dataclass(frozen=True, slots=True)
class Award:
    """Points to a team, with the reason."""

    team: int
    points: int
    reason: AwardReason

    def __str__(self) -> str:
        return f"team {self.team} +{self.points} ({self.reason.name.lower()})"


@dataclass(frozen=True, slots=True)
class Play:
    """A card played into a trick by a seat."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Trick:
    """A trick: who led, the cards in order, and who won it (`winner` is None for a parda)."""

    leader: int
    plays: tuple[Play, ...]
    winner: int | None = None  # the seat that won it; None if parda or not finished
    winner_team: int | None = None

    @property
    def parda(self) -> bool:
        return self.winner is None


@dataclass(frozen=True, slots=True)
class Move:
    """One action taken by a seat, as every seat at the table saw it."""

    seat: int
    action: Action


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call waiting for an answer: what was called, by whom, who must answer."""

    kind: ActionKind
    caller: int
    responder: int


@dataclass(frozen=True, slots=True)
class EnvidoOutcome:
    """A settled envido: the public announcements (RULES.md §4.4) and who scored what.

    `announcements` pairs each seat, in turn order from mano, with the value it announced or
    None for *son buenas*. For a rejected envido nothing is announced and `winner` is None.
    """

    accepted: bool
    chain: tuple[ActionKind, ...]
    announcements: tuple[tuple[int, int | None], ...]
    winner: int | None
    team: int
    points: int


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat may know right now."""

    variant: str
    seat: int
    team: int
    team_of: tuple[int, ...]
    game_number: int
    hand_number: int
    dealer: int
    mano: int
    scores: tuple[int, ...]
    games_won: tuple[int, ...]
    target: int
    hand: tuple[Card, ...]  # own unplayed cards (empty in a blind iron hand)
    hand_size: int  # how many unplayed cards the seat holds
    partner_cards: tuple[tuple[int, tuple[Card, ...]], ...]  # Mineiro hand of ten only
    tricks: tuple[Trick, ...]  # finished tricks of this hand
    current_trick: tuple[Play, ...]
    moves: tuple[Move, ...]  # every action of this hand, in order
    hand_value: int  # what the hand is worth now (accepted truco level)
    pending: PendingCall | None
    envido: EnvidoOutcome | None
    folded: tuple[int, ...]
    hand_of_ten: int | None  # Mineiro: the team at ten this hand
    iron_hand: bool
    awards: tuple[Award, ...]  # points already scored in this hand
    to_act: int | None
    legal_actions: tuple[Action, ...]  # empty unless this seat is to act


@dataclass(frozen=True, slots=True)
class HandSummary:
    """The end of a hand as every player is told it (RULES.md §4.8)."""

    game_number: int
    hand_number: int
    dealer: int
    mano: int
    tricks: tuple[Trick, ...]
    winner_team: int | None  # who won the tricks (None: not played out, or nobody)
    awards: tuple[Award, ...]
    revealed: tuple[tuple[int, tuple[Card, ...]], ...]  # the envido winner's cards
    scores: tuple[int, ...]  # after the hand
    ended_by: str  # "tricks", "rejected", "fold", "declined", "target"


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game (a chico, or a Mineiro game to 12)."""

    game_number: int
    winner_team: int
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match: the games and the winner."""

    winner_team: int
    games: tuple[GameResult, ...]
    games_won: tuple[int, ...]
    points: tuple[int, ...]  # all points scored per team, over every game


# Events: what happened, each with the seats allowed to see it.


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """A seat acted. `card` is the card revealed by a face-down play."""

    move: Move
    card: Card | None = None


@dataclass(frozen=True, slots=True)
class TrickEvent:
    """A trick finished (index counts from 0)."""

    index: int
    trick: Trick


@dataclass(frozen=True, slots=True)
class EnvidoEvent:
    """An envido was settled."""

    outcome: EnvidoOutcome


@dataclass(frozen=True, slots=True)
class HandEndEvent:
    """A hand ended."""

    summary: HandSummary


@dataclass(frozen=True, slots=True)
class GameEndEvent:
    """A game ended (a chico, or a Mineiro game); the match may go on."""

    result: GameResult


@dataclass(frozen=True, slots=True)
class MatchEndEvent:
    """The match ended."""

    result: MatchResult


EventBody = MoveEvent | TrickEvent | EnvidoEvent | HandEndEvent | GameEndEvent | MatchEndEvent


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, and the seats that may see it."""

    audience: frozenset[int]
    body: EventBody
