"""Plain immutable data that leaves the engine: awards, views, events, summaries, results.

A `SeatView` holds exactly what one seat may know (RULES.md §4.8): its own cards, the cards
played, the calls and answers, public envido announcements, scores, whose turn it is, its
partners' cards during a Mineiro hand of ten, the gallo's own discard, and the signals it was
sent. Nothing in here ever holds another seat's unplayed cards, the gallo's discard (for anyone
but the gallo), the deck, or the seed.

Teams, sides and accounts (docs/RULINGS.md R4). A *side* is who plays with whom in one hand
(always two sides, 0 and 1). An *account* is a score: `scores`, `games_won`, `points`,
`Award.team`, `GameResult.winner_team` and `MatchResult.winner_team` index accounts, and
`team_of[seat]` is the seat's account. In every variant but argentine-gallo the two are the
same: side = account = team = seat % 2. In argentine-gallo the gallo plays alone as side 0 and
the other two players are side 1 (`side_of`, `gallo`); with the option gallo = "fixed" seat 0 is
the gallo all match and there are two accounts (0 the gallo, 1 the pair); with "rotating" the
dealer is the gallo and there are three accounts, one per seat (account = seat), and points the
pair wins are credited to both its players' accounts (one `Award` each). Fields about the play
of a hand (`Trick.winner_team`, `HandSummary.winner_team`, `EnvidoOutcome.team`,
`FlorOutcome.team`) name *sides*.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import FunctionType
from typing import Final

from arena.rules.actions import Action, ActionKind
from arena.rules.cards import Card
from arena.rules.signals import SeenSignal, Signal


def _compiled() -> bool:
    """Whether this module runs compiled by mypyc (`make compile`): its functions are then
    built-in functions, not Python ones."""
    return not isinstance(_compiled, FunctionType)


NATIVE: Final = _compiled()
"""True in the compiled build. The written-out `__init__` of the values built per decision
then assigns each field (`self.seat = seat`): mypyc compiles that to a store into the native
slot, ~20x cheaper than `object.__setattr__` through the slot wrapper, while the class stays
frozen for every other code (its `__setattr__` still refuses). From the sources such an
assignment would hit that `__setattr__`, so they take the `object.__setattr__` path, as
dataclass's generated `__init__` does (docs/ARCHITECTURE.md "A compiled core")."""


class AwardReason(enum.IntEnum):
    """Why points were scored. Numbers are stable (the wire uses them)."""

    HAND = 1  # won the hand's tricks: the truco part at its current value
    TRUCO_REJECTED = 2  # a truco-level call (or Mineiro request) was rejected / run from
    FOLD = 3  # every player of the other side folded
    ENVIDO = 4  # an accepted envido chain was won
    ENVIDO_REJECTED = 5  # an envido chain was rejected
    FLOR = 6  # flor: sung unopposed, or a flor duel (RULES.md §4.5)
    HAND_OF_TEN_DECLINED = 7  # Mineiro: the side at ten declined the hand
    IRON_HAND = 8  # Mineiro: won the iron hand, scoring what it needed to reach 12


@dataclass(frozen=True, slots=True)
class Award:
    """Points to an account (`team`, see the module docstring), with the reason."""

    team: int
    points: int
    reason: AwardReason

    def __init__(self, team: int, points: int, reason: AwardReason) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.team = team  # type: ignore[misc]
            self.points = points  # type: ignore[misc]
            self.reason = reason  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "team", team)
        _set(self, "points", points)
        _set(self, "reason", reason)

    def __str__(self) -> str:
        return f"team {self.team} +{self.points} ({self.reason.name.lower()})"


@dataclass(frozen=True, slots=True)
class Play:
    """A card played into a trick by a seat."""

    seat: int
    card: Card

    def __init__(self, seat: int, card: Card) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.seat = seat  # type: ignore[misc]
            self.card = card  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "seat", seat)
        _set(self, "card", card)


