"""arena.rpc.convert: engine values survive a trip over the wire; bad wire input is refused."""

from __future__ import annotations

import random
from typing import Any, TypeVar

import pytest

from arena.errors import ProtocolViolation
from arena.rpc import convert
from arena.rules import Match, variant_names
from arena.rules.actions import Action, ActionKind, call, play
from arena.rules.cards import Card, Deck, Suit, full_deck, parse_card, parse_cards
from arena.rules.variants import Options, find_variant
from arena.rules.views import (
    Award,
    AwardReason,
    EnvidoEvent,
    EnvidoOutcome,
    EventBody,
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
from arena.v1 import arena_pb2 as pb

M = TypeVar("M")

S = Deck.SPANISH
B = Deck.BRAZILIAN


def wire(msg: M) -> M:
    """The message as the other side sees it: serialized to bytes and parsed back."""
    parsed: M = type(msg).FromString(msg.SerializeToString())  # type: ignore[attr-defined]
    return parsed


def c(text: str, deck: Deck = S) -> Card:
    return parse_card(text, deck)


def every_action(deck: Deck) -> list[Action]:
    """One action of every kind: card kinds with a card of `deck`, the face-down play with a
    slot, everything else bare."""
    card = full_deck(deck)[7]
    actions: list[Action] = []
    for kind in ActionKind:
        if kind in (ActionKind.PLAY, ActionKind.DISCARD):
            actions.append(Action(kind, card=card))
        elif kind is ActionKind.PLAY_FACE_DOWN:
            actions.extend([Action(kind, slot=0), Action(kind, slot=2)])
        else:
            actions.append(call(kind))
    return actions


SPANISH_ENVIDO = EnvidoOutcome(
    accepted=True,
    chain=(ActionKind.ENVIDO, ActionKind.REAL_ENVIDO),
    announcements=((1, 27), (2, None), (3, 31), (0, None)),
    winner=3,
    team=1,
    points=5,
)

SPANISH_VIEW = SeatView(
    variant="argentine-2v2",
    seat=1,
    team=1,
    team_of=(0, 1, 0, 1),
    game_number=1,
    hand_number=7,
    dealer=0,
    mano=1,
    scores=(12, 17),
    games_won=(0, 1),
    target=30,
    hand=parse_cards("12b 3o", S),
    hand_size=2,
    partner_cards=(),
    tricks=(
        Trick(
            leader=1,
            plays=(Play(1, c("1e")), Play(2, c("4o")), Play(3, c("5c")), Play(0, c("7e"))),
            winner=1,
            winner_team=1,
        ),
        Trick(
            leader=1,
            plays=(Play(1, c("3e")), Play(2, c("3b")), Play(3, c("6c")), Play(0, c("4c"))),
            winner=None,
            winner_team=None,
        ),
    ),
    current_trick=(Play(1, c("2e")), Play(2, c("1c"))),
    moves=(
        Move(1, call(ActionKind.ENVIDO)),
        Move(2, call(ActionKind.REAL_ENVIDO)),
        Move(3, call(ActionKind.QUIERO)),
        Move(1, play(c("1e"))),
        Move(2, call(ActionKind.FOLD)),
        Move(3, call(ActionKind.TRUCO)),
        Move(0, call(ActionKind.QUIERO)),
    ),
    hand_value=2,
    pending=PendingCall(ActionKind.RETRUCO, caller=0, responder=1),
    envido=SPANISH_ENVIDO,
    folded=(2,),
    hand_of_ten=None,
    iron_hand=False,
    awards=(Award(1, 5, AwardReason.ENVIDO),),
    to_act=1,
    legal_actions=(call(ActionKind.QUIERO), call(ActionKind.NO_QUIERO)),
)

MINEIRO_VIEW = SeatView(
    variant="mineiro-2v2",
    seat=0,
    team=0,
    team_of=(0, 1, 0, 1),
    game_number=0,
    hand_number=0,
    dealer=3,
    mano=0,
    scores=(10, 4),
    games_won=(0, 0),
    target=12,
    hand=parse_cards("4c 7h As", B),
    hand_size=3,
    partner_cards=((2, parse_cards("Kd Qs 2h", B)),),
    tricks=(),
    current_trick=(),
    moves=(),
    hand_value=2,
    pending=PendingCall(ActionKind.PLAY_HAND, caller=0, responder=0),
    envido=None,
    folded=(),
    hand_of_ten=0,
    iron_hand=False,
    awards=(),
    to_act=0,
    legal_actions=(call(ActionKind.PLAY_HAND), call(ActionKind.DECLINE_HAND)),
)

BLIND_IRON_VIEW = SeatView(
    variant="mineiro-1v1",
    seat=1,
    team=1,
    team_of=(0, 1),
    game_number=0,
    hand_number=9,
    dealer=1,
    mano=0,
    scores=(11, 10),
    games_won=(0, 0),
    target=12,
    hand=(),
    hand_size=2,
    partner_cards=(),
    tricks=(),
    current_trick=(Play(0, c("Jd", B)),),
    moves=(Move(0, Action(ActionKind.PLAY_FACE_DOWN, slot=0)),),
    hand_value=2,
    pending=None,
    envido=None,
    folded=(),
    hand_of_ten=None,
    iron_hand=True,
    awards=(),
    to_act=None,
    legal_actions=(),
)

SUMMARY = HandSummary(
    game_number=1,
    hand_number=7,
    dealer=0,
    mano=1,
    tricks=SPANISH_VIEW.tricks,
    winner_team=None,
    awards=(Award(1, 5, AwardReason.ENVIDO), Award(0, 2, AwardReason.TRUCO_REJECTED)),
    revealed=((3, parse_cards("7c 4c", S)),),
    scores=(14, 22),
    ended_by="rejected",
)

MATCH_RESULT = MatchResult(
    winner_team=1,
    games=(GameResult(0, 1, (21, 30)), GameResult(1, 0, (30, 8)), GameResult(2, 1, (29, 30))),
    games_won=(1, 2),
    points=(80, 68),
)


@pytest.mark.parametrize("deck", [S, B])
def test_every_card_round_trips(deck: Deck) -> None:
    """All 40 cards of each deck come back equal, with the deck's notation in `text`."""
    for card in full_deck(deck):
        msg = wire(convert.card_to_proto(card))
        assert msg.text == str(card)
        assert convert.card_from_proto(msg, deck) == card


def test_suits_on_the_wire_are_named_like_the_engines() -> None:
    """The wire suit of a card is the engine suit of the same name (SWORDS -> SUIT_SWORDS)."""
    for suit in Suit:
        msg = convert.card_to_proto(Card(S, suit, 1))
        assert pb.Suit.Name(msg.suit) == f"SUIT_{suit.name}"


@pytest.mark.parametrize("deck", [S, B])
def test_every_action_kind_round_trips(deck: Deck) -> None:
    """Each ActionKind (with its card or slot where it has one) comes back equal, and its wire
    number is the engine's number."""
    for action in every_action(deck):
        msg = wire(convert.action_to_proto(action))
        assert msg.kind == int(action.kind)
        assert convert.action_from_proto(msg, deck) == action


def test_card_may_be_sent_as_text_alone() -> None:
    """A bot may name a card by notation only; it is read in the match's deck."""
    assert convert.card_from_proto(pb.Card(text="7o"), S) == c("7o")
    assert convert.card_from_proto(pb.Card(text="Kh"), B) == c("Kh", B)
    msg = pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(text="1e"))
    assert convert.action_from_proto(msg, S) == play(c("1e"))


