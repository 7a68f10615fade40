"""Pure conversions between the engine's value objects (arena.rules) and the wire (arena.v1).

`*_to_proto` functions build messages from engine values; `*_from_proto` functions read them
back into the same engine values, so a bot written with the Python SDK works with the engine's
own types. Cards on the wire carry no deck, so every `*_from_proto` that can meet a card takes
the match's `Deck` (`deck_of(variant)` finds it).

Anything on the wire that does not make sense (an unknown action kind, a bad card, a card on an
action that takes none, ...) raises `ProtocolViolation` with a message that says what was wrong.
No I/O here, nothing but arena.rules and the generated messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from arena.errors import NotationError, ProtocolViolation, UnknownVariantError
from arena.rpc import wirecache
from arena.rules.actions import Action, ActionKind
from arena.rules.cards import RANKS, Card, Deck, Suit, parse_card
from arena.rules.signals import SeenSignal, Signal, SignalKind
from arena.rules.variants import Options, find_variant
from arena.rules.views import (
    Award,
    AwardReason,
    Duel,
    DuelEndEvent,
    DuelSummary,
    EnvidoEvent,
    EnvidoOutcome,
    EventBody,
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
from arena.v1 import arena_pb2 as pb

__all__ = [
    "action_from_proto",
    "action_to_proto",
    "award_from_proto",
    "award_to_proto",
    "card_from_proto",
    "card_to_proto",
    "deck_of",
    "envido_from_proto",
    "envido_to_proto",
    "event_from_proto",
    "event_to_proto",
    "game_result_from_proto",
    "game_result_to_proto",
    "legal_actions_into",
    "options_from_proto",
    "options_to_proto",
    "result_from_proto",
    "result_to_proto",
    "summary_from_proto",
    "summary_to_proto",
    "trick_from_proto",
    "trick_to_proto",
    "view_from_proto",
    "view_into",
    "view_to_proto",
]

# Engine enums and wire enums are paired by name. ActionKind and AwardReason also share their
# numbers (tests/test_proto.py); the wire's suits are shifted by one (0 is SUIT_UNSPECIFIED).
_SUIT_TO_WIRE: dict[Suit, pb.Suit] = {s: pb.Suit.Value(f"SUIT_{s.name}") for s in Suit}
_KIND_TO_WIRE: dict[ActionKind, pb.ActionKind] = {
    k: pb.ActionKind.Value(f"ACTION_KIND_{k.name}") for k in ActionKind
}
_REASON_TO_WIRE: dict[AwardReason, pb.AwardReason] = {
    r: pb.AwardReason.Value(f"AWARD_REASON_{r.name}") for r in AwardReason
}
_SUIT_FROM_WIRE: dict[int, Suit] = {number: s for s, number in _SUIT_TO_WIRE.items()}
_KIND_FROM_WIRE: dict[int, ActionKind] = {number: k for k, number in _KIND_TO_WIRE.items()}
_REASON_FROM_WIRE: dict[int, AwardReason] = {n: r for r, n in _REASON_TO_WIRE.items()}

# Kinds that carry a card, and the kind that carries a slot (actions.py, `Action`).
_CARD_KINDS = frozenset({ActionKind.PLAY, ActionKind.DISCARD})
_SLOT_KINDS = frozenset({ActionKind.PLAY_FACE_DOWN})


def deck_of(variant: str) -> Deck:
    """The deck a variant plays with: Spanish for argentine-*, Brazilian for mineiro-*."""
    try:
        return find_variant(variant).deck
    except UnknownVariantError:
        pass
    if variant.startswith("argentine"):
        return Deck.SPANISH
    if variant.startswith("mineiro"):
        return Deck.BRAZILIAN
    raise ProtocolViolation(
        f"unknown variant {variant!r}: cannot tell its deck (argentine-* variants use the "
        "Spanish deck, mineiro-* the Brazilian one)"
    )


# Cards ---------------------------------------------------------------------------------------


def card_to_proto(card: Card) -> pb.Card:
    """A `Card` message with suit, rank and the deck's notation."""
    return pb.Card(suit=_SUIT_TO_WIRE[card.suit], rank=card.rank, text=str(card))