@dataclass(frozen=True, slots=True)
class Trick:
    """A trick: who led, the cards in order, and who won it (`winner` is None for a parda)."""

    leader: int
    plays: tuple[Play, ...]
    winner: int | None = None  # the seat that won it; None if parda or not finished
    winner_team: int | None = None  # the winner's side

    def __init__(
        self,
        leader: int,
        plays: tuple[Play, ...],
        winner: int | None = None,
        winner_team: int | None = None,
    ) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.leader = leader  # type: ignore[misc]
            self.plays = plays  # type: ignore[misc]
            self.winner = winner  # type: ignore[misc]
            self.winner_team = winner_team  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "leader", leader)
        _set(self, "plays", plays)
        _set(self, "winner", winner)
        _set(self, "winner_team", winner_team)

    @property
    def parda(self) -> bool:
        return self.winner is None


@dataclass(frozen=True, slots=True)
class Move:
    """One action taken by a seat, as every seat at the table saw it."""

    seat: int
    action: Action

    def __init__(self, seat: int, action: Action) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.seat = seat  # type: ignore[misc]
            self.action = action  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "seat", seat)
        _set(self, "action", action)


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call waiting for an answer: what was called, by whom, who must answer."""

    kind: ActionKind
    caller: int
    responder: int

    def __init__(self, kind: ActionKind, caller: int, responder: int) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.kind = kind  # type: ignore[misc]
            self.caller = caller  # type: ignore[misc]
            self.responder = responder  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "kind", kind)
        _set(self, "caller", caller)
        _set(self, "responder", responder)


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
    team: int  # the side that scored
    points: int

    def __init__(
        self,
        accepted: bool,
        chain: tuple[ActionKind, ...],
        announcements: tuple[tuple[int, int | None], ...],
        winner: int | None,
        team: int,
        points: int,
    ) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.accepted = accepted  # type: ignore[misc]
            self.chain = chain  # type: ignore[misc]
            self.announcements = announcements  # type: ignore[misc]
            self.winner = winner  # type: ignore[misc]
            self.team = team  # type: ignore[misc]
            self.points = points  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "accepted", accepted)
        _set(self, "chain", chain)
        _set(self, "announcements", announcements)
        _set(self, "winner", winner)
        _set(self, "team", team)
        _set(self, "points", points)


@dataclass(frozen=True, slots=True)
class FlorOutcome:
    """A settled flor payout (RULES.md §4.5).

    `chain` is what was sung: `(FLOR,)` for a flor that no opponent could answer (3 points),
    else the duel: FLOR, then CONTRAFLOR / CONTRAFLOR_AL_RESTO raises, then the closing
    CON_FLOR_QUIERO or CON_FLOR_ME_ACHICO. `singer` sang the FLOR that started it. `winner` is
    the seat whose flor was best when flors were compared (a quiero), else None. `team` is the
    side that scored `points`.
    """

    chain: tuple[ActionKind, ...]
    singer: int
    winner: int | None
    team: int
    points: int

    @property
    def payout(self) -> str:
        """The row of the payout table (RULES.md §4.5) that paid it: "unopposed" (3 per
        flor), "flor_quiero" (4), "flor_achico" (3), "contraflor_quiero" (6),
        "contraflor_achico" (4), "al_resto_quiero" (what the leader needs), "al_resto_achico"
        (4) or "al_resto_achico_after_contraflor" (6)."""
        if len(self.chain) < 2:
            return "unopposed"
        raised, answer = self.chain[-2], self.chain[-1]
        taken = "quiero" if answer is ActionKind.CON_FLOR_QUIERO else "achico"
        if raised is ActionKind.FLOR:
            return f"flor_{taken}"
        if raised is ActionKind.CONTRAFLOR:
            return f"contraflor_{taken}"
        if taken == "achico" and ActionKind.CONTRAFLOR in self.chain:
            return "al_resto_achico_after_contraflor"
        return f"al_resto_{taken}"


@dataclass(frozen=True, slots=True)
class Duel:
    """One duel of a pico a pico hand (RULES.md §4.7): `seats` is (the duel's mano, the other),
    `index` counts the duels in their order of play from 0, `of` is how many there are."""

    index: int
    of: int
    seats: tuple[int, int]

    def __init__(self, index: int, of: int, seats: tuple[int, int]) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.index = index  # type: ignore[misc]
            self.of = of  # type: ignore[misc]
            self.seats = seats  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "index", index)
        _set(self, "of", of)
        _set(self, "seats", seats)

    @property
    def mano(self) -> int:
        return self.seats[0]


@dataclass(frozen=True, slots=True)
class DuelSummary:
    """A finished duel of a pico a pico hand: its tricks, the side that won them (None when not
    played out), what it scored, and how it ended ("tricks", "rejected", "fold", "target")."""

    duel: Duel
    tricks: tuple[Trick, ...]
    winner_team: int | None
    awards: tuple[Award, ...]
    ended_by: str

    def __init__(
        self,
        duel: Duel,
        tricks: tuple[Trick, ...],
        winner_team: int | None,
        awards: tuple[Award, ...],
        ended_by: str,
    ) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.duel = duel  # type: ignore[misc]
            self.tricks = tricks  # type: ignore[misc]
            self.winner_team = winner_team  # type: ignore[misc]
            self.awards = awards  # type: ignore[misc]
            self.ended_by = ended_by  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "duel", duel)
        _set(self, "tricks", tricks)
        _set(self, "winner_team", winner_team)
        _set(self, "awards", awards)
        _set(self, "ended_by", ended_by)


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat may know right now.

    `team`, `team_of`, `scores` and `games_won` are about accounts, `side` and `side_of` about
    who plays with whom this hand (module docstring). In a pico a pico hand `duel` names the duel
    being played, and `tricks`, `current_trick`, `pending`, `envido`, `flor`, `folded` and
    `hand_value` describe that duel, while `moves`, `awards` and `signals` cover the whole hand
    and `duels` holds the duels already finished.
    """

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
    # Added with flor, gallo, 3v3/4v4 and signals (defaults keep older constructors working).
    side: int = -1  # this seat's side this hand (-1: not given; equals `team` but for gallo)
    side_of: tuple[int, ...] = ()  # every seat's side this hand
    gallo: int | None = None  # argentine-gallo: the seat playing alone this hand
    discard: Card | None = None  # the gallo's own discard (only in the gallo's view)
    flor: tuple[FlorOutcome, ...] = ()  # flor payouts settled this hand (or duel)
    duel: Duel | None = None  # pico a pico: the duel being played
    duels: tuple[DuelSummary, ...] = ()  # pico a pico: the duels of this hand already played
    signals: tuple[SeenSignal, ...] = ()  # signals this seat sent or received this hand

    def __init__(
        self,
        variant: str,
        seat: int,
        team: int,
        team_of: tuple[int, ...],
        game_number: int,
        hand_number: int,
        dealer: int,
        mano: int,
        scores: tuple[int, ...],
        games_won: tuple[int, ...],
        target: int,
        hand: tuple[Card, ...],
        hand_size: int,
        partner_cards: tuple[tuple[int, tuple[Card, ...]], ...],
        tricks: tuple[Trick, ...],
        current_trick: tuple[Play, ...],
        moves: tuple[Move, ...],
        hand_value: int,
        pending: PendingCall | None,
        envido: EnvidoOutcome | None,
        folded: tuple[int, ...],
        hand_of_ten: int | None,
        iron_hand: bool,
        awards: tuple[Award, ...],
        to_act: int | None,
        legal_actions: tuple[Action, ...],
        side: int = -1,
        side_of: tuple[int, ...] = (),
        gallo: int | None = None,
        discard: Card | None = None,
        flor: tuple[FlorOutcome, ...] = (),
        duel: Duel | None = None,
        duels: tuple[DuelSummary, ...] = (),
        signals: tuple[SeenSignal, ...] = (),
    ) -> None:
        # Written out instead of dataclass's generated one (same fields, same defaults): the
        # referee builds a view for every decision, and this one is compiled by mypyc with
        # the engine, where the generated one would stay interpreted (docs/ARCHITECTURE.md
        # "A compiled core"). tests/test_rules_build.py checks it against the fields.
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.variant = variant  # type: ignore[misc]
            self.seat = seat  # type: ignore[misc]
            self.team = team  # type: ignore[misc]
            self.team_of = team_of  # type: ignore[misc]
            self.game_number = game_number  # type: ignore[misc]
            self.hand_number = hand_number  # type: ignore[misc]
            self.dealer = dealer  # type: ignore[misc]
            self.mano = mano  # type: ignore[misc]
            self.scores = scores  # type: ignore[misc]
            self.games_won = games_won  # type: ignore[misc]
            self.target = target  # type: ignore[misc]
            self.hand = hand  # type: ignore[misc]
            self.hand_size = hand_size  # type: ignore[misc]
            self.partner_cards = partner_cards  # type: ignore[misc]
            self.tricks = tricks  # type: ignore[misc]
            self.current_trick = current_trick  # type: ignore[misc]
            self.moves = moves  # type: ignore[misc]
            self.hand_value = hand_value  # type: ignore[misc]
            self.pending = pending  # type: ignore[misc]
            self.envido = envido  # type: ignore[misc]
            self.folded = folded  # type: ignore[misc]
            self.hand_of_ten = hand_of_ten  # type: ignore[misc]
            self.iron_hand = iron_hand  # type: ignore[misc]
            self.awards = awards  # type: ignore[misc]
            self.to_act = to_act  # type: ignore[misc]
            self.legal_actions = legal_actions  # type: ignore[misc]
            self.side = side  # type: ignore[misc]
            self.side_of = side_of  # type: ignore[misc]
            self.gallo = gallo  # type: ignore[misc]
            self.discard = discard  # type: ignore[misc]
            self.flor = flor  # type: ignore[misc]
            self.duel = duel  # type: ignore[misc]
            self.duels = duels  # type: ignore[misc]
            self.signals = signals  # type: ignore[misc]
            return
        _set = object.__setattr__
        _set(self, "variant", variant)
        _set(self, "seat", seat)
        _set(self, "team", team)
        _set(self, "team_of", team_of)
        _set(self, "game_number", game_number)
        _set(self, "hand_number", hand_number)
        _set(self, "dealer", dealer)
        _set(self, "mano", mano)
        _set(self, "scores", scores)
        _set(self, "games_won", games_won)
        _set(self, "target", target)
        _set(self, "hand", hand)
        _set(self, "hand_size", hand_size)
        _set(self, "partner_cards", partner_cards)
        _set(self, "tricks", tricks)
        _set(self, "current_trick", current_trick)
        _set(self, "moves", moves)
        _set(self, "hand_value", hand_value)
        _set(self, "pending", pending)
        _set(self, "envido", envido)
        _set(self, "folded", folded)
        _set(self, "hand_of_ten", hand_of_ten)
        _set(self, "iron_hand", iron_hand)
        _set(self, "awards", awards)
        _set(self, "to_act", to_act)
        _set(self, "legal_actions", legal_actions)
        _set(self, "side", side)
        _set(self, "side_of", side_of)
        _set(self, "gallo", gallo)
        _set(self, "discard", discard)
        _set(self, "flor", flor)
        _set(self, "duel", duel)
        _set(self, "duels", duels)
        _set(self, "signals", signals)


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
    scores: tuple[int, ...]  # after the hand (per account)
    ended_by: str  # "tricks", "rejected", "fold", "declined", "target", "duels" (pico a pico)
    flor_revealed: tuple[tuple[int, tuple[Card, ...]], ...] = ()  # flors that scored (§4.5)
    duels: tuple[DuelSummary, ...] = ()  # pico a pico: every duel played, in order
    gallo: int | None = None  # argentine-gallo: the seat that played alone

    def __init__(
        self,
        game_number: int,
        hand_number: int,
        dealer: int,
        mano: int,
        tricks: tuple[Trick, ...],
        winner_team: int | None,
        awards: tuple[Award, ...],
        revealed: tuple[tuple[int, tuple[Card, ...]], ...],
        scores: tuple[int, ...],
        ended_by: str,
        flor_revealed: tuple[tuple[int, tuple[Card, ...]], ...] = (),
        duels: tuple[DuelSummary, ...] = (),
        gallo: int | None = None,
    ) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.game_number = game_number  # type: ignore[misc]
            self.hand_number = hand_number  # type: ignore[misc]
            self.dealer = dealer  # type: ignore[misc]
            self.mano = mano  # type: ignore[misc]
            self.tricks = tricks  # type: ignore[misc]
            self.winner_team = winner_team  # type: ignore[misc]
            self.awards = awards  # type: ignore[misc]
            self.revealed = revealed  # type: ignore[misc]
            self.scores = scores  # type: ignore[misc]
            self.ended_by = ended_by  # type: ignore[misc]
            self.flor_revealed = flor_revealed  # type: ignore[misc]
            self.duels = duels  # type: ignore[misc]
            self.gallo = gallo  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "game_number", game_number)
        _set(self, "hand_number", hand_number)
        _set(self, "dealer", dealer)
        _set(self, "mano", mano)
        _set(self, "tricks", tricks)
        _set(self, "winner_team", winner_team)
        _set(self, "awards", awards)
        _set(self, "revealed", revealed)
        _set(self, "scores", scores)
        _set(self, "ended_by", ended_by)
        _set(self, "flor_revealed", flor_revealed)
        _set(self, "duels", duels)
        _set(self, "gallo", gallo)


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game (a chico, or a Mineiro game to 12)."""

    game_number: int
    winner_team: int  # an account
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match: the games and the winner."""

    winner_team: int  # an account (a seat in rotating gallo)
    games: tuple[GameResult, ...]
    games_won: tuple[int, ...]
    points: tuple[int, ...]  # all points scored per account, over every game