@pytest.mark.parametrize(
    ("card", "deck", "match"),
    [
        (pb.Card(), S, "card is empty"),
        (pb.Card(suit=pb.SUIT_SWORDS, rank=8), S, "rank 8 is not in a 40-card deck"),
        (pb.Card(suit=pb.SUIT_SWORDS, rank=0), S, "rank 0"),
        (pb.Card(suit=pb.SUIT_UNSPECIFIED, rank=1), S, "suit 0 is not a suit"),
        (pb.Card(suit=9, rank=1), S, "suit 9 is not a suit"),
        (pb.Card(suit=pb.SUIT_SWORDS, rank=1, text="7o"), S, "does not match"),
        (pb.Card(text="1x"), S, "suit 'x' is not one of e, b, o, c"),
        (pb.Card(text="1e"), B, "brazilian deck"),
        (pb.Card(text="8c"), B, "rank '8'"),
    ],
)
def test_bad_cards_are_protocol_violations(card: Any, deck: Deck, match: str) -> None:
    """An empty, out-of-range, unknown-suit, self-contradicting or unreadable card is refused
    with a message that names the problem."""
    with pytest.raises(ProtocolViolation, match=match):
        convert.card_from_proto(card, deck)


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (pb.Action(), "kind is unset"),
        (pb.Action(kind=99), "unknown action kind 99"),
        (pb.Action(kind=pb.ACTION_KIND_PLAY), "PLAY needs a card"),
        (
            pb.Action(kind=pb.ACTION_KIND_TRUCO, card=pb.Card(text="1e")),
            "TRUCO takes no card",
        ),
        (pb.Action(kind=pb.ACTION_KIND_PLAY_FACE_DOWN), "PLAY_FACE_DOWN needs a slot"),
        (
            pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(text="1e"), slot=0),
            "PLAY takes no slot",
        ),
        (
            pb.Action(kind=pb.ACTION_KIND_PLAY, card=pb.Card(suit=pb.SUIT_CUPS, rank=9)),
            "rank 9",
        ),
    ],
)
def test_bad_actions_are_protocol_violations(action: Any, match: str) -> None:
    """An action without a kind, of an unknown kind, or missing / carrying a card or slot
    against its kind, is refused with a message that says what to set."""
    with pytest.raises(ProtocolViolation, match=match):
        convert.action_from_proto(wire(action), S)