def card_from_proto(msg: pb.Card, deck: Deck) -> Card:
    """Read a card of `deck`: from suit + rank, or from `text` alone; if both, they must agree."""
    if msg.suit == 0 and msg.rank == 0:
        if not msg.text:
            raise ProtocolViolation(
                "card is empty: set suit and rank (e.g. SUIT_SWORDS, 1), or text (e.g. "
                f"{_example(deck)})"
            )
        return _parse(msg.text, deck)
    suit = _SUIT_FROM_WIRE.get(msg.suit)
    if suit is None:
        names = ", ".join(f"{number} ({suit.name})" for suit, number in _SUIT_TO_WIRE.items())
        raise ProtocolViolation(f"card suit {msg.suit} is not a suit; suits are {names}")
    if msg.rank not in RANKS:
        raise ProtocolViolation(f"card rank {msg.rank} is not in a 40-card deck (1-7, 10-12)")
    card = Card(deck, suit, msg.rank)
    if msg.text and _parse(msg.text, deck) != card:
        raise ProtocolViolation(
            f"card text {msg.text!r} does not match its suit and rank, which make {card}"
        )
    return card


def _parse(text: str, deck: Deck) -> Card:
    try:
        return parse_card(text, deck)
    except NotationError as err:
        raise ProtocolViolation(f"bad card in the {deck.value} deck: {err}") from err


def _example(deck: Deck) -> str:
    return '"1e"' if deck is Deck.SPANISH else '"4c"'


def _cards_from_proto(msgs: Iterable[pb.Card], deck: Deck) -> tuple[Card, ...]:
    return tuple(card_from_proto(msg, deck) for msg in msgs)


def _seat_cards_to_proto(pairs: tuple[tuple[int, tuple[Card, ...]], ...]) -> list[pb.SeatCards]:
    return [
        pb.SeatCards(seat=seat, cards=[card_to_proto(c) for c in cards]) for seat, cards in pairs
    ]


def _seat_cards_from_proto(
    msgs: Iterable[pb.SeatCards], deck: Deck
) -> tuple[tuple[int, tuple[Card, ...]], ...]:
    return tuple((msg.seat, _cards_from_proto(msg.cards, deck)) for msg in msgs)


# Actions -------------------------------------------------------------------------------------


def _kind_from_proto(number: int) -> ActionKind:
    if number == 0:
        raise ProtocolViolation("action kind is unset (ACTION_KIND_UNSPECIFIED); set `kind`")
    kind = _KIND_FROM_WIRE.get(number)
    if kind is None:
        raise ProtocolViolation(
            f"unknown action kind {number}; see enum ActionKind in arena.proto for the kinds"
        )
    return kind


def action_to_proto(action: Action) -> pb.Action:
    """An `Action` message: the kind, and the card or slot if the action has one."""
    msg = pb.Action(kind=_KIND_TO_WIRE[action.kind], slot=action.slot)
    if action.card is not None:
        msg.card.CopyFrom(card_to_proto(action.card))
    return msg


def action_from_proto(msg: pb.Action, deck: Deck) -> Action:
    """Read an action. The card is required for PLAY and refused on kinds other than PLAY and
    DISCARD (a DISCARD move shown to anyone but the gallo has no card: the discard is
    private); the slot likewise is required for PLAY_FACE_DOWN and refused elsewhere."""
    kind = _kind_from_proto(msg.kind)
    name = kind.name
    has_card, has_slot = msg.HasField("card"), msg.HasField("slot")
    if kind in _CARD_KINDS and not has_card and kind is not ActionKind.DISCARD:
        raise ProtocolViolation(f"action {name} needs a card: set `card`")
    if kind not in _CARD_KINDS and has_card:
        raise ProtocolViolation(f"action {name} takes no card: leave `card` unset")
    if kind in _SLOT_KINDS and not has_slot:
        raise ProtocolViolation(f"action {name} needs a slot (position in the hand): set `slot`")
    if kind not in _SLOT_KINDS and has_slot:
        raise ProtocolViolation(f"action {name} takes no slot: leave `slot` unset")
    card = card_from_proto(msg.card, deck) if has_card else None
    return Action(kind, card=card, slot=msg.slot if has_slot else None)


