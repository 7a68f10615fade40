"""The match state machine: deal, calls, tricks, scoring (RULES.md §1-§5).

A `Match` is a whole match (one or more games) of one variant. It is driven by two calls:
`legal_actions()` for the seat in `to_act`, and `apply(action)`, which advances the game and
returns the events it caused (each with the seats allowed to see it), or raises
`IllegalActionError`. `view(seat)` is what one seat may know. The engine never waits, never
logs and never draws randomness of its own: deals come from the seed it is given.

Turn model (RULES.md §4.2): `turn` is the seat whose card is next (the actor). A call hands the
decision to the answering seat (`pending.responder`); once settled, the actor acts again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.errors import IllegalActionError
from arena.rules.actions import ENVIDO_CALLS, TRUCO_CALLS, Action, ActionKind
from arena.rules.cards import Card, envido_cards, envido_value, trick_strength
from arena.rules.deal import Deal, deal_cards, first_dealer
from arena.rules.record import HandRecord, MatchRecord
from arena.rules.variants import ARGENTINE, MINEIRO, Options, Variant, find_variant
from arena.rules.views import (
    Award,
    AwardReason,
    EnvidoEvent,
    EnvidoOutcome,
    Event,
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
    Trick,
    TrickEvent,
)

K = ActionKind

# Truco ladders and what an accepted level makes the hand worth (RULES.md §4.3, §5.1). A
# rejected call at level i scores the accepted value of level i - 1 for the caller's side.
TRUCO_LADDER: Mapping[str, tuple[ActionKind, ...]] = {
    ARGENTINE: (K.TRUCO, K.RETRUCO, K.VALE_CUATRO),
    MINEIRO: (K.TRUCO, K.SIX, K.TEN, K.TWELVE),
}
HAND_VALUES: Mapping[str, tuple[int, ...]] = {ARGENTINE: (1, 2, 3, 4), MINEIRO: (2, 4, 6, 10, 12)}
ENVIDO_CALL_POINTS = {K.ENVIDO: 2, K.REAL_ENVIDO: 3}
HAND_OF_TEN_VALUE = 4  # RULES.md §5.2
HAND_OF_TEN_DECLINED = 2
AT_TEN = 10  # RULES.md §5.2: a Mineiro side with 10 or 11 points is "at ten"


class _Hand:
    """Mutable state of the hand being played (internal: views copy what a seat may see)."""

    __slots__ = (
        "awards",
        "blind",
        "choice_pending",
        "current",
        "dealer",
        "dealt",
        "ended_by",
        "envido_called",
        "envido_chain",
        "envido_outcome",
        "folded",
        "hand_of_ten",
        "held",
        "iron",
        "last_caller_team",
        "mano",
        "moves",
        "pending",
        "played_any",
        "suspended",
        "tricks",
        "truco_level",
        "turn",
        "winner_team",
    )

    def __init__(self, dealt: Deal, dealer: int, num_seats: int) -> None:
        self.dealt = dealt
        self.held: list[list[Card]] = [list(cards) for cards in dealt]
        self.dealer = dealer
        self.mano = (dealer + 1) % num_seats
        self.turn = self.mano
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
        self.hand_of_ten: int | None = None
        self.choice_pending = False
        self.iron = False
        self.blind = False
        self.awards: list[Award] = []
        self.moves: list[Move] = []
        self.ended_by: str | None = None
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
        bug reports: the first hand's dealer, the first game's starting scores, and explicit
        deals keyed by (game number, hand number); everything else comes from `seed`. Each is
        checked (a seat, scores below the target, real deals) and refused with a ValueError."""
        self.variant = find_variant(variant) if isinstance(variant, str) else variant
        self.options = options if isinstance(options, Options) else self.variant.options(options)
        self.seed = seed
        self.family = self.variant.family
        self.num_seats = self.variant.num_seats
        self.team_of = self.variant.team_of
        self.num_teams = self.variant.num_teams
        self._ladder = TRUCO_LADDER[self.family]
        self._values = HAND_VALUES[self.family]
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
        accept a waiting call (or play the hand of ten), otherwise play the first card."""
        legal = self.legal_actions()
        for kind in (K.QUIERO, K.ACCEPT, K.PLAY_HAND, K.PLAY, K.PLAY_FACE_DOWN):
            for action in legal:
                if action.kind is kind:
                    return action
        return legal[0]

    def apply(self, action: Action) -> tuple[Event, ...]:
        """Take `action` for the seat to act; return the events it caused."""
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(action, legal, self._why_illegal(action))
        seat = self.to_act
        assert seat is not None
        self._legal = None
        self._events = []
        self._act(seat, action)
        return tuple(self._events)

    def view(self, seat: int) -> SeatView:
        """Exactly what `seat` may know now (RULES.md §4.8)."""
        if not 0 <= seat < self.num_seats:
            raise ValueError(f"seat {seat} does not exist (0..{self.num_seats - 1})")
        h = self.hand
        team = self.team_of[seat]
        partners: tuple[tuple[int, tuple[Card, ...]], ...] = ()
        if h.hand_of_ten is not None and h.hand_of_ten == team:
            partners = tuple(
                (s, h.dealt[s])
                for s in range(self.num_seats)
                if s != seat and self.team_of[s] == team
            )
        to_act = self.to_act
        return SeatView(
            variant=self.variant.name,
            seat=seat,
            team=team,
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
            moves=tuple(h.moves),
            hand_value=self._hand_value(),
            pending=h.pending,
            envido=h.envido_outcome,
            folded=tuple(sorted(h.folded)),
            hand_of_ten=h.hand_of_ten,
            iron_hand=h.iron,
            awards=tuple(h.awards),
            to_act=to_act,
            legal_actions=self.legal_actions() if to_act == seat else (),
        )

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

    def _opponent_after(self, seat: int) -> int:
        """The first seat after `seat` in turn order, of another team, that has not folded."""
        team = self.team_of[seat]
        for step in range(1, self.num_seats):
            other = (seat + step) % self.num_seats
            if self.team_of[other] != team and other not in self.hand.folded:
                return other
        raise AssertionError("no opponent left to answer")  # a folded side ends the hand

    def _distance_from_mano(self, seat: int) -> int:
        return (seat - self.hand.mano) % self.num_seats

    def _chooser(self) -> int:
        """The hand-of-ten side's player nearest to mano (RULES.md §5.2)."""
        team = self.hand.hand_of_ten
        seats = [s for s in range(self.num_seats) if self.team_of[s] == team]
        return min(seats, key=self._distance_from_mano)

    def _hand_value(self) -> int:
        h = self.hand
        if h.hand_of_ten is not None:
            return HAND_OF_TEN_VALUE
        return self._values[h.truco_level]

    # ----------------------------------------------------------------- legality

    def _compute_legal(self) -> tuple[Action, ...]:
        if self.result is not None:
            return ()
        h = self.hand
        pending = h.pending
        if pending is not None:
            return self._legal_answers(pending)
        if h.choice_pending:
            return (Action(K.PLAY_HAND), Action(K.DECLINE_HAND))
        seat = h.turn
        actions: list[Action] = []
        if h.blind:
            actions.extend(Action(K.PLAY_FACE_DOWN, slot=i) for i in range(len(h.held[seat])))
        else:
            actions.extend(Action(K.PLAY, card=card) for card in h.held[seat])
        if self.family == ARGENTINE and self._envido_open(seat):
            actions.extend(Action(kind) for kind in (K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO))
        raise_to = self._next_truco(seat)
        if raise_to is not None:
            actions.append(Action(raise_to))
        if self.family == ARGENTINE:
            actions.append(Action(K.FOLD))
        return tuple(actions)

    def _envido_open(self, seat: int) -> bool:
        """Envido may be called (RULES.md §4.2): not yet called this hand, first trick, the
        seat has not played a card, and no truco accepted."""
        h = self.hand
        return (
            not h.envido_called
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
        if h.last_caller_team == self.team_of[seat]:
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
            return (*(Action(k) for k in raises), Action(K.QUIERO), Action(K.NO_QUIERO))
        if self.family == MINEIRO:
            level = self._ladder.index(pending.kind) + 1
            answers = [Action(K.ACCEPT), Action(K.RUN)]
            if level < len(self._ladder):
                answers.insert(0, Action(self._ladder[level]))
            return tuple(answers)
        answers = [Action(K.QUIERO), Action(K.NO_QUIERO)]
        # Envido va primero (RULES.md §4.3).
        if (
            pending.kind is K.TRUCO
            and not h.tricks
            and not h.envido_called
            and pending.responder not in h.played_any
        ):
            envidos = [Action(k) for k in (K.ENVIDO, K.REAL_ENVIDO, K.FALTA_ENVIDO)]
            return (*envidos, *answers)
        return tuple(answers)

    def _why_illegal(self, action: Action) -> str:
        h = self.hand
        if self.result is not None:
            return "the match is over"
        if h.pending is not None:
            return f"seat {h.pending.responder} must answer {h.pending.kind.name.lower()}"
        if action.kind in (K.RETRUCO, K.VALE_CUATRO, K.SIX, K.TEN, K.TWELVE, K.TRUCO):
            return "only the next level, by the side that did not call last"
        if action.kind in ENVIDO_CALLS:
            return "envido only in the first trick, before playing, once, before truco is accepted"
        return "not available now"

    # ----------------------------------------------------------------- transitions

    def _act(self, seat: int, action: Action) -> None:
        h = self.hand
        kind = action.kind
        h.moves.append(Move(seat, action))
        if kind is K.PLAY or kind is K.PLAY_FACE_DOWN:
            if action.card is not None:
                card = action.card
                h.held[seat].remove(card)
                self._emit(MoveEvent(Move(seat, action)))
            else:
                assert action.slot is not None
                card = h.held[seat].pop(action.slot)
                self._emit(MoveEvent(Move(seat, action), card))
            h.played_any.add(seat)
            h.current.append(Play(seat, card))
            self._advance(seat)
            return
        self._emit(MoveEvent(Move(seat, action)))
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
            h.last_caller_team = self.team_of[seat]
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
                caller_team = self.team_of[pending.caller]
                self._award(caller_team, self._values[level - 1], AwardReason.TRUCO_REJECTED)
                self._end_hand("rejected")
        elif kind is K.FOLD:
            self._fold(seat)
        elif kind is K.PLAY_HAND:
            h.choice_pending = False
        elif kind is K.DECLINE_HAND:
            assert h.hand_of_ten is not None
            self._award(
                self._other_team(h.hand_of_ten),
                HAND_OF_TEN_DECLINED,
                AwardReason.HAND_OF_TEN_DECLINED,
            )
            self._end_hand("declined")
        else:  # pragma: no cover - legal_actions never offers anything else
            raise AssertionError(f"unhandled action {action}")

    def _other_team(self, team: int) -> int:
        return 1 - team  # two sides in every variant of this engine

    def _fold(self, seat: int) -> None:
        """Me voy al mazo (RULES.md §4.6)."""
        h = self.hand
        h.folded.add(seat)
        team = self.team_of[seat]
        if all(s in h.folded for s in range(self.num_seats) if self.team_of[s] == team):
            other = self._other_team(team)
            self._award(other, self._values[h.truco_level], AwardReason.FOLD)
            self._end_hand("fold")
            return
        self._advance(seat)

    def _advance(self, seat: int) -> None:
        """Pass the turn to the next seat that still owes a card to this trick, or finish it."""
        h = self.hand
        played = {p.seat for p in h.current}
        for step in range(1, self.num_seats + 1):
            nxt = (seat + step) % self.num_seats
            if nxt not in h.folded and nxt not in played:
                h.turn = nxt
                return
        self._finish_trick()

    def _finish_trick(self) -> None:
        """Resolve the trick (RULES.md §3) and decide the hand if the tricks do."""
        h = self.hand
        plays = tuple(h.current)
        best = max(trick_strength(p.card) for p in plays)
        top = [p for p in plays if trick_strength(p.card) == best]
        teams = {self.team_of[p.seat] for p in top}
        winner = top[0].seat if len(teams) == 1 else None
        trick = Trick(
            leader=plays[0].seat,
            plays=plays,
            winner=winner,
            winner_team=self.team_of[winner] if winner is not None else None,
        )
        h.tricks.append(trick)
        h.current = []
        self._emit(TrickEvent(len(h.tricks) - 1, trick))
        decided, team = self._tricks_decide()
        if decided:
            h.winner_team = team
            if team is not None:
                if h.iron:
                    need = self.options.target - self.scores[team]
                    self._award(team, need, AwardReason.IRON_HAND)
                else:
                    self._award(team, self._hand_value(), AwardReason.HAND)
            self._end_hand("tricks")
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
            return True, self.team_of[h.mano]
        if self.options.all_tied == "nobody":
            return True, None
        return True, self.team_of[h.dealer]

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
                points = self.options.target - max(self.scores)
            else:
                points = sum(ENVIDO_CALL_POINTS[k] for k in chain)
            announcements, winner = self._envido_showdown()
            team = self.team_of[winner]
            reason = AwardReason.ENVIDO
        else:
            points = 1 if len(chain) == 1 else sum(ENVIDO_CALL_POINTS[k] for k in chain[:-1])
            team = self.team_of[pending.caller]
            reason = AwardReason.ENVIDO_REJECTED
        outcome = EnvidoOutcome(accepted, chain, announcements, winner, team, points)
        h.envido_outcome = outcome
        self._emit(EnvidoEvent(outcome))
        h.pending, h.suspended = h.suspended, None
        self._award(team, points, reason)
        if self._target_reached():
            h.pending = None
            self._end_hand("target")

    def _envido_showdown(self) -> tuple[tuple[tuple[int, int | None], ...], int]:
        """Who wins an accepted envido, and what is announced (RULES.md §4.4)."""
        h = self.hand
        order = sorted(
            (s for s in range(self.num_seats) if s not in h.folded),
            key=self._distance_from_mano,
        )
        values = {s: envido_value(h.dealt[s]) for s in order}
        announced: list[tuple[int, int | None]] = []
        best: tuple[int, int] | None = None  # (value, seat)
        for seat in order:
            ahead = best is not None and self.team_of[best[1]] == self.team_of[seat]
            if best is None or (not ahead and values[seat] > best[0]):
                announced.append((seat, values[seat]))
                best = (values[seat], seat)
            else:
                announced.append((seat, None))
        winner = min(order, key=lambda s: (-values[s], self._distance_from_mano(s)))
        return tuple(announced), winner

    # ----------------------------------------------------------------- scoring

    def _award(self, team: int, points: int, reason: AwardReason) -> None:
        award = Award(team, points, reason)
        self.hand.awards.append(award)
        self.scores[team] += points
        self.points[team] += points

    def _target_reached(self) -> bool:
        return max(self.scores) >= self.options.target

    def _end_hand(self, ended_by: str) -> None:
        h = self.hand
        h.ended_by = ended_by
        revealed: tuple[tuple[int, tuple[Card, ...]], ...] = ()
        outcome = h.envido_outcome
        if outcome is not None and outcome.winner is not None:
            revealed = ((outcome.winner, envido_cards(h.dealt[outcome.winner])),)
        summary = HandSummary(
            game_number=self.game_number,
            hand_number=self.hand_number,
            dealer=h.dealer,
            mano=h.mano,
            tricks=tuple(h.tricks),
            winner_team=h.winner_team,
            awards=tuple(h.awards),
            revealed=revealed,
            scores=tuple(self.scores),
            ended_by=ended_by,
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
            )
        )
        self._emit(HandEndEvent(summary))
        if self._target_reached():
            self._end_game()
        else:
            self.hand_number += 1
            self.hand = self._new_hand((h.dealer + 1) % self.num_seats)

    def _end_game(self) -> None:
        winner = max(range(self.num_teams), key=lambda t: self.scores[t])
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

    def _new_hand(self, dealer: int) -> _Hand:
        key = (self.game_number, self.hand_number)
        stacked = self._deals.get(key)
        if stacked is not None:
            dealt = tuple(tuple(cards) for cards in stacked)
            self._check_deal(dealt, key)
        else:
            dealt = deal_cards(self.variant, self.seed, self.game_number, self.hand_number)
        h = _Hand(dealt, dealer, self.num_seats)
        if self.family == MINEIRO:
            at_ten = [t for t in range(self.num_teams) if self.scores[t] >= AT_TEN]
            if len(at_ten) == 1:
                h.hand_of_ten = at_ten[0]
                h.choice_pending = True
            elif len(at_ten) == self.num_teams:
                h.iron = True
                h.blind = self.options.blind_iron_hand
        self.hand = h
        return h

    def _check_deal(self, dealt: Deal, key: tuple[int, int]) -> None:
        """A stacked deal must be a real deal of this variant: 3 cards per seat, all from the
        variant's deck, no card twice (RULES.md §1, §2)."""
        where = f"deal for game {key[0]} hand {key[1]}"
        if len(dealt) != self.num_seats:
            raise ValueError(f"{where}: needs {self.num_seats} hands, got {len(dealt)}")
        for seat, cards in enumerate(dealt):
            if len(cards) != 3:
                raise ValueError(f"{where}: seat {seat} needs 3 cards, got {len(cards)}")
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