@pytest.mark.parametrize(
    ("view", "deck"),
    [(SPANISH_VIEW, S), (MINEIRO_VIEW, B), (BLIND_IRON_VIEW, B)],
    ids=["argentine-2v2-mid-hand", "mineiro-hand-of-ten", "mineiro-blind-iron-hand"],
)
def test_seat_view_round_trips(view: SeatView, deck: Deck) -> None:
    """A full SeatView (tricks with a parda, a trick in progress, moves, a pending call, an
    envido with son-buenas announcements, awards, partner cards, legal actions, or an empty
    blind hand) comes back equal."""
    msg = wire(convert.view_to_proto(view))
    assert convert.view_from_proto(msg, deck) == view


def test_none_and_zero_stay_apart_on_the_wire() -> None:
    """Optional fields keep "none" distinct from seat/team/value 0: a parda has no winner, seat
    0 can win a trick or be to act, a son-buenas announcement has no value."""
    won_by_zero = Trick(
        leader=0, plays=(Play(0, c("1e")), Play(1, c("4o"))), winner=0, winner_team=0
    )
    parda = Trick(leader=0, plays=(Play(0, c("3e")), Play(1, c("3o"))))
    for trick in (won_by_zero, parda):
        assert convert.trick_from_proto(wire(convert.trick_to_proto(trick)), S) == trick
    msg = wire(convert.view_to_proto(SPANISH_VIEW))
    assert msg.envido.announcements[1].HasField("value") is False
    assert wire(convert.view_to_proto(MINEIRO_VIEW)).HasField("to_act")
    assert not wire(convert.view_to_proto(BLIND_IRON_VIEW)).HasField("to_act")
    assert not wire(convert.view_to_proto(BLIND_IRON_VIEW)).HasField("pending")


def test_envido_outcome_round_trips() -> None:
    """An accepted envido and a rejected one (no announcements, no winner) come back equal."""
    rejected = EnvidoOutcome(False, (ActionKind.FALTA_ENVIDO,), (), None, 0, 1)
    for outcome in (SPANISH_ENVIDO, rejected):
        assert convert.envido_from_proto(wire(convert.envido_to_proto(outcome))) == outcome