def _actions_from_proto(msgs: Iterable[pb.Action], deck: Deck) -> tuple[Action, ...]:
    return tuple(action_from_proto(msg, deck) for msg in msgs)


# Hand pieces ---------------------------------------------------------------------------------


def award_to_proto(award: Award) -> pb.Award:
    """An `Award` message."""
    return pb.Award(team=award.team, points=award.points, reason=_REASON_TO_WIRE[award.reason])


def award_from_proto(msg: pb.Award) -> Award:
    """Read an award; an unknown reason is a `ProtocolViolation`."""
    reason = _REASON_FROM_WIRE.get(msg.reason)
    if reason is None:
        raise ProtocolViolation(
            f"unknown award reason {msg.reason}; see enum AwardReason in arena.proto"
        )
    return Award(team=msg.team, points=msg.points, reason=reason)


def _play_to_proto(play: Play) -> pb.Play:
    return pb.Play(seat=play.seat, card=card_to_proto(play.card))


def _play_from_proto(msg: pb.Play, deck: Deck) -> Play:
    if not msg.HasField("card"):
        raise ProtocolViolation(f"a play by seat {msg.seat} has no card")
    return Play(seat=msg.seat, card=card_from_proto(msg.card, deck))


def trick_to_proto(trick: Trick) -> pb.Trick:
    """A `Trick` message; `winner` and `winner_team` stay unset for a parda. The plays come
    from the encoding caches (each was in the current trick of some view before)."""
    msg = pb.Trick(leader=trick.leader, winner=trick.winner, winner_team=trick.winner_team)
    msg.MergeFromString(b"".join(map(_in_plays.get, trick.plays)))
    return msg


def trick_from_proto(msg: pb.Trick, deck: Deck) -> Trick:
    """Read a trick."""
    return Trick(
        leader=msg.leader,
        plays=tuple(_play_from_proto(p, deck) for p in msg.plays),
        winner=_optional(msg, "winner"),
        winner_team=_optional(msg, "winner_team"),
    )


def _move_to_proto(move: Move) -> pb.Move:
    return pb.Move(seat=move.seat, action=action_to_proto(move.action))


def _move_from_proto(msg: pb.Move, deck: Deck) -> Move:
    return Move(seat=msg.seat, action=action_from_proto(msg.action, deck))


def _pending_to_proto(pending: PendingCall | None) -> pb.PendingCall | None:
    if pending is None:
        return None
    return pb.PendingCall(
        kind=_KIND_TO_WIRE[pending.kind], caller=pending.caller, responder=pending.responder
    )


def _pending_from_proto(msg: pb.PendingCall) -> PendingCall:
    return PendingCall(kind=_kind_from_proto(msg.kind), caller=msg.caller, responder=msg.responder)


def envido_to_proto(outcome: EnvidoOutcome) -> pb.EnvidoOutcome:
    """An `EnvidoOutcome` message; a *son buenas* announcement has no value."""
    return pb.EnvidoOutcome(
        accepted=outcome.accepted,
        chain=[_KIND_TO_WIRE[kind] for kind in outcome.chain],
        announcements=[
            pb.EnvidoAnnouncement(seat=seat, value=value) for seat, value in outcome.announcements
        ],
        winner=outcome.winner,
        team=outcome.team,
        points=outcome.points,
    )


