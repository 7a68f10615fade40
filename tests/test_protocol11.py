"""Protocol 1.1 over a real gRPC server on 127.0.0.1, with clients that use the generated stubs
only (no SDK): a sign travels with its action, every strike is told with an `Error`, a 1.0
hello is still admitted, the choice that wins when a reply carries both, reflection v1. The
client is test_rpc_server's `Client`: generated stubs, no SDK."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import grpc
import trio
from grpc_reflection.v1alpha import reflection_pb2
from test_rpc_server import Client, run  # one raw stub client for the rpc tests

from arena.referee import (
    Answer,
    DecisionRequest,
    FaultPolicy,
    MatchStart,
    TimeControl,
    run_match,
)
from arena.referee.local import LocalLink, first_legal
from arena.rpc.server import Hub
from arena.rules import Match
from arena.rules.signals import Signal, SignalKind
from arena.v1 import arena_pb2 as pb


def old_hello(token: str) -> pb.BotMessage:
    """A hello as a protocol 1.0 bot writes it: no protocol_minor."""
    return pb.BotMessage(hello=pb.Hello(bot_name="raw", token=token, protocol_version=1))


def test_a_sign_and_its_action_share_one_reply() -> None:
    """`ActionReply.signal` is no longer in `oneof choice`: setting the action after the sign
    (as the SDK does) keeps both, and both survive the wire (field 6 kept its number)."""
    reply = pb.ActionReply(request_id="r")
    reply.signal.kind = pb.SIGNAL_KIND_TRES
    reply.action_index = 2
    parsed = pb.ActionReply.FromString(reply.SerializeToString())
    assert parsed.HasField("signal")
    assert parsed.signal.kind == pb.SIGNAL_KIND_TRES
    assert parsed.WhichOneof("choice") == "action_index"
    assert parsed.action_index == 2
    assert pb.ActionReply.DESCRIPTOR.fields_by_name["signal"].number == 6


def test_a_1_0_hello_is_admitted_and_the_welcome_says_1_1() -> None:
    """A bot that says hello as in protocol 1.0 (no protocol_minor) is admitted; the welcome
    announces protocol 1, minor 1."""

    async def test(hub: Hub, port: int) -> None:
        hub.admit("tok", "raw")
        client = Client(port)
        client.send(old_hello("tok"))
        first = await client.receive()
        assert first.WhichOneof("body") == "welcome", first
        assert (first.welcome.protocol_version, first.welcome.protocol_minor) == (1, 1)
        client.close()

    run(test)


def test_when_a_reply_carries_both_choices_the_last_on_the_wire_wins() -> None:
    """A hand-written encoder may put both `action` and `action_index` in one reply. The oneof
    keeps the one that comes LAST in the bytes (documented in arena.proto): an action spelled
    out then index 0 is read as index 0; index 0 then an action is read as that action."""

    async def test(hub: Hub, port: int) -> None:
        hub.admit("tok", "raw")
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

        def outgoing() -> Iterator[bytes]:
            while (raw := outbox.get()) is not None:
                yield raw

        play = channel.stream_stream(
            "/arena.v1.Referee/Play",
            request_serializer=lambda raw: raw,
            response_deserializer=pb.ServerMessage.FromString,
        )
        responses: Any = play(outgoing())
        outbox.put(old_hello("tok").SerializeToString())
        conn = await hub.connection_for("tok")
        game = Match("argentine-1v1", seed=3)
        seat = game.to_act
        assert seat is not None
        view = game.view(seat)
        link = conn.link("m", seat, "raw")
        await link.start(MatchStart(
            "m", "argentine-1v1", game.options, seat, game.team_of[seat], ("a", "b"),
            game.team_of, TimeControl(),
        ))
        answers: list[Answer] = []
        for rid, index_last in (("r1", True), ("r2", False)):
            request = DecisionRequest(rid, "m", seat, view, view.legal_actions, 0, 10_000)

            async def ask(request: DecisionRequest = request) -> None:
                answers.append(await link.ask(request))

            def answer(rid: str = rid, index_last: bool = index_last) -> None:
                while (message := next(responses)).WhichOneof("body") != "decision":
                    pass
                d = message.decision
                assert d.request_id == rid
                head = pb.ActionReply(request_id=rid, match_id="m", seat=seat)
                spelled = pb.ActionReply(action=d.legal_actions[-1]).SerializeToString()
                index = pb.ActionReply(action_index=0).SerializeToString()
                raw = head.SerializeToString() + (
                    spelled + index if index_last else index + spelled
                )
                # BotMessage.action is field 2, length-delimited: tag 0x12, then the length.
                outbox.put(b"\x12" + _varint(len(raw)) + raw)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask)
                with trio.fail_after(30):
                    await trio.to_thread.run_sync(answer)
        outbox.put(None)
        channel.close()
        assert answers == [
            Answer(action_index=0),
            Answer(action=view.legal_actions[-1]),
        ]

    run(test)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_every_strike_is_told_with_its_count() -> None:
    """A raw client answers its first decision with an index out of range, then stays silent
    on the second: it receives ERROR_CODE_ILLEGAL_ACTION (request id, detail, strikes 1 of 2),
    then ERROR_CODE_TIMEOUT (strikes 2 of 2), then the game over for the timeout."""

    async def test(hub: Hub, port: int) -> None:
        hub.admit("tok", "raw")
        client = Client(port)
        client.send(old_hello("tok"))
        assert (await client.receive()).WhichOneof("body") == "welcome"
        conn = await hub.connection_for("tok")
        game = Match("argentine-1v1", {"target": 15, "chicos": 1}, 5)
        links: list[Any] = [conn.link("m", 0, "raw"), LocalLink("other", first_legal)]
        requests: list[str] = []
        errors: list[pb.Error] = []
        over: list[pb.GameOver] = []

        async def bot() -> None:
            while not over:
                message = await client.receive()
                for item in (
                    message.batch.messages if message.WhichOneof("body") == "batch"
                    else [message]
                ):
                    body = item.WhichOneof("body")
                    if body == "decision":
                        d = item.decision
                        requests.append(d.request_id)
                        if len(requests) == 1:
                            client.send(pb.BotMessage(action=pb.ActionReply(
                                request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                                action_index=len(d.legal_actions),
                            )))
                    elif body == "error":
                        errors.append(item.error)
                    elif body == "game_over":
                        over.append(item.game_over)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot)
            with trio.fail_after(60):
                report = await run_match(
                    "m", game, links, policy=FaultPolicy(max_strikes=2),
                    time_control=TimeControl(decision_ms=300, grace_ms=0),
                )
        client.close()
        assert report.outcome.termination.name == "TIMEOUT"
        illegal, timeout = errors
        assert illegal.code == pb.ERROR_CODE_ILLEGAL_ACTION
        assert illegal.request_id == requests[0]
        assert (illegal.match_id, illegal.seat) == ("m", 0)
        assert "out of range" in illegal.detail
        assert (illegal.strikes, illegal.max_strikes) == (1, 2)
        assert timeout.code == pb.ERROR_CODE_TIMEOUT
        assert timeout.request_id == requests[1]
        assert (timeout.strikes, timeout.max_strikes) == (2, 2)
        assert "no answer within 300 ms" in timeout.detail
        assert over[0].outcome.termination == pb.TERMINATION_TIMEOUT

    run(test)


def test_reflection_v1_is_served_as_well_as_v1alpha() -> None:
    """grpcurl and recent tools ask `grpc.reflection.v1.ServerReflection` first: it answers
    (the same messages as v1alpha, renamed) and lists arena.v1.Referee."""

    async def test(hub: Hub, port: int) -> None:
        def probe() -> list[str]:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                info = channel.stream_stream(
                    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                    request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                    response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
                )
                replies = info(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
                )
                return [s.name for r in replies for s in r.list_services_response.service]

        services = await trio.to_thread.run_sync(probe)
        assert "arena.v1.Referee" in services
        assert "grpc.reflection.v1.ServerReflection" in services

    run(test)


def test_the_sdk_sends_its_sign_with_the_action() -> None:
    """The SDK's reply to `act` returning (choice, Signal) carries both (protocol 1.0 lost the
    sign: the SDK set it, then the action, which cleared it)."""
    from arena.sdk import Bot, _handle

    class Signer(Bot):
        def act(self, view: Any, legal: Any) -> Any:
            return 0, Signal(SignalKind.NADA, "hola")

    game = Match("argentine-2v2", seed=1)
    seat = game.to_act
    assert seat is not None
    started = pb.ServerMessage(game_started=pb.GameStarted(
        match_id="m", variant="argentine-2v2", seat=seat, team=seat % 2,
    ))
    seats: dict[Any, Any] = {}
    _handle(started, seats, Signer)
    from arena.rpc import convert

    decision = pb.ServerMessage()
    decision.decision.request_id = "r"
    decision.decision.match_id = "m"
    decision.decision.seat = seat
    convert.view_into(decision.decision.view, game.view(seat))
    convert.legal_actions_into(decision.decision, game.view(seat).legal_actions)
    reply = _handle(decision, seats, Signer)
    assert reply is not None
    wire = pb.BotMessage.FromString(reply.SerializeToString()).action
    assert wire.WhichOneof("choice") == "action_index"
    assert wire.signal.kind == pb.SIGNAL_KIND_NADA
    assert wire.signal.text == "hola"


def _sdk_seat(bot: Any) -> tuple[dict[Any, Any], pb.ServerMessage, Match]:
    """An SDK seat of a fresh argentine-1v1 match held by `bot`, and its first decision."""
    from arena.rpc import convert
    from arena.sdk import _handle

    game = Match("argentine-1v1", seed=1)
    seat = game.to_act
    assert seat is not None
    seats: dict[Any, Any] = {}
    started = pb.ServerMessage(game_started=pb.GameStarted(
        match_id="m", variant="argentine-1v1", seat=seat, team=seat % 2,
    ))
    _handle(started, seats, bot)
    decision = pb.ServerMessage()
    decision.decision.request_id = "r"
    decision.decision.match_id = "m"
    decision.decision.seat = seat
    convert.view_into(decision.decision.view, game.view(seat))
    convert.legal_actions_into(decision.decision, game.view(seat).legal_actions)
    return seats, decision, game


def test_the_sdk_hands_every_strike_to_on_error(capsys: Any) -> None:
    """An `Error` naming a seat the SDK plays reaches that bot's `on_error` with the code, the
    request, the detail and the strike count, and is logged to stderr with the count."""
    from arena.sdk import Bot, ErrorInfo, _handle

    seen: list[ErrorInfo] = []

    class Listener(Bot):
        def act(self, view: Any, legal: Any) -> int:
            return 0

        def on_error(self, error: ErrorInfo) -> None:
            seen.append(error)

    seats, decision, _ = _sdk_seat(Listener)
    seat = decision.decision.seat
    error = pb.ServerMessage(error=pb.Error(
        code=pb.ERROR_CODE_TIMEOUT, message="timeout (strike 1 of 3): no answer within 5 ms",
        request_id="r", match_id="m", seat=seat, detail="no answer within 5 ms", strikes=1,
        max_strikes=3,
    ))
    assert _handle(error, seats, Listener) is None
    assert seen == [ErrorInfo("timeout", error.error.message, "r", "no answer within 5 ms", 1, 3)]
    assert "referee error timeout (strike 1 of 3)" in capsys.readouterr().err


def test_the_sdk_counts_and_prints_each_fallback(capsys: Any) -> None:
    """When `act` raises, the SDK answers index 0, prints a line starting with FALLBACK_MARK
    followed by the traceback to stderr, and counts it in `fallbacks()` (what `arena check`
    reads)."""
    import arena.sdk as sdk

    class Broken(sdk.Bot):
        def act(self, view: Any, legal: Any) -> int:
            raise KeyError("deliberate")

    seats, decision, _ = _sdk_seat(Broken)
    before = sdk.fallbacks()
    reply = sdk._handle(decision, seats, Broken)
    assert reply is not None
    assert reply.action.action_index == 0
    assert sdk.fallbacks() == before + 1
    err = capsys.readouterr().err
    assert err.startswith(f"{sdk.FALLBACK_MARK} {before + 1}: act() raised")
    assert "KeyError: 'deliberate'" in err