def test_hand_summary_round_trips() -> None:
    """A HandSummary with tricks, several awards, revealed cards and no trick winner comes
    back equal."""
    msg = wire(convert.summary_to_proto(SUMMARY))
    assert convert.summary_from_proto(msg, S) == SUMMARY


def test_award_reasons_round_trip_and_unknown_is_refused() -> None:
    """Every AwardReason survives the wire with its own number; an unknown number is refused."""
    for reason in AwardReason:
        award = Award(team=1, points=3, reason=reason)
        msg = wire(convert.award_to_proto(award))
        assert msg.reason == int(reason)
        assert convert.award_from_proto(msg) == award
    with pytest.raises(ProtocolViolation, match="unknown award reason 77"):
        convert.award_from_proto(pb.Award(team=0, points=1, reason=77))


def test_results_round_trip() -> None:
    """A MatchResult with its games, and a single GameResult, come back equal."""
    assert convert.result_from_proto(wire(convert.result_to_proto(MATCH_RESULT))) == MATCH_RESULT
    game = MATCH_RESULT.games[0]
    assert convert.game_result_from_proto(wire(convert.game_result_to_proto(game))) == game


@pytest.mark.parametrize(
    ("variant", "given"),
    [
        ("argentine-1v1", {}),
        ("argentine-2v2", {"target": 15, "chicos": 1}),
        ("mineiro-2v2", {"blind_iron_hand": True, "all_tied": "nobody"}),
    ],
)
def test_options_round_trip(variant: str, given: dict[str, Any]) -> None:
    """Resolved options of each family come back equal."""
    options = find_variant(variant).options(given)
    assert convert.options_from_proto(wire(convert.options_to_proto(options))) == options
    assert convert.options_from_proto(convert.options_to_proto(Options())) == Options()


EVENTS: list[tuple[EventBody, Deck, str]] = [
    (MoveEvent(Move(2, call(ActionKind.ENVIDO))), S, "event"),
    (MoveEvent(Move(1, play(c("1e")))), S, "event"),
    (MoveEvent(Move(0, Action(ActionKind.PLAY_FACE_DOWN, slot=1)), c("Ks", B)), B, "event"),
    (TrickEvent(1, SPANISH_VIEW.tricks[1]), S, "event"),
    (EnvidoEvent(SPANISH_ENVIDO), S, "event"),
    (GameEndEvent(MATCH_RESULT.games[1]), S, "event"),
    (HandEndEvent(SUMMARY), S, "hand_ended"),
    (MatchEndEvent(MATCH_RESULT), S, "game_over"),
]


@pytest.mark.parametrize(("body", "deck", "envelope"), EVENTS)
def test_every_event_body_round_trips(body: EventBody, deck: Deck, envelope: str) -> None:
    """Each engine event body becomes the right ServerMessage (event / hand_ended / game_over)
    addressed to the match and seat, and reads back equal."""
    msg = wire(convert.event_to_proto(body, match_id="m-7", seat=3))
    assert msg.WhichOneof("body") == envelope
    addressed = getattr(msg, envelope)
    assert (addressed.match_id, addressed.seat) == ("m-7", 3)
    assert convert.event_from_proto(msg, deck) == body


def test_match_end_is_a_normal_game_over() -> None:
    """A MatchEndEvent is told as GameOver with TERMINATION_NORMAL and the winning team."""
    msg = convert.event_to_proto(MatchEndEvent(MATCH_RESULT), match_id="m", seat=0)
    outcome = msg.game_over.outcome
    assert outcome.termination == pb.TERMINATION_NORMAL
    assert outcome.HasField("winner_team")
    assert outcome.winner_team == 1
    assert not outcome.HasField("faulty_seat")


def test_non_event_messages_are_refused() -> None:
    """event_from_proto refuses a ServerMessage that carries no event, and an empty GameEvent."""
    with pytest.raises(ProtocolViolation, match="'welcome' does not carry a game event"):
        convert.event_from_proto(pb.ServerMessage(welcome=pb.Welcome()), S)
    with pytest.raises(ProtocolViolation, match="no event set"):
        convert.event_from_proto(pb.ServerMessage(event=pb.GameEvent(match_id="m")), S)