def envido_from_proto(msg: pb.EnvidoOutcome) -> EnvidoOutcome:
    """Read a settled envido."""
    return EnvidoOutcome(
        accepted=msg.accepted,
        chain=tuple(_kind_from_proto(kind) for kind in msg.chain),
        announcements=tuple((a.seat, _optional(a, "value")) for a in msg.announcements),
        winner=_optional(msg, "winner"),
        team=msg.team,
        points=msg.points,
    )


def _optional(msg: Any, field: str) -> int | None:
    value: int | None = getattr(msg, field) if msg.HasField(field) else None
    return value


# Flor, duels, signals ------------------------------------------------------------------------


def flor_to_proto(outcome: FlorOutcome) -> pb.FlorOutcome:
    """A `FlorOutcome` message."""
    return pb.FlorOutcome(
        chain=[_KIND_TO_WIRE[k] for k in outcome.chain],
        singer=outcome.singer,
        winner=outcome.winner,
        team=outcome.team,
        points=outcome.points,
    )


def flor_from_proto(msg: pb.FlorOutcome) -> FlorOutcome:
    """Read a flor payout."""
    return FlorOutcome(
        chain=tuple(_kind_from_proto(k) for k in msg.chain),
        singer=msg.singer,
        winner=_optional(msg, "winner"),
        team=msg.team,
        points=msg.points,
    )


def duel_to_proto(duel: Duel) -> pb.Duel:
    """A `Duel` message."""
    return pb.Duel(index=duel.index, of=duel.of, seats=list(duel.seats))


def duel_from_proto(msg: pb.Duel) -> Duel:
    """Read a duel."""
    if len(msg.seats) != 2:
        raise ProtocolViolation(f"a duel has two seats, got {list(msg.seats)}")
    return Duel(index=msg.index, of=msg.of, seats=(msg.seats[0], msg.seats[1]))


def duel_summary_to_proto(summary: DuelSummary) -> pb.DuelSummary:
    """A `DuelSummary` message."""
    return pb.DuelSummary(
        duel=duel_to_proto(summary.duel),
        tricks=[trick_to_proto(t) for t in summary.tricks],
        winner_team=summary.winner_team,
        awards=[award_to_proto(a) for a in summary.awards],
        ended_by=summary.ended_by,
    )


def duel_summary_from_proto(msg: pb.DuelSummary, deck: Deck) -> DuelSummary:
    """Read a finished duel."""
    return DuelSummary(
        duel=duel_from_proto(msg.duel),
        tricks=tuple(trick_from_proto(t, deck) for t in msg.tricks),
        winner_team=_optional(msg, "winner_team"),
        awards=tuple(award_from_proto(a) for a in msg.awards),
        ended_by=msg.ended_by,
    )


def signal_to_proto(signal: Signal) -> pb.Signal:
    """A `Signal` message (same kind numbers)."""
    return pb.Signal(
        kind=pb.SignalKind.Name(int(signal.kind)), text=signal.text, value=signal.value
    )


def signal_from_proto(msg: pb.Signal) -> Signal:
    """Read a signal; an unknown kind is a `ProtocolViolation` (the referee then refuses it;
    well-formedness beyond the kind is the engine's `Signal.check`)."""
    try:
        kind = SignalKind(msg.kind)
    except ValueError:
        valid = ", ".join(f"{k.name}={int(k)}" for k in SignalKind)
        raise ProtocolViolation(f"signal kind {msg.kind} is not one of {valid}") from None
    return Signal(kind=kind, text=msg.text, value=_optional(msg, "value"))


def _seen_to_proto(seen: SeenSignal) -> pb.SeenSignal:
    return pb.SeenSignal(seat=seen.seat, move=seen.move, signal=signal_to_proto(seen.signal))


def _seen_from_proto(msg: pb.SeenSignal) -> SeenSignal:
    return SeenSignal(seat=msg.seat, move=msg.move, signal=signal_from_proto(msg.signal))


# Views ---------------------------------------------------------------------------------------


