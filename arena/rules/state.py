"""The match state machine: deal, calls, tricks, scoring (RULES.md §1-§5).

A `Match` is a whole match (one or more games) of one variant. It is driven by two calls:
`legal_actions()` for the seat in `to_act`, and `apply(action, signal=None)`, which advances the
game and returns the events it caused (each with the seats allowed to see it), or raises
`IllegalActionError` (`IllegalSignalError` for a signal the match refuses). `view(seat)` is what
one seat may know. The engine never waits, never logs and never draws randomness of its own:
deals and leaked signals come from the seed it is given.

Turn model (RULES.md §4.2): `turn` is the seat whose card is next (the actor). A call hands the
decision to the answering seat (`pending.responder`); once settled, the actor acts again.

Seats play in *sides* (who plays with whom this hand) and score into *accounts* (`team_of`,
`scores`); see `arena.rules.views` and docs/RULINGS.md R4. A pico a pico hand (argentine-3v3,
argentine-4v4) is one deal played as successive 1v1 duels: the hand's play state (tricks, calls,
envido, flor, folds) is reset for each duel, while its moves, awards and signals run on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from arena.errors import IllegalActionError
from arena.rules.actions import ENVIDO_CALLS, TRUCO_CALLS, Action, ActionKind
from arena.rules.actions import ActionKind as K  # imported, not assigned: see below
from arena.rules.cards import (
    Card,
    Deck,
    envido_cards,
    envido_value,
    flor_value,
    full_deck,
    has_flor,
    trick_strength,
)
from arena.rules.deal import Deal, deal_cards, first_dealer
from arena.rules.record import HandRecord, MatchRecord
from arena.rules.seeding import SeededStream
from arena.rules.signals import IllegalSignalError, SeenSignal, SentSignal, Signal
from arena.rules.variants import ARGENTINE, GALLO, MINEIRO, Options, Variant, find_variant
from arena.rules.views import (
    Award,
    AwardReason,
    Duel,
    DuelEndEvent,
    DuelSummary,
    EnvidoEvent,
    EnvidoOutcome,
    Event,
    FlorEvent,
    FlorOutcome,
    GameEndEvent,
    GameResult,
    HandEndEvent,
    HandSummary,
    MatchEndEvent,
    MatchResult,
    Move,
    MoveEvent,
    PendingCall,
    Play,
    SeatView,
    SignalEvent,
    Trick,
    TrickEvent,
)

# `K.PLAY` through an imported name is a static load in the compiled build; through a module
# variable (`K = ActionKind`) it was a dict lookup and a getattr on the enum class every time.

# Module constants are Final: the compiled build then loads them from C statics, where a module
# variable is a lookup in the module's dict at every read.

# Truco ladders and what an accepted level makes the hand worth (RULES.md §4.3, §5.1). A
# rejected call at level i scores the accepted value of level i - 1 for the caller's side.
TRUCO_LADDER: Final[Mapping[str, tuple[ActionKind, ...]]] = {
    ARGENTINE: (K.TRUCO, K.RETRUCO, K.VALE_CUATRO),
    MINEIRO: (K.TRUCO, K.SIX, K.TEN, K.TWELVE),
}
HAND_VALUES: Final[Mapping[str, tuple[int, ...]]] = {
    ARGENTINE: (1, 2, 3, 4),
    MINEIRO: (2, 4, 6, 10, 12),
}
ENVIDO_CALL_POINTS: Final = {K.ENVIDO: 2, K.REAL_ENVIDO: 3}
HAND_OF_TEN_VALUE: Final = 4  # RULES.md §5.2
HAND_OF_TEN_DECLINED: Final = 2
AT_TEN: Final = 10  # RULES.md §5.2: a Mineiro side with 10 or 11 points is "at ten"

# Flor (RULES.md §4.5). A flor duel is a pending call of one of FLOR_CALLS.
FLOR_CALLS: Final = frozenset({K.FLOR, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO})
FLOR_UNOPPOSED: Final = 3  # per flor sung when no opponent holds flor
FLOR_ACCEPTED: Final = {K.FLOR: 4, K.CONTRAFLOR: 6}  # con flor quiero: the better flor scores
FLOR_CONCEDED: Final = {K.FLOR: 3, K.CONTRAFLOR: 4}  # con flor me achico: the caller's side scores
AL_RESTO_CONCEDED: Final = {True: 6, False: 4}  # ... after al resto: raised a contraflor or not
FLOR_ANSWERS: Final = {
    K.FLOR: (K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO, K.CONTRAFLOR, K.CONTRAFLOR_AL_RESTO),
    K.CONTRAFLOR: (K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO, K.CONTRAFLOR_AL_RESTO),
    K.CONTRAFLOR_AL_RESTO: (K.CON_FLOR_QUIERO, K.CON_FLOR_ME_ACHICO),
}
# The actions that carry nothing but their kind, and every card's PLAY, built once: legal
# actions are listed for every decision, and the same (immutable) objects then reach the
# views and the wire's encoding caches every time.
_KIND_ACTIONS: Final[dict[ActionKind, Action]] = {kind: Action(kind) for kind in ActionKind}
_PLAY_ACTIONS: Final[dict[Card, Action]] = {
    card: Action(K.PLAY, card=card) for deck in Deck for card in full_deck(deck)
}
_PLAY_BY_ID: Final[dict[int, Action]] = {
    id(card): _PLAY_ACTIONS[card] for deck in Deck for card in full_deck(deck)
}
"""The same plays keyed by the identity of the deck's own cards (what deals hold): no card
hashing or comparing (a Python-level dataclass `__eq__`) per lookup; other equal cards (a
stacked deal's) fall back to `_PLAY_ACTIONS`. The deck's cards live as long as the module."""
_ENVIDO_ACTIONS: Final = tuple(_KIND_ACTIONS[k] for k in (K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO))
_QUIERO_ACTIONS: Final = (_KIND_ACTIONS[K.QUIERO], _KIND_ACTIONS[K.NO_QUIERO])
PICO_FALTA: Final = 6  # RULES.md §4.7: falta envido in pico a pico; the cap of contraflor al resto
DUEL_OFFSET: Final = 3  # pico a pico: even seat i duels seat i + 3 (docs/RULINGS.md R6)


def _take(held: list[Card], card: Card) -> None:
    """Remove `card` from `held`: the very object when it is there (the deck's own cards, no
    equality test), else the first equal card (`list.remove`)."""
    for index, mine in enumerate(held):
        if mine is card:
            del held[index]
            return
    held.remove(card)


class _Hand:
    """Mutable state of the hand being played (internal: views copy what a seat may see).

    The first group of fields belongs to the whole hand (one deal); the second to the play:
    for a pico a pico hand it is reset at the start of each duel (`Match._start_play`)."""

    __slots__ = (
        "accounts",
        "active",
        "all_tricks",
        "awards",
        "blind",
        "cards",
        "choice_pending",
        "current",
        "dealer",
        "dealt",
        "discard",
        "discard_pending",
        "duel",
        "duel_queue",
        "duels_done",
        "ended_by",
        "envido_called",
        "envido_chain",
        "envido_outcome",
        "flor_chain",
        "flor_done",
        "flor_holders",
        "flor_outcomes",
        "flor_revealed",
        "flor_singer",
        "flor_sung",
        "folded",
        "gallo",
        "hand_mano",
        "hand_of_ten",
        "held",
        "iron",
        "last_caller_team",
        "mano",
        "moves",
        "pending",
        "play_awards",
        "played_any",
        "public_moves",
        "revealed",
        "side_of",
        "signals",
        "suspended",
        "tricks",
        "truco_level",
        "turn",
        "winner_team",
    )

    def __init__(
        self,
        dealt: Deal,
        dealer: int,
        num_seats: int,
        side_of: tuple[int, ...],
        accounts: tuple[tuple[int, ...], tuple[int, ...]],
        gallo: int | None,
    ) -> None:
        self.dealt = dealt
        self.held: list[list[Card]] = [list(cards) for cards in dealt]
        self.cards: list[tuple[Card, ...]] = list(dealt)  # the playing cards (after a discard)
        self.dealer = dealer
        self.hand_mano = (dealer + 1) % num_seats
        self.side_of = side_of
        self.accounts = accounts
        self.gallo = gallo
        self.discard: Card | None = None
        self.discard_pending = gallo is not None
        self.duel: Duel | None = None
        self.duel_queue: list[Duel] = []
        self.duels_done: list[DuelSummary] = []
        self.hand_of_ten: int | None = None
        self.choice_pending = False
        self.iron = False
        self.blind = False
        self.awards: list[Award] = []
        self.moves: list[Move] = []
        self.public_moves: tuple[Move, ...] | None = None  # the moves with the discard hidden
        self.signals: list[SentSignal] = []
        self.revealed: list[tuple[int, tuple[Card, ...]]] = []
        self.flor_revealed: list[tuple[int, tuple[Card, ...]]] = []
        self.all_tricks: list[Trick] = []
        self.ended_by: str | None = None
        self.mano = self.hand_mano
        self.active: frozenset[int] = frozenset(range(num_seats))
        self.flor_holders: frozenset[int] = frozenset()
        self.reset_play(self.hand_mano, self.active)

    def reset_play(self, mano: int, active: frozenset[int]) -> None:
        """Start the play of the whole hand, or of one duel, led by `mano`."""
        self.mano = mano
        self.turn = mano
        self.active = active
        self.tricks: list[Trick] = []
        self.current: list[Play] = []
        self.folded: set[int] = set()
        self.played_any: set[int] = set()
        self.truco_level = 0
        self.last_caller_team: int | None = None
        self.pending: PendingCall | None = None
        self.suspended: PendingCall | None = None
        self.envido_called = False
        self.envido_chain: list[ActionKind] = []
        self.envido_outcome: EnvidoOutcome | None = None
        self.flor_sung: set[int] = set()
        self.flor_chain: list[ActionKind] = []
        self.flor_done = False
        self.flor_singer: int | None = None
        self.flor_outcomes: list[FlorOutcome] = []
        self.play_awards: list[Award] = []
        self.winner_team: int | None = None


class Match:
    """A match of one variant, from the first deal to the result."""

    def __init__(
        self,
        variant: Variant | str,
        options: Mapping[str, Any] | Options | None = None,
        seed: int = 0,
        *,
        dealer: int | None = None,
        scores: tuple[int, ...] | None = None,
        deals: Mapping[tuple[int, int], Deal] | None = None,
    ) -> None:
        """Start a match. `dealer`, `scores` and `deals` stack the deck for tests, puzzles and
        bug reports: the first hand's dealer, the first game's starting scores (one per
        account, see `team_of`), and explicit deals keyed by (game number, hand number);
        everything else comes from `seed`. Each is checked (a seat, scores below the target,
        real deals) and refused with a ValueError."""
        self.variant = find_variant(variant) if isinstance(variant, str) else variant
        self.options = options if isinstance(options, Options) else self.variant.options(options)
        self.seed = seed
        self.family = self.variant.family
        self.num_seats = self.variant.num_seats
        self.team_of = self.variant.accounts(self.options)
        self.num_teams = max(self.team_of) + 1
        self._ladder = TRUCO_LADDER[self.family]
        self._values = HAND_VALUES[self.family]
        self._flor = self.options.flor and self.family == ARGENTINE
        self._deals = dict(deals or {})
        self.game_number = 0
        self.hand_number = 0
        self.scores = list(scores) if scores is not None else [0] * self.num_teams
        if len(self.scores) != self.num_teams:
            raise ValueError(f"scores needs {self.num_teams} entries, got {len(self.scores)}")
        target = self.options.target
        if not all(0 <= score < target for score in self.scores):
            raise ValueError(
                f"starting scores {tuple(self.scores)} must each be 0..{target - 1} "
                f"(a side at {target} has already won the game)"
            )
        if dealer is not None and not 0 <= dealer < self.num_seats:
            raise ValueError(f"dealer {dealer} is not a seat (0..{self.num_seats - 1})")
        self.games_won = [0] * self.num_teams
        self.points = [0] * self.num_teams
        self.games: list[GameResult] = []
        self.result: MatchResult | None = None
        self._hand_records: list[HandRecord] = []
        self._initial_scores = tuple(self.scores)
        first = dealer if dealer is not None else first_dealer(self.variant, seed, 0)
        self._first_dealer = first
        self._legal: tuple[Action, ...] | None = None
        self._events: list[Event] = []
        self._everyone = frozenset(range(self.num_seats))
        # Moves are immutable and repeat all match long: one Move (and the Event everyone
        # sees for it) per seat and action, one Play per seat and card. Keyed by id(): each
        # value holds the keyed object, so the id cannot be reused while it is cached.
        self._move_cache: dict[tuple[int, int], tuple[Move, Event]] = {}
        self._play_cache: dict[tuple[int, int], Play] = {}
        self.hand = self._new_hand(first)

    # ----------------------------------------------------------------- public API

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def to_act(self) -> int | None:
        """The seat that must act now, or None when the match is over."""
        if self.result is not None:
            return None
        h = self.hand
        if h.pending is not None:
            return h.pending.responder
        if h.discard_pending:
            return h.gallo
        if h.choice_pending:
            return self._chooser()
        return h.turn

    def legal_actions(self) -> tuple[Action, ...]:
        """The legal actions of `to_act`, in `ActionKind` order, cards in hand order."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def default_action(self) -> Action:
        """The action the referee plays for a seat that faulted (documented in README):
        accept a waiting call (or play the hand of ten), otherwise play the first card
        (the first legal action when neither exists: sing flor, discard the first card)."""
        legal = self.legal_actions()
        for kind in (K.QUIERO, K.CON_FLOR_QUIERO, K.ACCEPT, K.PLAY_HAND, K.PLAY, K.PLAY_FACE_DOWN):
            for action in legal:
                if action.kind is kind:
                    return action
        return legal[0]

    def apply(self, action: Action, signal: Signal | None = None) -> tuple[Event, ...]:
        """Take `action` for the seat to act, with an optional `signal` to its partners
        (RULES.md §4.9); return the events it caused."""
        legal = self.legal_actions()
        for own in legal:  # usually one of the engine's own objects: no equality test needed
            if own is action:
                break
        else:
            try:
                action = legal[legal.index(action)]  # the engine's own (equal) object
            except ValueError:
                raise IllegalActionError(action, legal, self._why_illegal(action)) from None
        if signal is not None:
            self._check_signal(signal)
        seat = self.to_act
        assert seat is not None
        self._legal = None
        self._events = []
        if signal is not None:
            self._send_signal(seat, signal)
        self._act(seat, action)
        return tuple(self._events)

    def view(self, seat: int) -> SeatView:
        """Exactly what `seat` may know now (RULES.md §4.8)."""
        if not 0 <= seat < self.num_seats:
            raise ValueError(f"seat {seat} does not exist (0..{self.num_seats - 1})")
        h = self.hand
        side = h.side_of[seat]
        partners: tuple[tuple[int, tuple[Card, ...]], ...] = ()
        if h.hand_of_ten is not None and h.hand_of_ten == side:
            partners = tuple(
                (s, h.dealt[s])
                for s in range(self.num_seats)
                if s != seat and h.side_of[s] == side
            )
        moves = h.public_moves if h.public_moves is not None and seat != h.gallo else h.moves
        to_act = self.to_act
        return SeatView(
            variant=self.variant.name,
            seat=seat,
            team=self.team_of[seat],
            team_of=self.team_of,
            game_number=self.game_number,
            hand_number=self.hand_number,
            dealer=h.dealer,
            mano=h.mano,
            scores=tuple(self.scores),
            games_won=tuple(self.games_won),
            target=self.options.target,
            hand=() if h.blind else tuple(h.held[seat]),
            hand_size=len(h.held[seat]),
            partner_cards=partners,
            tricks=tuple(h.tricks),
            current_trick=tuple(h.current),
            moves=tuple(moves),
            hand_value=self._hand_value(),
            pending=h.pending,
            envido=h.envido_outcome,
            folded=tuple(sorted(h.folded)) if h.folded else (),
            hand_of_ten=h.hand_of_ten,
            iron_hand=h.iron,
            awards=tuple(h.awards),
            to_act=to_act,
            legal_actions=self.legal_actions() if to_act == seat else (),
            side=side,
            side_of=h.side_of,
            gallo=h.gallo,
            discard=h.discard if seat == h.gallo else None,
            flor=tuple(h.flor_outcomes),
            duel=h.duel,
            duels=tuple(h.duels_done),
            signals=tuple(
                SeenSignal(s.seat, s.move, s.signal) for s in h.signals if seat in s.audience
            )
            if h.signals
            else (),
        )

    @property
    def deal(self) -> Deal:
        """The current hand's deal, every seat's cards (seat 0 first; the gallo's four): the
        game record's, never a seat's view."""
        return self.hand.dealt

    def record(self) -> MatchRecord:
        """The game record so far: every deal, every action, every award, and the result."""
        return MatchRecord(
            variant=self.variant.name,
            options=self.options,
            seed=self.seed,
            first_dealer=self._first_dealer,
            initial_scores=self._initial_scores,
            hands=tuple(self._hand_records),
            result=self.result,
        )

    # ----------------------------------------------------------------- seats

    def _opponent_after(self, seat: int, *, flor: bool = False) -> int:
        """The first seat after `seat` in turn order, playing this hand (or duel) on the other
        side, that has not folded (and, with `flor`, holds flor)."""
        h = self.hand
        side = h.side_of[seat]
        for step in range(1, self.num_seats):
            other = (seat + step) % self.num_seats
            if (
                other in h.active
                and h.side_of[other] != side
                and other not in h.folded
                and (not flor or other in h.flor_holders)
            ):
                return other
        raise AssertionError("no opponent left to answer")  # a folded side ends the hand

    def _distance_from_mano(self, seat: int) -> int:
        return (seat - self.hand.mano) % self.num_seats

    def _chooser(self) -> int:
        """The hand-of-ten side's player nearest to mano (RULES.md §5.2)."""
        h = self.hand
        seats = [s for s in range(self.num_seats) if h.side_of[s] == h.hand_of_ten]
        return min(seats, key=self._distance_from_mano)

    def _hand_value(self) -> int:
        h = self.hand
        if h.hand_of_ten is not None:
            return HAND_OF_TEN_VALUE
        return self._values[h.truco_level]

    def _owes_flor(self, seat: int) -> bool:
        """`seat` holds flor and has not sung it: its only legal action is FLOR (§4.5)."""
        h = self.hand
        return seat in h.flor_holders and seat not in h.flor_sung

    # ----------------------------------------------------------------- legality

    def _compute_legal(self) -> tuple[Action, ...]:
        if self.result is not None:
            return ()
        h = self.hand
        if h.discard_pending:
            assert h.gallo is not None
            return tuple(Action(K.DISCARD, card=card) for card in h.held[h.gallo])
        pending = h.pending
        if pending is not None:
            if pending.kind in FLOR_CALLS:
                return tuple(_KIND_ACTIONS[k] for k in FLOR_ANSWERS[pending.kind])
            if h.flor_holders and self._owes_flor(pending.responder):
                return (_KIND_ACTIONS[K.FLOR],)
            return self._legal_answers(pending)
        if h.choice_pending:
            return (_KIND_ACTIONS[K.PLAY_HAND], _KIND_ACTIONS[K.DECLINE_HAND])
        seat = h.turn
        if h.flor_holders and self._owes_flor(seat):
            return (_KIND_ACTIONS[K.FLOR],)
        actions: list[Action] = []
        if h.blind:
            actions.extend(Action(K.PLAY_FACE_DOWN, slot=i) for i in range(len(h.held[seat])))
        else:
            for card in h.held[seat]:
                own = _PLAY_BY_ID.get(id(card))
                actions.append(_PLAY_ACTIONS[card] if own is None else own)
        if self.family == ARGENTINE and self._envido_open(seat):
            actions.extend(_ENVIDO_ACTIONS)
        raise_to = self._next_truco(seat)
        if raise_to is not None:
            actions.append(_KIND_ACTIONS[raise_to])
        if self.family == ARGENTINE:
            actions.append(_KIND_ACTIONS[K.FOLD])
        return tuple(actions)

    def _envido_open(self, seat: int) -> bool:
        """Envido may be called (RULES.md §4.2, §4.5): no envido called and no flor sung this
        hand, first trick, the seat has not played a card, and no truco accepted."""
        h = self.hand
        return (
            not h.envido_called
            and not h.flor_sung
            and not h.tricks
            and seat not in h.played_any
            and h.truco_level == 0
        )

    def _next_truco(self, seat: int) -> ActionKind | None:
        """The truco-level call `seat` may make on its turn, if any (RULES.md §4.2, §5.1):
        the next level, if the seat's side was not the last to call (the side holding the
        quiero raises; no side raises twice in a row)."""
        h = self.hand
        if h.hand_of_ten is not None or h.iron or h.truco_level >= len(self._ladder):
            return None
        if h.last_caller_team == h.side_of[seat]:
            return None
        return self._ladder[h.truco_level]

    def _legal_answers(self, pending: PendingCall) -> tuple[Action, ...]:
        h = self.hand
        if pending.kind in ENVIDO_CALLS:
            chain = h.envido_chain
            raises = []
            if all(k is K.ENVIDO for k in chain) and len(chain) < 2:
                raises.append(K.ENVIDO)
            if K.REAL_ENVIDO not in chain and K.FALTA_ENVIDO not in chain:
                raises.append(K.REAL_ENVIDO)
            if K.FALTA_ENVIDO not in chain:
                raises.append(K.FALTA_ENVIDO)
            return (*(_KIND_ACTIONS[k] for k in raises), *_QUIERO_ACTIONS)
        if self.family == MINEIRO:
            level = self._ladder.index(pending.kind) + 1
            answers = [_KIND_ACTIONS[K.ACCEPT], _KIND_ACTIONS[K.RUN]]
            if level < len(self._ladder):
                answers.insert(0, _KIND_ACTIONS[self._ladder[level]])
            return tuple(answers)
        answers = list(_QUIERO_ACTIONS)
        # Envido va primero (RULES.md §4.3); a sung flor has cancelled the envido (§4.5).
        if (
            pending.kind is K.TRUCO
            and not h.tricks
            and not h.envido_called
            and not h.flor_sung
            and pending.responder not in h.played_any
        ):
            return (*_ENVIDO_ACTIONS, *answers)
        return tuple(answers)

    def _why_illegal(self, action: Action) -> str:
        h = self.hand
        if self.result is not None:
            return "the match is over"
        if h.discard_pending:
            return f"the gallo (seat {h.gallo}) must first discard one of its four cards"
        seat = self.to_act
        if action.kind is K.FLOR and seat is not None and not self._owes_flor(seat):
            return "flor is sung once, and only by a player holding three cards of one suit"
        if seat is not None and self._owes_flor(seat):
            return f"seat {seat} holds flor and must sing it first"
        if h.pending is not None:
            return f"seat {h.pending.responder} must answer {h.pending.kind.name.lower()}"
        if action.kind in (K.RETRUCO, K.VALE_CUATRO, K.SIX, K.TEN, K.TWELVE, K.TRUCO):
            return "only the next level, by the side that did not call last"
        if action.kind in ENVIDO_CALLS:
            return (
                "envido only in the first trick, before playing, once, before truco is "
                "accepted, and never after a flor"
            )
        return "not available now"

    # ----------------------------------------------------------------- signals

    def _check_signal(self, signal: Signal) -> None:
        """Refuse a signal the options do not allow or that is malformed (RULES.md §4.9)."""
        if self.options.signals == "off":
            raise IllegalSignalError(
                "signals are off in this match (option signals = 'off'); send the action alone"
            )
        if not isinstance(signal, Signal):
            raise IllegalSignalError(f"a signal must be a Signal, not {type(signal).__name__}")
        signal.check()

    def _send_signal(self, seat: int, signal: Signal) -> None:
        """Deliver `signal` to the sender and its partners of this hand, and, when leaky, to
        each opponent with the option's probability, drawn from the seed (RULES.md §4.9)."""
        h = self.hand
        move = len(h.moves)
        side = h.side_of[seat]
        audience = {s for s in range(self.num_seats) if h.side_of[s] == side}
        if self.options.signals == "leaky":
            chance = round(self.options.leak * 100)
            for other in range(self.num_seats):
                if h.side_of[other] != side:
                    draw = SeededStream(
                        "leak", self.seed, self.game_number, self.hand_number, move, other
                    ).below(100)
                    if draw < chance:
                        audience.add(other)
        sent = SentSignal(move, seat, signal, frozenset(audience))
        h.signals.append(sent)
        self._events.append(Event(sent.audience, SignalEvent(seat, move, signal)))

    # ----------------------------------------------------------------- transitions

    def _act(self, seat: int, action: Action) -> None:
        h = self.hand
        kind = action.kind
        if kind is K.DISCARD or kind is K.PLAY_FACE_DOWN:  # built afresh for each hand
            move = Move(seat, action)
            seen = Event(self._everyone, MoveEvent(move))
        else:
            key = (seat, id(action))
            cached = self._move_cache.get(key)
            if cached is None:
                move = Move(seat, action)
                cached = self._move_cache[key] = (move, Event(self._everyone, MoveEvent(move)))
            move, seen = cached
        h.moves.append(move)
        if h.public_moves is not None:
            h.public_moves = (*h.public_moves, move)
        if kind is K.PLAY or kind is K.PLAY_FACE_DOWN:
            if action.card is not None:
                card = action.card
                _take(h.held[seat], card)
                self._events.append(seen)
            else:
                assert action.slot is not None
                card = h.held[seat].pop(action.slot)
                self._emit(MoveEvent(move, card))
            h.played_any.add(seat)
            play_key = (seat, id(card))
            play = self._play_cache.get(play_key)
            if play is None:
                play = self._play_cache[play_key] = Play(seat, card)
            h.current.append(play)
            self._advance(seat)
            return
        if kind is K.DISCARD:
            self._discard(seat, action)
            return
        self._events.append(seen)
        if kind in ENVIDO_CALLS:
            if h.pending is not None and h.pending.kind in TRUCO_CALLS:
                h.suspended = h.pending  # envido va primero: the truco waits
            if h.pending is None or h.pending.kind in TRUCO_CALLS:
                h.envido_called = True
                h.envido_chain = [kind]
            else:
                h.envido_chain.append(kind)
            h.pending = PendingCall(kind, seat, self._opponent_after(seat))
        elif kind in TRUCO_CALLS:
            h.pending = PendingCall(kind, seat, self._opponent_after(seat))
            h.last_caller_team = h.side_of[seat]
        elif kind is K.QUIERO or kind is K.ACCEPT:
            pending = h.pending
            assert pending is not None
            if pending.kind in ENVIDO_CALLS:
                self._settle_envido(accepted=True)
            else:
                h.truco_level = self._ladder.index(pending.kind) + 1
                h.pending = None
        elif kind is K.NO_QUIERO or kind is K.RUN:
            pending = h.pending
            assert pending is not None
            if pending.kind in ENVIDO_CALLS:
                self._settle_envido(accepted=False)
            else:
                level = self._ladder.index(pending.kind) + 1
                caller_side = h.side_of[pending.caller]
                self._award(caller_side, self._values[level - 1], AwardReason.TRUCO_REJECTED)
                self._end_play("rejected")
        elif kind is K.FLOR:
            self._sing_flor(seat)
        elif kind is K.CONTRAFLOR or kind is K.CONTRAFLOR_AL_RESTO:
            h.flor_sung.add(seat)  # the answer sings the answerer's flor in the same breath
            h.flor_chain.append(kind)
            h.pending = PendingCall(kind, seat, self._opponent_after(seat, flor=True))
        elif kind is K.CON_FLOR_QUIERO or kind is K.CON_FLOR_ME_ACHICO:
            h.flor_sung.add(seat)
            h.flor_chain.append(kind)
            self._settle_flor(accepted=kind is K.CON_FLOR_QUIERO)
        elif kind is K.FOLD:
            self._fold(seat)
        elif kind is K.PLAY_HAND:
            h.choice_pending = False
        elif kind is K.DECLINE_HAND:
            assert h.hand_of_ten is not None
            self._award(1 - h.hand_of_ten, HAND_OF_TEN_DECLINED, AwardReason.HAND_OF_TEN_DECLINED)
            self._end_play("declined")
        else:  # pragma: no cover - legal_actions never offers anything else
            raise AssertionError(f"unhandled action {action}")

    def _discard(self, seat: int, action: Action) -> None:
        """The gallo discards one of its four cards face down (RULES.md §4.7): only the gallo
        is told which; the other seats see a DISCARD without a card."""
        h = self.hand
        card = action.card
        assert card is not None
        _take(h.held[seat], card)
        h.discard = card
        h.discard_pending = False
        h.cards[seat] = tuple(h.held[seat])
        h.public_moves = (Move(seat, Action(K.DISCARD)),)
        self._events.append(Event(frozenset({seat}), MoveEvent(h.moves[-1])))
        # The other seats see the move too (their views list it), without its card.
        others = frozenset(range(self.num_seats)) - {seat}
        self._events.append(Event(others, MoveEvent(h.public_moves[0])))
        if self._flor and has_flor(h.cards[seat]):
            h.flor_holders = h.flor_holders | {seat}

    def _fold(self, seat: int) -> None:
        """Me voy al mazo (RULES.md §4.6)."""
        h = self.hand
        h.folded.add(seat)
        side = h.side_of[seat]
        if all(s in h.folded for s in h.active if h.side_of[s] == side):
            self._award(1 - side, self._values[h.truco_level], AwardReason.FOLD)
            self._end_play("fold")
            return
        self._advance(seat)

    def _advance(self, seat: int) -> None:
        """Pass the turn to the next seat that still owes a card to this trick, or finish it."""
        h = self.hand
        played = {p.seat for p in h.current}
        for step in range(1, self.num_seats + 1):
            nxt = (seat + step) % self.num_seats
            if nxt in h.active and nxt not in h.folded and nxt not in played:
                h.turn = nxt
                return
        self._finish_trick()

    def _finish_trick(self) -> None:
        """Resolve the trick (RULES.md §3) and decide the hand if the tricks do."""
        h = self.hand
        plays = tuple(h.current)
        best = max(trick_strength(p.card) for p in plays)
        top = [p for p in plays if trick_strength(p.card) == best]
        sides = {h.side_of[p.seat] for p in top}
        winner = top[0].seat if len(sides) == 1 else None
        trick = Trick(
            leader=plays[0].seat,
            plays=plays,
            winner=winner,
            winner_team=h.side_of[winner] if winner is not None else None,
        )
        h.tricks.append(trick)
        h.current = []
        self._emit(TrickEvent(len(h.tricks) - 1, trick))
        decided, side = self._tricks_decide()
        if decided:
            h.winner_team = side
            if side is not None:
                if h.iron:
                    need = self.options.target - self.scores[side]
                    self._award(side, need, AwardReason.IRON_HAND)
                else:
                    self._award(side, self._hand_value(), AwardReason.HAND)
            self._end_play("tricks")
            return
        lead = winner if winner is not None else trick.leader
        if lead in h.folded:
            self._advance(lead)
        else:
            h.turn = lead

    def _tricks_decide(self) -> tuple[bool, int | None]:
        """Whether the finished tricks decide the hand, and for whom (RULES.md §3 tables)."""
        h = self.hand
        results = [t.winner_team for t in h.tricks]
        first = results[0]
        if len(results) < 2:
            return False, None
        second = results[1]
        if first is not None:
            if second is None or second == first:
                return True, first
            if len(results) < 3:
                return False, None
            third = results[2]
            return True, first if third is None else third
        if second is not None:
            return True, second
        if len(results) < 3:
            return False, None
        if results[2] is not None:
            return True, results[2]
        # All three tricks tied.
        if self.family == ARGENTINE:
            return True, h.side_of[h.mano]
        if self.options.all_tied == "nobody":
            return True, None
        return True, h.side_of[h.dealer]

    # ----------------------------------------------------------------- envido

    def _settle_envido(self, *, accepted: bool) -> None:
        """Score the envido chain (RULES.md §4.4) and resume what it interrupted."""
        h = self.hand
        pending = h.pending
        assert pending is not None
        chain = tuple(h.envido_chain)
        announcements: tuple[tuple[int, int | None], ...] = ()
        winner: int | None = None
        if accepted:
            if K.FALTA_ENVIDO in chain:
                points = PICO_FALTA if h.duel is not None else self._falta()
            else:
                points = sum(ENVIDO_CALL_POINTS[k] for k in chain)
            announcements, winner = self._envido_showdown()
            side = h.side_of[winner]
            reason = AwardReason.ENVIDO
        else:
            points = 1 if len(chain) == 1 else sum(ENVIDO_CALL_POINTS[k] for k in chain[:-1])
            side = h.side_of[pending.caller]
            reason = AwardReason.ENVIDO_REJECTED
        outcome = EnvidoOutcome(accepted, chain, announcements, winner, side, points)
        h.envido_outcome = outcome
        if winner is not None:
            h.revealed.append((winner, envido_cards(h.cards[winner])))
        self._emit(EnvidoEvent(outcome))
        h.pending, h.suspended = h.suspended, None
        self._award(side, points, reason)
        if self._target_reached():
            h.pending = None
            self._end_play("target")

    def _falta(self) -> int:
        """What the leading score still needs to win the chico (falta envido, contraflor al
        resto; RULES.md §4.4, §4.5), capped at 6 in a pico a pico duel (§4.7: there falta
        envido is worth 6 flat, contraflor al resto at most 6)."""
        need = self.options.target - max(self.scores)
        return min(need, PICO_FALTA) if self.hand.duel is not None else need

    def _envido_showdown(self) -> tuple[tuple[tuple[int, int | None], ...], int]:
        """Who wins an accepted envido, and what is announced (RULES.md §4.4)."""
        h = self.hand
        order = sorted(
            (s for s in h.active if s not in h.folded),
            key=self._distance_from_mano,
        )
        values = {s: envido_value(h.cards[s]) for s in order}
        announced: list[tuple[int, int | None]] = []
        best: tuple[int, int] | None = None  # (value, seat)
        for seat in order:
            ahead = best is not None and h.side_of[best[1]] == h.side_of[seat]
            if best is None or (not ahead and values[seat] > best[0]):
                announced.append((seat, values[seat]))
                best = (values[seat], seat)
            else:
                announced.append((seat, None))
        winner = min(order, key=lambda s: (-values[s], self._distance_from_mano(s)))
        return tuple(announced), winner

    # ----------------------------------------------------------------- flor

    def _sing_flor(self, seat: int) -> None:
        """A holder sings flor (RULES.md §4.5): the envido is cancelled (a pending chain is
        void), a pending truco waits; unopposed it scores 3, against an opponent's flor it
        opens the flor duel, and after a duel it scores nothing."""
        h = self.hand
        h.flor_sung.add(seat)
        pending = h.pending
        if pending is not None:
            h.pending = None
            if pending.kind in ENVIDO_CALLS:
                h.envido_chain = []  # void: no points
            else:
                h.suspended = pending  # the truco answer is asked again once flor is settled
        if not h.flor_done:
            opponents = [
                s
                for s in h.active
                if h.side_of[s] != h.side_of[seat] and s in h.flor_holders and s not in h.folded
            ]
            if opponents:
                h.flor_chain = [K.FLOR]
                h.flor_singer = seat
                h.pending = PendingCall(K.FLOR, seat, self._opponent_after(seat, flor=True))
                return
            outcome = FlorOutcome((K.FLOR,), seat, None, h.side_of[seat], FLOR_UNOPPOSED)
            self._flor_scored(outcome, seat)
        self._resume_after_flor()

    def _settle_flor(self, *, accepted: bool) -> None:
        """Close a flor duel (RULES.md §4.5): con flor quiero compares the sides' best flors
        (ties to the seat nearer to mano), con flor me achico pays the caller's side."""
        h = self.hand
        pending = h.pending
        assert pending is not None
        assert h.flor_singer is not None
        chain = tuple(h.flor_chain)
        if accepted:
            holders = [s for s in h.flor_holders if s in h.active and s not in h.folded]
            winner: int | None = min(
                holders, key=lambda s: (-flor_value(h.cards[s]), self._distance_from_mano(s))
            )
            assert winner is not None
            side = h.side_of[winner]
            if pending.kind is K.CONTRAFLOR_AL_RESTO:
                points = self._falta()
            else:
                points = FLOR_ACCEPTED[pending.kind]
        else:
            winner = None
            side = h.side_of[pending.caller]
            if pending.kind is K.CONTRAFLOR_AL_RESTO:
                points = AL_RESTO_CONCEDED[K.CONTRAFLOR in chain]
            else:
                points = FLOR_CONCEDED[pending.kind]
        h.flor_done = True
        h.pending = None
        self._flor_scored(FlorOutcome(chain, h.flor_singer, winner, side, points), winner)
        self._resume_after_flor()

    def _flor_scored(self, outcome: FlorOutcome, shown: int | None) -> None:
        """Record a flor payout; the flor that earned it (`shown`) is revealed at the end."""
        h = self.hand
        h.flor_outcomes.append(outcome)
        if shown is not None:
            h.flor_revealed.append((shown, h.cards[shown]))
        self._emit(FlorEvent(outcome))
        self._award(outcome.team, outcome.points, AwardReason.FLOR)

    def _resume_after_flor(self) -> None:
        """Play resumes: a waiting truco is asked again; a chico may have ended (§4.1)."""
        h = self.hand
        h.pending, h.suspended = h.suspended, None
        if self._target_reached():
            h.pending = None
            self._end_play("target")

    # ----------------------------------------------------------------- scoring

    def _award(self, side: int, points: int, reason: AwardReason) -> None:
        """Points to a side: one award per account the side plays for (R4)."""
        h = self.hand
        for account in h.accounts[side]:
            award = Award(account, points, reason)
            h.awards.append(award)
            h.play_awards.append(award)
            self.scores[account] += points
            self.points[account] += points

    def _target_reached(self) -> bool:
        return max(self.scores) >= self.options.target

    def _end_play(self, ended_by: str) -> None:
        """The hand's play (or the current duel) ended; go on to the next duel or end it."""
        h = self.hand
        h.all_tricks.extend(h.tricks)
        if h.duel is None:
            self._end_hand(ended_by)
            return
        summary = DuelSummary(
            h.duel, tuple(h.tricks), h.winner_team, tuple(h.play_awards), ended_by
        )
        h.duels_done.append(summary)
        self._emit(DuelEndEvent(summary))
        if self._target_reached():
            self._end_hand("duels" if not h.duel_queue else "target")
        elif h.duel_queue:
            self._start_duel(h.duel_queue.pop(0))
        else:
            self._end_hand("duels")

    def _end_hand(self, ended_by: str) -> None:
        h = self.hand
        h.ended_by = ended_by
        summary = HandSummary(
            game_number=self.game_number,
            hand_number=self.hand_number,
            dealer=h.dealer,
            mano=h.hand_mano,
            tricks=tuple(h.all_tricks),
            winner_team=h.winner_team if h.duel is None else None,
            awards=tuple(h.awards),
            revealed=tuple(h.revealed),
            scores=tuple(self.scores),
            ended_by=ended_by,
            flor_revealed=tuple(h.flor_revealed),
            duels=tuple(h.duels_done),
            gallo=h.gallo,
        )
        self._hand_records.append(
            HandRecord(
                game_number=self.game_number,
                hand_number=self.hand_number,
                dealer=h.dealer,
                deal=h.dealt,
                moves=tuple(h.moves),
                awards=tuple(h.awards),
                summary=summary,
                signals=tuple(h.signals),
            )
        )
        self._emit(HandEndEvent(summary))
        if self._target_reached():
            self._end_game()
        else:
            self.hand_number += 1
            self.hand = self._new_hand((h.dealer + 1) % self.num_seats)

    def _game_winner(self) -> int:
        """The account that reached the target; when several did at once (the pair of a
        rotating gallo), the higher score, then the player nearer to mano (R5)."""
        top = max(self.scores)
        tied = [a for a in range(self.num_teams) if self.scores[a] == top]
        if len(tied) == 1:
            return tied[0]
        h = self.hand
        seat_of = {a: min(s for s in range(self.num_seats) if self.team_of[s] == a) for a in tied}
        return min(tied, key=lambda a: (seat_of[a] - h.hand_mano) % self.num_seats)

    def _end_game(self) -> None:
        winner = self._game_winner()
        game = GameResult(self.game_number, winner, tuple(self.scores))
        self.games.append(game)
        self.games_won[winner] += 1
        self._emit(GameEndEvent(game))
        needed = self.options.chicos // 2 + 1
        if self.games_won[winner] >= needed:
            self.result = MatchResult(
                winner_team=winner,
                games=tuple(self.games),
                games_won=tuple(self.games_won),
                points=tuple(self.points),
            )
            self._emit(MatchEndEvent(self.result))
            return
        self.game_number += 1
        self.hand_number = 0
        self.scores = [0] * self.num_teams
        self.hand = self._new_hand(first_dealer(self.variant, self.seed, self.game_number))

    # ----------------------------------------------------------------- dealing

    def _new_hand(self, dealer: int) -> _Hand:
        n = self.num_seats
        gallo: int | None = None
        if self.variant.seating == GALLO:
            gallo = 0 if self.options.gallo == "fixed" else dealer
        key = (self.game_number, self.hand_number)
        stacked = self._deals.get(key)
        if stacked is not None:
            dealt = tuple(tuple(cards) for cards in stacked)
            self._check_deal(dealt, key, gallo)
        else:
            dealt = deal_cards(self.variant, self.seed, self.game_number, self.hand_number, gallo)
        if gallo is None:
            side_of = tuple(s % 2 for s in range(n))
            accounts: tuple[tuple[int, ...], tuple[int, ...]] = ((0,), (1,))
        else:
            side_of = tuple(0 if s == gallo else 1 for s in range(n))
            pair = tuple(sorted({self.team_of[s] for s in range(n) if s != gallo}))
            accounts = ((self.team_of[gallo],), pair)
        h = _Hand(dealt, dealer, n, side_of, accounts, gallo)
        self.hand = h
        if self.family == MINEIRO:
            at_ten = [t for t in range(self.num_teams) if self.scores[t] >= AT_TEN]
            if len(at_ten) == 1:
                h.hand_of_ten = at_ten[0]
                h.choice_pending = True
            elif len(at_ten) == self.num_teams:
                h.iron = True
                h.blind = self.options.blind_iron_hand
        if (
            self.variant.pico
            and self.hand_number % 2 == 1
            and max(self.scores) < self.options.pico_until
        ):
            h.duel_queue = self._duel_order(h.hand_mano)
            self._start_duel(h.duel_queue.pop(0))
        else:
            self._start_play(h.hand_mano, self._everyone)
        return h

    def _duel_order(self, mano: int) -> list[Duel]:
        """Pico a pico duels (RULES.md §4.7, R6): even seat i against seat i + 3, played from
        the duel holding mano on in turn order; each duel's mano is its player nearer to mano."""
        n = self.num_seats
        opponent: dict[int, int] = {}
        for seat in range(0, n, 2):
            other = (seat + DUEL_OFFSET) % n
            opponent[seat], opponent[other] = other, seat
        order: list[tuple[int, int]] = []
        seen: set[int] = set()
        for step in range(n):
            seat = (mano + step) % n
            if seat not in seen:
                seen |= {seat, opponent[seat]}
                order.append((seat, opponent[seat]))
        return [Duel(i, len(order), pair) for i, pair in enumerate(order)]

    def _start_duel(self, duel: Duel) -> None:
        h = self.hand
        h.duel = duel
        self._start_play(duel.mano, frozenset(duel.seats))

    def _start_play(self, mano: int, active: frozenset[int]) -> None:
        """Reset the play state for the whole hand or a duel; find who holds flor (§4.5)."""
        h = self.hand
        h.reset_play(mano, active)
        if self._flor:
            h.flor_holders = frozenset(
                s for s in active if s != h.gallo and has_flor(h.cards[s])
            )

    def _check_deal(self, dealt: Deal, key: tuple[int, int], gallo: int | None) -> None:
        """A stacked deal must be a real deal of this variant: 3 cards per seat (4 for the
        gallo), all from the variant's deck, no card twice (RULES.md §1, §2, §4.7)."""
        where = f"deal for game {key[0]} hand {key[1]}"
        if len(dealt) != self.num_seats:
            raise ValueError(f"{where}: needs {self.num_seats} hands, got {len(dealt)}")
        for seat, cards in enumerate(dealt):
            size = 4 if seat == gallo else 3
            if len(cards) != size:
                who = "the gallo" if seat == gallo else f"seat {seat}"
                raise ValueError(f"{where}: {who} needs {size} cards, got {len(cards)}")
            for card in cards:
                if card.deck is not self.variant.deck:
                    raise ValueError(
                        f"{where}: seat {seat} holds {card} of the {card.deck.value} deck; "
                        f"{self.variant.name} plays with the {self.variant.deck.value} deck"
                    )
        every = [card for cards in dealt for card in cards]
        twice = sorted({str(c) for c in every if every.count(c) > 1})
        if twice:
            raise ValueError(f"{where}: dealt twice: {', '.join(twice)}")

    def _emit(self, body: Any) -> None:
        self._events.append(Event(self._everyone, body))
