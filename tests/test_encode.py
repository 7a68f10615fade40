"""arena/rpc/encode.py: the decision and event messages written as bytes are exactly the bytes
of the protobuf messages `arena.rpc.convert` builds (issue 14: every message byte-identical),
for every variant, every seat, with signs, every kind of event; and a batch of them is the
`Batch` protobuf would write."""

from __future__ import annotations

import random

import pytest

from arena.rpc import convert, encode
from arena.rpc.server import RemoteSeatLink, _batch_message
from arena.rules import HandSummary, Match
from arena.rules.signals import IllegalSignalError, Signal, SignalKind
from arena.rules.variants import variant_names
from arena.rules.views import HandEndEvent
from arena.v1 import arena_pb2 as pb

SEEDS = range(6)


def _decision_by_protobuf(
    request_id: str, match_id: str, seat: int, view: object, deadline: int, left: int
) -> bytes:
    message = pb.ServerMessage()
    decision = message.decision
    decision.request_id = request_id
    decision.match_id = match_id
    decision.seat = seat
    convert.view_into(decision.view, view)  # type: ignore[arg-type]
    convert.legal_actions_into(decision, view.legal_actions)  # type: ignore[attr-defined]
    decision.deadline_unix_ms = deadline
    decision.time_left_ms = left
    return message.SerializeToString()


@pytest.mark.parametrize("variant", variant_names())
def test_every_decision_and_event_of_seeded_matches_is_byte_identical(variant: str) -> None:
    """Seeded random matches (with a sign now and then, where the variant allows them):
    every decision request to every seat and every event to every seat of its audience, as
    `encode` writes it, equals `SerializeToString()` of the message built field by field
    (request ids, match ids with non-ASCII, deadlines past 2**31 and time left of 0)."""
    decisions = events = signed = 0
    for seed in SEEDS:
        game = Match(variant, seed=seed)
        rng = random.Random(seed)
        match_id = f"t\u00f6rneo:{variant}:{seed}"
        while not game.is_over:
            seat = game.to_act
            assert seat is not None
            view = game.view(seat)
            rid = f"{rng.getrandbits(96):024x}"
            deadline, left = 1_764_633_600_000 + decisions, rng.choice([0, 1, 1000, 2**31 - 1])
            signed += bool(view.signals)
            expected = _decision_by_protobuf(rid, match_id, seat, view, deadline, left)
            written = encode.decision_message(
                encode.decision_address(match_id, seat), rid, view, view.legal_actions,
                deadline, left,
            )
            assert written == expected, (variant, seed, decisions)
            decisions += 1
            action = rng.choice(view.legal_actions)
            try:
                sign = None
                if rng.random() < 0.2:
                    sign = Signal(rng.choice(list(SignalKind)), text="se\u00f1a")
                applied = game.apply(action, sign) if sign else game.apply(action)
            except IllegalSignalError:
                applied = game.apply(action)
            for event in applied:
                for target in event.audience:
                    expected = convert.event_to_proto(
                        event.body, match_id=match_id, seat=target
                    ).SerializeToString()
                    written = encode.event_message(
                        encode.event_address(match_id, target), event.body, match_id, target
                    )
                    assert written == expected, (variant, seed, type(event.body).__name__)
                    events += 1
    assert decisions > 100
    assert events > decisions
    if game.num_seats >= 4 and game.num_teams == 2:  # partners: signs were seen
        assert signed > 0


def test_integers_of_every_size_and_sign_encode_as_protobuf_does() -> None:
    """Varints: zero left out, 1..2**63-1, and negative int32/int64 values (ten bytes), in
    plain and packed fields, as protobuf writes them."""
    for value in [1, 127, 128, 300, 2**31 - 1, -1, -2**31, 2**40, -(2**40), 2**63 - 1]:
        assert encode.int_field(6, value) == pb.DecisionRequest(
            deadline_unix_ms=value).SerializeToString()
    assert encode.int_field(6, 0) == b""
    for values in ([0, -1, 300, 2**31 - 1], [5], [-2**31]):
        view = pb.View(scores=values, team_of=values)
        assert encode._packed(4, values) + encode._packed(9, values) == view.SerializeToString()


def test_a_batch_of_bytes_and_messages_is_the_batch_protobuf_writes() -> None:
    """`encode.batch` packs messages given as bytes or as protobuf objects into the bytes
    of `ServerMessage(batch=Batch(messages=...))`; the route's serializer passes bytes on."""
    game = Match("argentine-2v2", seed=3)
    view = game.view(game.to_act or 0)
    decision = encode.decision_message(
        encode.decision_address("m", 1), "r1", view, view.legal_actions, 5, 7
    )
    error = pb.ServerMessage(error=pb.Error(code=pb.ERROR_CODE_TIMEOUT, message="late"))
    summary_less = pb.ServerMessage(welcome=pb.Welcome())
    items = [decision, error, summary_less, decision]
    expected = pb.ServerMessage(
        batch=pb.Batch(messages=[encode.parse(m) for m in items])
    ).SerializeToString()
    assert encode.batch(items) == expected
    assert _batch_message(items) == expected
    assert encode.serialize(decision) is decision
    assert encode.serialize(error) == error.SerializeToString()


def test_the_link_sends_bytes_a_bot_decodes_to_the_same_request() -> None:
    """The `RemoteSeatLink` hands the connection the bytes: decoded, they are the request
    (ids, seat, view, legal actions, deadline and time left) the referee asked."""
    from arena.referee import DecisionRequest

    game = Match("mineiro-2v2", seed=11)
    seat = game.to_act or 0
    view = game.view(seat)
    link = RemoteSeatLink(object(), "m:9", seat, "bot", reconnect=False)  # type: ignore[arg-type]
    data = link._decision(
        DecisionRequest("abc", "m:9", seat, view, view.legal_actions, 123, 456)
    )
    assert type(data) is bytes
    decoded = pb.ServerMessage.FromString(data).decision
    assert (decoded.request_id, decoded.match_id, decoded.seat) == ("abc", "m:9", seat)
    assert (decoded.deadline_unix_ms, decoded.time_left_ms) == (123, 456)
    assert decoded.view == convert.view_to_proto(view)
    assert len(decoded.legal_actions) == len(view.legal_actions)


def test_a_hand_summary_told_to_a_seat_is_its_hand_ended_message() -> None:
    """What the referee passes to `tell` at a hand's end (the `HandSummary`) reaches the
    connection as the bytes of the `hand_ended` message protobuf writes."""
    sent: list[object] = []

    class Conn:
        def send(self, message: object) -> None:
            sent.append(message)

    game = Match("argentine-1v1", seed=2)
    while not game.is_over:
        ended = [e for e in game.apply(game.view(game.to_act or 0).legal_actions[0])
                 if isinstance(e.body, HandEndEvent)]
        if ended:
            break
    summary = ended[0].body.summary
    assert isinstance(summary, HandSummary)
    link = RemoteSeatLink(Conn(), "m:3", 1, "bot", reconnect=False)  # type: ignore[arg-type]
    link.tell(summary)
    assert sent == [
        convert.event_to_proto(HandEndEvent(summary), match_id="m:3", seat=1).SerializeToString()
    ]