def view_to_proto(view: SeatView) -> pb.View:
    """A `View` message holding everything in the `SeatView`.

    The hand, tricks, current trick, moves and legal actions come from the encoding caches
    (see "Encoding caches" below); the rest is built field by field."""
    msg = _view_head(view)
    msg.MergeFromString(_view_lists(view))
    return msg


def view_into(msg: pb.View, view: SeatView) -> None:
    """Fill the empty `msg` (the `view` of a message being built) with what `view_to_proto`
    returns, without building that message apart and copying it in."""
    msg.MergeFromString(_view_head(view).SerializeToString() + _view_lists(view))


def legal_actions_into(msg: pb.DecisionRequest, actions: Iterable[Action]) -> None:
    """Append `actions` to the `legal_actions` of `msg` (from the encoding caches)."""
    msg.MergeFromString(b"".join(map(_in_decision_legal_actions.get, actions)))


def _view_head(view: SeatView) -> pb.View:
    """The `View` without the fields that `_view_lists` encodes (the lists of a view that
    are mostly empty are left out when they are)."""
    return pb.View(
        variant=view.variant,
        seat=view.seat,
        team=view.team,
        team_of=view.team_of,
        game_number=view.game_number,
        hand_number=view.hand_number,
        dealer=view.dealer,
        mano=view.mano,
        scores=view.scores,
        games_won=view.games_won,
        target=view.target,
        hand_card_count=view.hand_size,
        partner_cards=_seat_cards_to_proto(view.partner_cards) if view.partner_cards else None,
        hand_value=view.hand_value,
        pending=_pending_to_proto(view.pending),
        envido=None if view.envido is None else envido_to_proto(view.envido),
        folded=view.folded,
        hand_of_ten=view.hand_of_ten,
        iron_hand=view.iron_hand,
        awards=[award_to_proto(a) for a in view.awards] if view.awards else None,
        to_act=view.to_act,
        side=view.side,
        side_of=view.side_of,
        gallo=view.gallo,
        discard=None if view.discard is None else card_to_proto(view.discard),
        flor=[flor_to_proto(f) for f in view.flor] if view.flor else None,
        duel=None if view.duel is None else duel_to_proto(view.duel),
        duels=[duel_summary_to_proto(d) for d in view.duels] if view.duels else None,
        signals=[_seen_to_proto(x) for x in view.signals] if view.signals else None,
    )


def _view_lists(view: SeatView) -> bytes:
    """The encoding of a `View` holding only the view's hand, tricks, current trick, moves
    and legal actions, joined from the encoding caches."""
    return b"".join(
        [
            *map(_in_hand.get, view.hand),
            *map(_in_tricks.get, view.tricks),
            *map(_in_current_trick.get, view.current_trick),
            *map(_in_moves.get, view.moves),
            *map(_in_legal_actions.get, view.legal_actions),
        ]
    )


def view_from_proto(msg: pb.View, deck: Deck) -> SeatView:
    """Read a `View` back into the engine's `SeatView` (cards belong to `deck`)."""
    return SeatView(
        variant=msg.variant,
        seat=msg.seat,
        team=msg.team,
        team_of=tuple(msg.team_of),
        game_number=msg.game_number,
        hand_number=msg.hand_number,
        dealer=msg.dealer,
        mano=msg.mano,
        scores=tuple(msg.scores),
        games_won=tuple(msg.games_won),
        target=msg.target,
        hand=_cards_from_proto(msg.hand, deck),
        hand_size=msg.hand_card_count,
        partner_cards=_seat_cards_from_proto(msg.partner_cards, deck),
        tricks=tuple(trick_from_proto(t, deck) for t in msg.tricks),
        current_trick=tuple(_play_from_proto(p, deck) for p in msg.current_trick),
        moves=tuple(_move_from_proto(m, deck) for m in msg.moves),
        hand_value=msg.hand_value,
        pending=_pending_from_proto(msg.pending) if msg.HasField("pending") else None,
        envido=envido_from_proto(msg.envido) if msg.HasField("envido") else None,
        folded=tuple(msg.folded),
        hand_of_ten=_optional(msg, "hand_of_ten"),
        iron_hand=msg.iron_hand,
        awards=tuple(award_from_proto(a) for a in msg.awards),
        to_act=_optional(msg, "to_act"),
        legal_actions=_actions_from_proto(msg.legal_actions, deck),
        side=msg.side,
        side_of=tuple(msg.side_of),
        gallo=_optional(msg, "gallo"),
        discard=card_from_proto(msg.discard, deck) if msg.HasField("discard") else None,
        flor=tuple(flor_from_proto(f) for f in msg.flor),
        duel=duel_from_proto(msg.duel) if msg.HasField("duel") else None,
        duels=tuple(duel_summary_from_proto(d, deck) for d in msg.duels),
        signals=tuple(_seen_from_proto(x) for x in msg.signals),
    )


