"""The wire bytes of the messages sent at every decision, written directly.

A decision request and the events around it are most of what a referee sends. Building them as
protobuf objects, then copying those into a `Batch` on the gRPC thread, then serializing, cost
more per decision than the rules engine (issue 14's profile). Here they are written as bytes,
from the parts the encoding caches of `arena.rpc.convert` already hold (a card, a trick, a
move, a legal action, an event: encoded once, shared by every seat and every view that shows
them) and a few fields encoded by hand.

The bytes are exactly what ``SerializeToString()`` of the message `arena.rpc.convert` builds
gives (fields in field-number order, proto3's implicit presence: a zero, an empty string or an
empty list is left out, an ``optional`` field and a sub-message are written when set, repeated
scalars packed, negative integers as ten-byte varints): tests/test_encode.py checks it, message
for message, over seeded matches of every variant. A message the stream carries is either a
protobuf message or its bytes (`serialize`, `batch`); the bridge does not care which.

`make compile` compiles this module and its caches (`arena.rpc.wirecache`) with mypyc, in the
rules engine's group (tools/compile_rules.py); `arena.rpc.ENCODER` says whether a process
runs that build or these sources (`arena/rpc/_native.py` chooses; both write the same bytes).
Hence the typed module constants (`Final`: C statics when compiled) and plain loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from arena.rpc import convert, wirecache
from arena.rules import Action
from arena.rules.cards import Card
from arena.rules.signals import SeenSignal
from arena.rules.views import (
    Award,
    Duel,
    DuelSummary,
    EnvidoOutcome,
    FlorOutcome,
    HandEndEvent,
    HandSummary,
    MatchEndEvent,
    Move,
    MoveEvent,
    PendingCall,
    SeatView,
    Trick,
    TrickEvent,
)
from arena.v1 import arena_pb2 as pb

_VARINTS = [bytes([n]) for n in range(128)]


def varint(n: int) -> bytes:
    """`n` (an int32/int64 field's value) as a protobuf varint; negatives take ten bytes."""
    if 0 <= n < 128:
        return _VARINTS[n]
    if 0 < n < 16384:
        return bytes((n & 127 | 128, n >> 7))
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n > 127:
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def _keys(wire_type: int) -> list[bytes]:
    return [_key(field, wire_type) for field in range(64)]


_INT = _keys(0)  # the key of a varint field, by field number
_LEN = _keys(2)  # the key of a length-delimited field (string, bytes, message, packed)
_SMALL = [[b""] + [key + _VARINTS[n] for n in range(1, 128)] for key in _INT]
"""`int_field(field, n)` for 0 <= n < 128, by field and value."""


def string_field(field: int, text: str) -> bytes:
    """A string field (nothing when empty)."""
    if not text:
        return b""
    data = text.encode()
    return _LEN[field] + varint(len(data)) + data


def int_field(field: int, value: int) -> bytes:
    """An int32/int64/bool/enum field without explicit presence (nothing when zero)."""
    if 0 <= value < 128:
        return _SMALL[field][value]
    return _INT[field] + varint(value)


def message_field(field: int, data: bytes) -> bytes:
    """A sub-message field (written even when its encoding is empty: it is set)."""
    return _LEN[field] + varint(len(data)) + data


_packed_seen: dict[tuple[int, Sequence[int]], bytes] = {}


def _packed(field: int, values: Sequence[int]) -> bytes:
    """A packed repeated int32 field (nothing when empty); the few lists a match shows (the
    scores, the accounts of the seats) are remembered."""
    if not values:
        return b""
    if type(values) is not tuple:
        values = tuple(values)
    found = _packed_seen.get((field, values))
    if found is None:
        data = b"".join([varint(v) for v in values])
        found = _LEN[field] + varint(len(data)) + data
        if len(_packed_seen) >= 4096:
            _packed_seen.clear()
        _packed_seen[field, values] = found
    return found


def _optional(field: int, value: int | None) -> bytes:
    if value is None:
        return b""
    if 0 <= value < 128:
        return _INT[field] + _VARINTS[value]
    return _INT[field] + varint(value)


def _messages(field: int, messages: Iterable[Any]) -> bytes:
    return b"".join([message_field(field, m.SerializeToString()) for m in messages])


def _rare(field: int, message: Any) -> bytes:
    return b"" if message is None else message_field(field, message.SerializeToString())


_variant_names: dict[str, bytes] = {}

# The encoding caches of convert (arena.rpc.wirecache), bound once: compiled, a hit is then a
# native call.
_IN_HAND: Final = convert._in_hand
_IN_CURRENT_TRICK: Final = convert._in_current_trick
_IN_MOVES: Final = convert._in_moves
_IN_LEGAL_ACTIONS: Final = convert._in_legal_actions
_IN_DECISION_LEGAL_ACTIONS: Final = convert._in_decision_legal_actions
_GAME_EVENT: Final = convert._game_event


# The view's rarer fields, encoded with their key: a pending call, a settled envido or the
# hand's awards repeat in every view until the hand ends, the engine handing out the same
# objects, so each is built as protobuf once (then found by identity, else by value).
def _partner_cards(pairs: tuple[tuple[int, tuple[Card, ...]], ...]) -> bytes:
    return _messages(14, convert._seat_cards_to_proto(pairs))


def _pending(pending: PendingCall) -> bytes:
    return _rare(19, convert._pending_to_proto(pending))


def _envido(outcome: EnvidoOutcome) -> bytes:
    return _rare(20, convert.envido_to_proto(outcome))


def _awards(awards: tuple[Award, ...]) -> bytes:
    return _messages(24, map(convert.award_to_proto, awards))


def _discard(card: Card) -> bytes:
    return _rare(30, convert.card_to_proto(card))


def _flor(outcomes: tuple[FlorOutcome, ...]) -> bytes:
    return _messages(31, map(convert.flor_to_proto, outcomes))


def _duel(duel: Duel) -> bytes:
    return _rare(32, convert.duel_to_proto(duel))


def _duels(summaries: tuple[DuelSummary, ...]) -> bytes:
    return _messages(33, map(convert.duel_summary_to_proto, summaries))


def _signals(seen: tuple[SeenSignal, ...]) -> bytes:
    return _messages(34, map(convert._seen_to_proto, seen))


# The pieces of the commonest events and of a view's tricks, written from smaller cached
# pieces: a trick is new at every play (its plays are not), a move event is told once per
# seat of its audience (its move and card are the engine's own objects, seen before).
def _card_bytes(card: Card) -> bytes:
    return convert._encoded(convert.card_to_proto(card))


def _move_bytes(move: Move) -> bytes:
    return convert._encoded(convert._move_to_proto(move))


def _trick_bytes(trick: Trick) -> bytes:
    """The encoding of `convert.trick_to_proto(trick)`."""
    parts = [int_field(1, trick.leader)]
    for play in trick.plays:  # 2, each with its key
        parts.append(_IN_PLAYS.get(play))
    parts.append(_optional(3, trick.winner))
    parts.append(_optional(4, trick.winner_team))
    return b"".join(parts)


def _in_view_tricks(trick: Trick) -> bytes:
    return message_field(15, _TRICK.get(trick))


def _award_bytes(award: Award) -> bytes:
    return convert._encoded(convert.award_to_proto(award))


def _hand_ended_bytes(summary: HandSummary) -> bytes:
    """The encoding of the `HandEnded` holding `summary`, without its address (match_id,
    seat): `convert._hand_ended`, written from the cached tricks and awards."""
    parts = [
        int_field(1, summary.game_number),
        int_field(2, summary.hand_number),
        int_field(3, summary.dealer),
        int_field(4, summary.mano),
    ]
    for trick in summary.tricks:  # 5
        parts.append(message_field(5, _TRICK.get(trick)))
    parts.append(_optional(6, summary.winner_team))
    for award in summary.awards:  # 7
        parts.append(message_field(7, _AWARD.get(award)))
    if summary.revealed:
        parts.append(_messages(8, convert._seat_cards_to_proto(summary.revealed)))
    parts.append(_packed(9, summary.scores))
    parts.append(string_field(10, summary.ended_by))
    if summary.flor_revealed:
        parts.append(_messages(11, convert._seat_cards_to_proto(summary.flor_revealed)))
    if summary.duels:
        parts.append(_messages(12, map(convert.duel_summary_to_proto, summary.duels)))
    parts.append(_optional(13, summary.gallo))
    return message_field(3, b"".join(parts))  # HandEnded.summary = 3


_IN_PLAYS: Final = convert._in_plays
_AWARD: Final = wirecache.Shared(_award_bytes)
_SUMMARY: Final = wirecache.Last(_hand_ended_bytes)
_CARD: Final = wirecache.Shared(_card_bytes)
_MOVE: Final = wirecache.Shared(_move_bytes)
_TRICK: Final = wirecache.ById(_trick_bytes)  # its plays are cached: no hashing a trick
_IN_VIEW_TRICKS: Final = wirecache.ById(_in_view_tricks)
_PARTNER_CARDS: Final = wirecache.Shared(_partner_cards)
_PENDING: Final = wirecache.Shared(_pending)
_ENVIDO: Final = wirecache.Shared(_envido)
_AWARDS: Final = wirecache.Shared(_awards)
_DISCARD: Final = wirecache.Shared(_discard)
_FLOR: Final = wirecache.Shared(_flor)
_DUEL: Final = wirecache.Shared(_duel)
_DUELS: Final = wirecache.Shared(_duels)
_SIGNALS: Final = wirecache.Shared(_signals)


def view_bytes(view: SeatView) -> bytes:
    """The encoding of `convert.view_to_proto(view)`."""
    variant = _variant_names.get(view.variant)
    if variant is None:
        variant = _variant_names[view.variant] = string_field(1, view.variant)
    parts = [
        variant,
        int_field(2, view.seat),
        int_field(3, view.team),
        _packed(4, view.team_of),
        int_field(5, view.game_number),
        int_field(6, view.hand_number),
        int_field(7, view.dealer),
        int_field(8, view.mano),
        _packed(9, view.scores),
        _packed(10, view.games_won),
        int_field(11, view.target),
    ]
    for card in view.hand:  # field 12, each card with its key
        parts.append(_IN_HAND.get(card))
    parts.append(int_field(13, view.hand_size))
    if view.partner_cards:
        parts.append(_PARTNER_CARDS.get(view.partner_cards))
    for trick in view.tricks:  # 15
        parts.append(_IN_VIEW_TRICKS.get(trick))
    for play in view.current_trick:  # 16
        parts.append(_IN_CURRENT_TRICK.get(play))
    for move in view.moves:  # 17
        parts.append(_IN_MOVES.get(move))
    parts.append(int_field(18, view.hand_value))
    if view.pending is not None:
        parts.append(_PENDING.get(view.pending))
    if view.envido is not None:
        parts.append(_ENVIDO.get(view.envido))
    parts.append(_packed(21, view.folded))
    parts.append(_optional(22, view.hand_of_ten))
    parts.append(int_field(23, int(view.iron_hand)))
    if view.awards:
        parts.append(_AWARDS.get(view.awards))
    parts.append(_optional(25, view.to_act))
    for action in view.legal_actions:  # 26
        parts.append(_IN_LEGAL_ACTIONS.get(action))
    parts.append(int_field(27, view.side))
    parts.append(_packed(28, view.side_of))
    parts.append(_optional(29, view.gallo))
    if view.discard is not None:
        parts.append(_DISCARD.get(view.discard))
    if view.flor:
        parts.append(_FLOR.get(view.flor))
    if view.duel is not None:
        parts.append(_DUEL.get(view.duel))
    if view.duels:
        parts.append(_DUELS.get(view.duels))
    if view.signals:
        parts.append(_SIGNALS.get(view.signals))
    return b"".join(parts)


def decision_address(match_id: str, seat: int) -> bytes:
    """Fields 2 and 3 of a `DecisionRequest` (match_id, seat): the same for every request to
    a seat, so a link encodes them once."""
    return string_field(2, match_id) + int_field(3, seat)


def event_address(match_id: str, seat: int) -> bytes:
    """Fields 1 and 2 of a `GameEvent` or `HandEnded` (match_id, seat), likewise."""
    return string_field(1, match_id) + int_field(2, seat)


def decision_message(
    address: bytes,
    request_id: str,
    view: SeatView,
    legal_actions: Iterable[Action],
    deadline_unix_ms: int,
    time_left_ms: int,
) -> bytes:
    """A `ServerMessage` holding the `DecisionRequest`; `address` from `decision_address`."""
    parts = [string_field(1, request_id), address, message_field(4, view_bytes(view))]
    for action in legal_actions:  # 5
        parts.append(_IN_DECISION_LEGAL_ACTIONS.get(action))
    parts.append(int_field(6, deadline_unix_ms))
    parts.append(int_field(7, time_left_ms))
    body = b"".join(parts)
    return _LEN[3] + varint(len(body)) + body


def event_message(address: bytes, body: Any, match_id: str, seat: int) -> bytes:
    """A `ServerMessage` telling a seat about an engine event (`convert.event_to_proto`);
    `address` from `event_address(match_id, seat)`."""
    if isinstance(body, HandEndEvent):
        data = address + _SUMMARY.get(body.summary)
        return _LEN[5] + varint(len(data)) + data
    if isinstance(body, MatchEndEvent):  # once a match: the message as convert builds it
        return serialize(convert.event_to_proto(body, match_id=match_id, seat=seat))
    if isinstance(body, MoveEvent):  # GameEvent.move = 3: MoveEvent {move = 1, card = 2}
        event = message_field(1, _MOVE.get(body.move))
        if body.card is not None:
            event += message_field(2, _CARD.get(body.card))
        data = address + message_field(3, event)
    elif isinstance(body, TrickEvent):  # GameEvent.trick = 4: TrickEvent {index, trick}
        event = int_field(1, body.index) + message_field(2, _TRICK.get(body.trick))
        data = address + message_field(4, event)
    else:
        data = address + _GAME_EVENT.get(body)
    return _LEN[4] + varint(len(data)) + data


def serialize(message: Any) -> bytes:
    """A `ServerMessage` (or its bytes already) as bytes: the route's response serializer."""
    if type(message) is bytes:
        return message
    data: bytes = message.SerializeToString()
    return data


_BATCH_ITEM = _LEN[1]  # Batch.messages = 1


def batch(messages: list[Any]) -> bytes:
    """Several server messages (protobuf messages or their bytes) as one `ServerMessage`
    holding a `Batch`, for bots whose hello set accepts_batches."""
    parts = []
    for message in messages:
        data = message if type(message) is bytes else message.SerializeToString()
        parts += [_BATCH_ITEM, varint(len(data)), data]
    body = b"".join(parts)
    return _LEN[8] + varint(len(body)) + body


def parse(message: Any) -> Any:
    """A `ServerMessage` from either form (for tests and tools that look inside)."""
    if type(message) is bytes:
        return pb.ServerMessage.FromString(message)
    return message