def test_deck_of_variant() -> None:
    """argentine-* variants play the Spanish deck, mineiro-* the Brazilian one (also for names
    this engine does not know yet); anything else is refused."""
    assert convert.deck_of("argentine-1v1") is S
    assert convert.deck_of("mineiro-2v2") is B
    assert convert.deck_of("argentine-gallo") is S
    with pytest.raises(ProtocolViolation, match="unknown variant 'poker'"):
        convert.deck_of("poker")




def test_gallo_view_with_discard_and_sides_round_trips() -> None:
    """The complete-Argentine view fields (side, side_of, gallo, the gallo's own discard, flor
    outcomes) survive the wire."""
    from arena.rules import Match

    match = Match("argentine-gallo", {"flor": True}, seed=5)
    gallo_seat = match.to_act
    assert gallo_seat is not None
    match.apply(match.legal_actions()[0])  # the gallo discards
    views = [match.view(s) for s in range(3)]
    assert views[gallo_seat].discard is not None
    for view in views:
        assert view.gallo == gallo_seat
        assert convert.view_from_proto(convert.view_to_proto(view), Deck.SPANISH) == view
    others = [v for s, v in enumerate(views) if s != gallo_seat]
    # Other seats see a DISCARD move without its card; it still reads back.
    assert all(v.moves[0].action.card is None and v.discard is None for v in others)


def test_pico_a_pico_view_and_summary_round_trip() -> None:
    """Duel, finished duels and the hand summary of a pico a pico hand survive the wire."""
    from arena.rules import Match
    from arena.rules.views import HandEndEvent

    match = Match("argentine-3v3", seed=2)
    summaries = []
    checked = 0
    while not match.is_over and len(summaries) < 2:
        seat = match.to_act
        assert seat is not None
        view = match.view(seat)
        if view.duel is not None:
            assert convert.view_from_proto(convert.view_to_proto(view), Deck.SPANISH) == view
            checked += 1
        for event in match.apply(match.legal_actions()[-1 if view.duel else 0]):
            if isinstance(event.body, HandEndEvent):
                summaries.append(event.body.summary)
    assert checked > 0
    duel_summary = next(s for s in summaries if s.duels)
    wire = convert.summary_to_proto(duel_summary)
    assert convert.summary_from_proto(wire, Deck.SPANISH) == duel_summary


def test_signals_round_trip_and_unknown_kind_is_refused() -> None:
    """Signals (kind, text, envido value) round-trip; an unknown kind is a ProtocolViolation."""
    from arena.rpc.convert import signal_from_proto, signal_to_proto
    from arena.rules.signals import Signal, SignalKind

    for signal in (
        Signal(SignalKind.ENVIDO, value=0),
        Signal(SignalKind.ENVIDO, "tengo", 33),
        Signal(SignalKind.TEXT, "vamos"),
        Signal(SignalKind.NADA),
    ):
        assert signal_from_proto(signal_to_proto(signal)) == signal
    with pytest.raises(ProtocolViolation, match="signal kind 42"):
        signal_from_proto(pb.Signal(kind=42))


@pytest.mark.parametrize("variant", variant_names())
def test_every_view_and_event_of_random_matches_round_trips(variant: str) -> None:
    """Over random matches of each variant (where the encoding caches meet the same cards,
    moves and tricks again and again), every view, event and hand summary a seat is told
    comes back equal from the wire, and a repeated conversion gives the same message."""
    rng = random.Random(variant)
    deck = find_variant(variant).deck
    for seed in range(3):
        game = Match(variant, seed=seed)
        while not game.is_over:
            seat = game.to_act
            assert seat is not None
            view = game.view(seat)
            msg = convert.view_to_proto(view)
            assert convert.view_from_proto(wire(msg), deck) == view
            assert convert.view_to_proto(view) == msg
            for event in game.apply(rng.choice(view.legal_actions)):
                for target in sorted(event.audience):
                    told = convert.event_to_proto(event.body, match_id="m", seat=target)
                    assert convert.event_from_proto(wire(told), deck) == event.body