# Summaries and results -----------------------------------------------------------------------


def summary_to_proto(summary: HandSummary) -> pb.HandSummary:
    """A `HandSummary` message."""
    return pb.HandSummary(
        game_number=summary.game_number,
        hand_number=summary.hand_number,
        dealer=summary.dealer,
        mano=summary.mano,
        tricks=[trick_to_proto(t) for t in summary.tricks],
        winner_team=summary.winner_team,
        awards=[award_to_proto(a) for a in summary.awards],
        revealed=_seat_cards_to_proto(summary.revealed),
        scores=summary.scores,
        ended_by=summary.ended_by,
        flor_revealed=_seat_cards_to_proto(summary.flor_revealed),
        duels=[duel_summary_to_proto(d) for d in summary.duels],
        gallo=summary.gallo,
    )


def summary_from_proto(msg: pb.HandSummary, deck: Deck) -> HandSummary:
    """Read a hand summary."""
    return HandSummary(
        game_number=msg.game_number,
        hand_number=msg.hand_number,
        dealer=msg.dealer,
        mano=msg.mano,
        tricks=tuple(trick_from_proto(t, deck) for t in msg.tricks),
        winner_team=_optional(msg, "winner_team"),
        awards=tuple(award_from_proto(a) for a in msg.awards),
        revealed=_seat_cards_from_proto(msg.revealed, deck),
        scores=tuple(msg.scores),
        ended_by=msg.ended_by,
        flor_revealed=_seat_cards_from_proto(msg.flor_revealed, deck),
        duels=tuple(duel_summary_from_proto(d, deck) for d in msg.duels),
        gallo=_optional(msg, "gallo"),
    )


def game_result_to_proto(result: GameResult) -> pb.GameResult:
    """A `GameResult` message."""
    return pb.GameResult(
        game_number=result.game_number, winner_team=result.winner_team, scores=result.scores
    )


def game_result_from_proto(msg: pb.GameResult) -> GameResult:
    """Read one game's result."""
    return GameResult(
        game_number=msg.game_number, winner_team=msg.winner_team, scores=tuple(msg.scores)
    )


def result_to_proto(result: MatchResult) -> pb.MatchResult:
    """A `MatchResult` message."""
    return pb.MatchResult(
        winner_team=result.winner_team,
        games=[game_result_to_proto(g) for g in result.games],
        games_won=result.games_won,
        points=result.points,
    )


def result_from_proto(msg: pb.MatchResult) -> MatchResult:
    """Read a match result."""
    return MatchResult(
        winner_team=msg.winner_team,
        games=tuple(game_result_from_proto(g) for g in msg.games),
        games_won=tuple(msg.games_won),
        points=tuple(msg.points),
    )


def options_to_proto(options: Options) -> pb.Options:
    """An `Options` message with every option's value."""
    return pb.Options(
        target=options.target,
        chicos=options.chicos,
        flor=options.flor,
        blind_iron_hand=options.blind_iron_hand,
        all_tied=options.all_tied,
        gallo=options.gallo,
        pico_until=options.pico_until,
        signals=options.signals,
        leak=options.leak,
    )