# Events: what happened, each with the seats allowed to see it.


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """A seat acted. `card` is the card revealed by a face-down play. The gallo's DISCARD
    (with its card) goes to the gallo alone."""

    move: Move
    card: Card | None = None

    def __init__(self, move: Move, card: Card | None = None) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.move = move  # type: ignore[misc]
            self.card = card  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "move", move)
        _set(self, "card", card)


@dataclass(frozen=True, slots=True)
class TrickEvent:
    """A trick finished (index counts from 0)."""

    index: int
    trick: Trick

    def __init__(self, index: int, trick: Trick) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.index = index  # type: ignore[misc]
            self.trick = trick  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "index", index)
        _set(self, "trick", trick)


@dataclass(frozen=True, slots=True)
class EnvidoEvent:
    """An envido was settled."""

    outcome: EnvidoOutcome

    def __init__(self, outcome: EnvidoOutcome) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.outcome = outcome  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "outcome", outcome)


@dataclass(frozen=True, slots=True)
class FlorEvent:
    """A flor payout was settled."""

    outcome: FlorOutcome

    def __init__(self, outcome: FlorOutcome) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.outcome = outcome  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "outcome", outcome)


@dataclass(frozen=True, slots=True)
class DuelEndEvent:
    """A duel of a pico a pico hand ended (the hand goes on with the next duel, if any)."""

    summary: DuelSummary

    def __init__(self, summary: DuelSummary) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.summary = summary  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "summary", summary)