def options_from_proto(msg: pb.Options) -> Options:
    """Read resolved options (not validated against a variant: `Variant.options` does that)."""
    return Options(
        target=msg.target,
        chicos=msg.chicos,
        flor=msg.flor,
        blind_iron_hand=msg.blind_iron_hand,
        all_tied=msg.all_tied,
        gallo=msg.gallo,
        pico_until=msg.pico_until,
        signals=msg.signals,
        leak=msg.leak,
    )


# Events --------------------------------------------------------------------------------------


def event_to_proto(body: EventBody, *, match_id: str, seat: int) -> pb.ServerMessage:
    """The `ServerMessage` that tells `seat` about an engine event.

    Moves, tricks, envidos and game ends become `event`; a hand end becomes `hand_ended`; a
    match end becomes `game_over` with TERMINATION_NORMAL (the referee fills in `strikes`, and
    builds its own `GameOver` for matches that end any other way). The event itself comes from
    the encoding caches, so telling it to every seat of its audience builds it once.
    """
    if isinstance(body, HandEndEvent):
        msg = pb.ServerMessage()
        ended = msg.hand_ended
        ended.match_id = match_id
        ended.seat = seat
        ended.MergeFromString(_hand_ended(body.summary))
        return msg
    if isinstance(body, MatchEndEvent):
        outcome = pb.MatchOutcome(
            termination=pb.TERMINATION_NORMAL,
            winner_team=body.result.winner_team,
            result=result_to_proto(body.result),
        )
        over = pb.GameOver(match_id=match_id, seat=seat, outcome=outcome)
        return pb.ServerMessage(game_over=over)
    msg = pb.ServerMessage()
    event = msg.event
    event.match_id = match_id
    event.seat = seat
    event.MergeFromString(_game_event(body))
    return msg


def _game_event_to_proto(body: EventBody) -> pb.GameEvent:
    """The `GameEvent` of a move, trick, envido, game end, flor, duel end or signal, without
    its address (match_id, seat)."""
    event = pb.GameEvent()
    if isinstance(body, MoveEvent):
        event.move.move.CopyFrom(_move_to_proto(body.move))
        if body.card is not None:
            event.move.card.CopyFrom(card_to_proto(body.card))
    elif isinstance(body, TrickEvent):
        event.trick.index = body.index
        event.trick.trick.CopyFrom(trick_to_proto(body.trick))
    elif isinstance(body, EnvidoEvent):
        event.envido.outcome.CopyFrom(envido_to_proto(body.outcome))
    elif isinstance(body, GameEndEvent):
        event.game_end.result.CopyFrom(game_result_to_proto(body.result))
    elif isinstance(body, FlorEvent):
        event.flor.outcome.CopyFrom(flor_to_proto(body.outcome))
    elif isinstance(body, DuelEndEvent):
        event.duel_end.summary.CopyFrom(duel_summary_to_proto(body.summary))
    elif isinstance(body, SignalEvent):
        event.signal.seat = body.seat
        event.signal.move = body.move
        event.signal.signal.CopyFrom(signal_to_proto(body.signal))
    else:
        raise TypeError(f"not an event body: {body!r}")
    return event