@dataclass(frozen=True, slots=True)
class SignalEvent:
    """A signal reached the event's audience (the sender, its partners, leaked opponents).
    `move` indexes the hand's moves: the action the signal came with."""

    seat: int
    move: int
    signal: Signal


@dataclass(frozen=True, slots=True)
class HandEndEvent:
    """A hand ended."""

    summary: HandSummary

    def __init__(self, summary: HandSummary) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.summary = summary  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "summary", summary)


@dataclass(frozen=True, slots=True)
class GameEndEvent:
    """A game ended (a chico, or a Mineiro game); the match may go on."""

    result: GameResult


@dataclass(frozen=True, slots=True)
class MatchEndEvent:
    """The match ended."""

    result: MatchResult


EventBody = (
    MoveEvent
    | TrickEvent
    | EnvidoEvent
    | FlorEvent
    | DuelEndEvent
    | SignalEvent
    | HandEndEvent
    | GameEndEvent
    | MatchEndEvent
)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, and the seats that may see it."""

    audience: frozenset[int]
    body: EventBody

    def __init__(self, audience: frozenset[int], body: EventBody) -> None:
        if NATIVE:  # compiled: straight into the native slots (see NATIVE)
            self.audience = audience  # type: ignore[misc]
            self.body = body  # type: ignore[misc]
            return
        _set = object.__setattr__  # see SeatView.__init__
        _set(self, "audience", audience)
        _set(self, "body", body)