def event_from_proto(msg: pb.ServerMessage, deck: Deck) -> EventBody:
    """Read the engine event carried by a `ServerMessage` (`event`, `hand_ended` or
    `game_over`); any other message is a `ProtocolViolation`."""
    body = msg.WhichOneof("body")
    if body == "hand_ended":
        return HandEndEvent(summary_from_proto(msg.hand_ended.summary, deck))
    if body == "game_over":
        return MatchEndEvent(result_from_proto(msg.game_over.outcome.result))
    if body != "event":
        raise ProtocolViolation(f"server message {body!r} does not carry a game event")
    event = msg.event
    which = event.WhichOneof("event")
    if which == "move":
        card = card_from_proto(event.move.card, deck) if event.move.HasField("card") else None
        return MoveEvent(_move_from_proto(event.move.move, deck), card)
    if which == "trick":
        return TrickEvent(event.trick.index, trick_from_proto(event.trick.trick, deck))
    if which == "envido":
        return EnvidoEvent(envido_from_proto(event.envido.outcome))
    if which == "game_end":
        return GameEndEvent(game_result_from_proto(event.game_end.result))
    if which == "flor":
        return FlorEvent(flor_from_proto(event.flor.outcome))
    if which == "duel_end":
        return DuelEndEvent(duel_summary_from_proto(event.duel_end.summary, deck))
    if which == "signal":
        s = event.signal
        return SignalEvent(s.seat, s.move, signal_from_proto(s.signal))
    raise ProtocolViolation("game event has no event set")


# Encoding caches -----------------------------------------------------------------------------
#
# The referee converts a view for every decision and every event for each seat that sees it,
# and a match shows the same values again and again: the same cards and legal actions, and
# every view of a hand repeats the hand's moves and tricks. Those values are frozen and
# hashable, so their encodings are kept, as bytes: the encoding of a message that holds just
# that value in its field (a `View` with one move in `moves`, a `GameEvent` without its
# address). Protobuf parses concatenated encodings as one message, appending to repeated
# fields and merging the rest, so one `MergeFromString` of the joined bytes fills every list
# of a view in one call, instead of one Python-built message per element. The caches
# themselves are `arena.rpc.wirecache` (compiled with `arena.rpc.encode`, their hot caller):
# emptied at `_CACHE_LIMIT` entries; only the encoding of the last hand summary is kept (the
# referee tells it to each seat in turn).
#
# The caches of values the engine hands out again and again as the same objects (a hand's
# cards, plays, moves and tricks are in every view of the hand, an event is told to each seat
# of its audience as one object, and the engine builds each legal action once per kind and
# card) are looked up by identity first (`wirecache.Shared`), then by value.

_CACHE_LIMIT = wirecache.CACHE_LIMIT

_T = TypeVar("_T")


def _encoder(encode: Callable[[_T], bytes]) -> wirecache.ByValue[_T]:
    """`encode`, remembered per value."""
    return wirecache.ByValue(encode)


def _shared_encoder(encode: Callable[[_T], bytes]) -> wirecache.Shared[_T]:
    """`encode`, remembered per object, then per value."""
    return wirecache.Shared(encode)


def _encoded(msg: Any) -> bytes:
    data: bytes = msg.SerializeToString()
    return data


@_shared_encoder
def _in_hand(card: Card) -> bytes:
    return _encoded(pb.View(hand=[card_to_proto(card)]))


@_shared_encoder
def _in_tricks(trick: Trick) -> bytes:
    return _encoded(pb.View(tricks=[trick_to_proto(trick)]))


@_shared_encoder
def _in_current_trick(play: Play) -> bytes:
    return _encoded(pb.View(current_trick=[_play_to_proto(play)]))


@_shared_encoder
def _in_plays(play: Play) -> bytes:
    return _encoded(pb.Trick(plays=[_play_to_proto(play)]))


@_shared_encoder
def _in_moves(move: Move) -> bytes:
    return _encoded(pb.View(moves=[_move_to_proto(move)]))


@_shared_encoder
def _in_legal_actions(action: Action) -> bytes:
    return _encoded(pb.View(legal_actions=[action_to_proto(action)]))


@_shared_encoder
def _in_decision_legal_actions(action: Action) -> bytes:
    return _encoded(pb.DecisionRequest(legal_actions=[action_to_proto(action)]))


@_shared_encoder
def _game_event(body: EventBody) -> bytes:
    return _encoded(_game_event_to_proto(body))


@wirecache.Last
def _hand_ended(summary: HandSummary) -> bytes:
    """The encoding of the `HandEnded` holding `summary` (the last one is kept)."""
    return _encoded(pb.HandEnded(summary=summary_to_proto(summary)))
