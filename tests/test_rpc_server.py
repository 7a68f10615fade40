"""The referee's gRPC adapter against real gRPC clients on 127.0.0.1: admission, routing of
answers to their requests, in-band errors, disconnects, health and reflection."""

from __future__ import annotations

import queue
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from structlog.testing import capture_logs

from arena.errors import BotDisconnected
from arena.referee import Answer, DecisionRequest, MatchStart, TimeControl, run_match
from arena.rpc.server import STRAYS_PER_REQUEST, Connection, Hub, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


class Client:
    """A blocking gRPC bot client; `receive` runs on a worker thread. Each has a connection
    of its own, as a bot process has (gRPC would otherwise share one between the channels of
    a process, and the referee lets a connection hold only a few streams)."""

    def __init__(self, port: int, address: str | None = None,
                 compression: grpc.Compression | None = None) -> None:
        self.channel = grpc.insecure_channel(address or f"127.0.0.1:{port}",
                                             options=[("grpc.use_local_subchannel_pool", 1)])
        self.outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        stub = pb_grpc.RefereeStub(self.channel)  # type: ignore[no-untyped-call]
        self.responses = stub.Play(self._outgoing(), compression=compression)

    def _outgoing(self) -> Iterator[pb.BotMessage]:
        while (message := self.outbox.get()) is not None:
            yield message

    def send(self, message: pb.BotMessage) -> None:
        self.outbox.put(message)

    def hello(self, token: str, version: int = 1) -> None:
        self.send(pb.BotMessage(hello=pb.Hello(bot_name="t", token=token,
                                               protocol_version=version)))

    async def receive(self) -> pb.ServerMessage:
        with trio.fail_after(10):
            return await trio.to_thread.run_sync(next, self.responses, abandon_on_cancel=True)

    async def status(self) -> grpc.StatusCode:
        """Read to the end of the stream; the final status code."""
        try:
            while True:
                await self.receive()
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
        except StopIteration:
            return grpc.StatusCode.OK

    async def error_codes_until_closed(self) -> tuple[list[int], grpc.StatusCode]:
        """Read to the end of the stream: the in-band error codes, and the final status."""
        codes: list[int] = []
        while True:
            try:
                codes.append(int((await self.receive()).error.code))
            except grpc.RpcError as exc:
                return codes, exc.code()

    def close(self) -> None:
        self.outbox.put(None)
        self.channel.close()


def run(test: Callable[[Hub, int], Awaitable[None]], *, hello_timeout: float = 5.0) -> None:
    async def main() -> None:
        hub = Hub(hello_timeout=hello_timeout)
        async with serve_referee(hub) as server:
            await test(hub, server.port)

    trio.run(main)


async def connected(hub: Hub, port: int, token: str = "tok") -> tuple[Client, Connection]:
    """A client admitted with `token` (its welcome checked) and the hub's side of it."""
    hub.admit(token, "bot")
    client = Client(port)
    client.hello(token)
    assert (await client.receive()).WhichOneof("body") == "welcome"
    return client, await hub.connection_for(token)


def request_for(match: Match, rid: str = "r1") -> DecisionRequest:
    seat = match.to_act
    assert seat is not None
    view = match.view(seat)
    return DecisionRequest(rid, "m1", seat, view, view.legal_actions, 0, 1000)


def action_reply(rid: str, match_id: str, seat: int, index: int) -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.ActionReply(request_id=rid, match_id=match_id, seat=seat, action_index=index)
    )


@pytest.mark.parametrize(
    ("token", "version", "code", "status", "words"),
    [
        ("wrong", 1, pb.ERROR_CODE_UNAUTHENTICATED, grpc.StatusCode.UNAUTHENTICATED,
         "unknown token"),
        ("", 1, pb.ERROR_CODE_UNAUTHENTICATED, grpc.StatusCode.UNAUTHENTICATED,
         "ARENA_TOKEN_FD"),
        ("good", 7, pb.ERROR_CODE_UNSUPPORTED_PROTOCOL, grpc.StatusCode.FAILED_PRECONDITION,
         "protocol version 7"),
    ],
)
def test_bad_hello_is_refused_in_band_then_closed(
    token: str, version: int, code: int, status: grpc.StatusCode, words: str
) -> None:
    """A wrong token or protocol version gets an in-band error naming the problem, then the
    stream ends with a matching gRPC status. No token at all is told where a launched bot
    finds its own (ARENA_TOKEN_FD: a bot written from the .proto's old comment read
    ARENA_TOKEN, which a launched bot never gets, and was told only "unknown token")."""

    async def test(hub: Hub, port: int) -> None:
        hub.admit("good", "bot")
        client = Client(port)
        client.hello(token, version)
        first = await client.receive()
        assert first.WhichOneof("body") == "error"
        assert first.error.code == code
        assert words in first.error.message
        assert await client.status() == status
        client.close()

    run(test)


def test_no_hello_in_time_is_refused() -> None:
    """A client that never says hello is dropped after the hello deadline."""

    async def test(hub: Hub, port: int) -> None:
        client = Client(port)
        first = await client.receive()
        assert first.error.code == pb.ERROR_CODE_BAD_HELLO
        assert "no hello" in first.error.message
        assert await client.status() == grpc.StatusCode.DEADLINE_EXCEEDED
        client.close()

    run(test, hello_timeout=0.3)


def test_first_message_must_be_hello() -> None:
    """An action before the hello is BAD_HELLO."""

    async def test(hub: Hub, port: int) -> None:
        client = Client(port)
        client.send(action_reply("x", "m", 0, 0))
        first = await client.receive()
        assert first.error.code == pb.ERROR_CODE_BAD_HELLO
        assert await client.status() == grpc.StatusCode.INVALID_ARGUMENT
        client.close()

    run(test)


def test_answers_are_routed_and_wrong_ones_refused_in_band() -> None:
    """Welcome after a good hello; a request reaches the bot with its view; an answer for the
    wrong seat is NOT_YOUR_SEAT (the request keeps waiting), an unknown id UNKNOWN_REQUEST,
    the right answer completes the ask, a second answer is DUPLICATE_ANSWER."""

    async def test(hub: Hub, port: int) -> None:
        client, conn = await connected(hub, port)
        match = Match("argentine-1v1", seed=3)
        request = request_for(match)
        link = conn.link("m1", request.seat)
        result: dict[str, Answer] = {}

        async def ask() -> None:
            result["answer"] = await link.ask(request)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask)
            sent = await client.receive()
            decision = sent.decision
            assert decision.request_id == "r1"
            assert decision.seat == request.seat
            assert [c.text for c in decision.view.hand] == [str(c) for c in request.view.hand]
            client.send(action_reply("r1", "m1", request.seat + 1, 0))
            refused = (await client.receive()).error
            assert refused.code == pb.ERROR_CODE_NOT_YOUR_SEAT
            # what the reply said, beside what the request asked (an outside walkthrough's
            # bot that sent no match_id could not tell which field was wrong)
            assert f"the reply said match 'm1' seat {request.seat + 1}" in refused.message
            client.send(action_reply("r1", "", request.seat, 0))
            refused = (await client.receive()).error
            assert refused.code == pb.ERROR_CODE_NOT_YOUR_SEAT
            assert f"is for match 'm1' seat {request.seat}; the reply said match '' seat " \
                   f"{request.seat}" in refused.message
            client.send(action_reply("nope", "m1", request.seat, 0))
            assert (await client.receive()).error.code == pb.ERROR_CODE_UNKNOWN_REQUEST
            client.send(action_reply("r1", "m1", request.seat, 2))
        assert result["answer"] == Answer(action_index=2)
        client.send(action_reply("r1", "m1", request.seat, 2))
        assert (await client.receive()).error.code == pb.ERROR_CODE_DUPLICATE_ANSWER
        client.close()

    run(test)


def test_late_answer_is_refused() -> None:
    """When the referee gives up on a request (its deadline), a later answer is LATE_ANSWER."""

    async def test(hub: Hub, port: int) -> None:
        client, conn = await connected(hub, port)
        request = request_for(Match("mineiro-1v1", seed=1))
        link = conn.link("m1", request.seat)
        with trio.move_on_after(0.2) as scope:
            await link.ask(request)
        assert scope.cancelled_caught
        sent = await client.receive()
        client.send(action_reply(sent.decision.request_id, "m1", request.seat, 0))
        assert (await client.receive()).error.code == pb.ERROR_CODE_LATE_ANSWER
        client.close()

    run(test)


def test_a_stalled_bot_answering_its_backlog_late_is_not_a_flood() -> None:
    """A bot that stalls past many deadlines and then answers its whole backlog gets one
    LATE_ANSWER per late answer and keeps its connection: late answers to requests the
    referee really sent are never flood evidence, even with a bank of 5 strays. A second
    answer to the same request is still a duplicate (a stray)."""

    async def test(hub: Hub, port: int) -> None:
        hub.max_stray_messages = 5
        client, conn = await connected(hub, port)
        match = Match("argentine-1v1", seed=3)
        link = conn.link("m1", request_for(match).seat)
        rids = []
        for n in range(20):  # 20 deadlines pass while the bot is stalled
            request = request_for(match, f"r{n}")
            with trio.move_on_after(0.01):
                await link.ask(request)
            rids.append(request.request_id)
        for rid in rids:  # the bot wakes up and answers its backlog
            client.send(action_reply(rid, "m1", request.seat, 0))
        codes = []
        while len(codes) < len(rids):
            message = await client.receive()
            if message.WhichOneof("body") == "error":
                codes.append(message.error.code)
        assert codes == [pb.ERROR_CODE_LATE_ANSWER] * len(rids)
        assert not conn.closed.is_set(), conn.close_reason
        client.send(action_reply(rids[0], "m1", request.seat, 0))
        while (message := await client.receive()).WhichOneof("body") != "error":
            pass
        assert message.error.code == pb.ERROR_CODE_DUPLICATE_ANSWER
        client.close()

    run(test)


def test_disconnect_while_asked_is_bot_disconnected() -> None:
    """A client that goes away while a request waits makes `ask` raise BotDisconnected."""

    async def test(hub: Hub, port: int) -> None:
        client, conn = await connected(hub, port)
        request = request_for(Match("argentine-1v1", seed=2))
        link = conn.link("m1", request.seat)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, client.close)
            with trio.fail_after(10), pytest.raises(BotDisconnected):
                await link.ask(request)

    run(test)


def test_health_and_reflection_are_served() -> None:
    """Generic tools can probe the referee: health says SERVING for the server and the
    Referee service; reflection lists arena.v1.Referee."""

    async def test(hub: Hub, port: int) -> None:
        def probe() -> tuple[list[int], list[str]]:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                health = health_pb2_grpc.HealthStub(channel)
                statuses = [
                    health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5).status
                    for name in ("", "arena.v1.Referee")
                ]
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                replies = stub.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
                )
                services = [s.name for r in replies for s in r.list_services_response.service]
                return statuses, services

        statuses, services = await trio.to_thread.run_sync(probe)
        assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 2
        assert "arena.v1.Referee" in services
        assert "grpc.health.v1.Health" in services

    run(test)


def test_reflection_asked_in_a_loop_is_cut_off_at_a_budget_per_host() -> None:
    """A hostile review (round 4) asked reflection for the referee's descriptors (8.5 KB a
    time) in a loop, without a token, and honest bots lost matches by timeout. Each host may
    ask 10 a second (50 at once): a raw-stub client asking as fast as it can gets about 50
    answers, then its stream ends RESOURCE_EXHAUSTED saying the budget; the budget is the
    host's, so a new stream at once is cut off sooner, on either reflection version."""

    async def test(hub: Hub, port: int) -> None:
        def flood(version: str) -> tuple[int, Any]:
            answered = 0
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                info = channel.stream_stream(
                    f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                    request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                    response_deserializer=lambda raw: raw)
                ask = reflection_pb2.ServerReflectionRequest(
                    file_containing_symbol="arena.v1.Referee")
                try:
                    for _ in info(iter([ask] * 1000), timeout=20):
                        answered += 1
                except grpc.RpcError as exc:
                    return answered, exc
            return answered, None

        first, error = await trio.to_thread.run_sync(flood, "v1alpha")
        assert 40 <= first <= 80, first
        assert error is not None
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "at most 10 requests a second from one host" in error.details()
        again, error = await trio.to_thread.run_sync(flood, "v1")
        assert again < 20, again
        assert error is not None
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    run(test)




def test_message_flood_closes_the_connection() -> None:
    """A connection sending more messages per second than allowed gets RATE_LIMITED, its
    stream ends with RESOURCE_EXHAUSTED, and its seats count as disconnected."""

    async def test(hub: Hub, port: int) -> None:
        hub.max_messages_per_second = 50
        client, conn = await connected(hub, port)
        for i in range(500):
            client.send(action_reply(f"x{i}", "m", 0, 0))
        codes, status = await client.error_codes_until_closed()
        assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert pb.ERROR_CODE_RATE_LIMITED in codes
        with trio.fail_after(5):
            await conn.closed.wait()
        assert "flood" in conn.close_reason
        with pytest.raises(BotDisconnected):
            await conn.link("m", 0).ask(request_for(Match("argentine-1v1")))
        client.close()

    run(test)


def test_an_oversized_message_is_refused_naming_its_size() -> None:
    """A bot's message over the 64 KiB limit (a hello or an answer is a few hundred bytes)
    is refused in-band with MESSAGE_TOO_LARGE (its size in the text), the stream ends with
    RESOURCE_EXHAUSTED, and the connection's close reason — what a match records for a seat
    it held — names the size and the limit. (At 1 MiB, a hostile review, round 5, sent
    strays of 1 MiB each and cost the referee 60 % of a core.)"""

    async def test(hub: Hub, port: int) -> None:
        client, conn = await connected(hub, port)
        big = pb.BotMessage(action=pb.ActionReply(request_id="x" * (100 << 10)))
        client.send(big)
        codes, status = await client.error_codes_until_closed()
        assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert codes == [pb.ERROR_CODE_MESSAGE_TOO_LARGE]
        with trio.fail_after(5):
            await conn.closed.wait()
        size = big.ByteSize()
        assert conn.close_reason == (
            f"the client sent a message of {size:,} bytes, over the limit of {64 << 10:,}"
        )
        client.close()

    run(test)


async def _refused_hello(hub: Hub, port: int, size: int,
                         compression: grpc.Compression | None = None) -> Any:
    """Send a hello padded to `size` bytes (compressed with `compression`) for an admitted
    token: the RpcError it ends with; the bot was not admitted."""
    hub.admit("tok", "bot")
    client = Client(port, compression=compression)
    client.send(pb.BotMessage(hello=pb.Hello(bot_name="x" * size, token="tok",
                                             protocol_version=1)))
    with pytest.raises(grpc.RpcError) as refused:
        await client.receive()
    client.close()
    assert not hub.is_connected("tok")
    return refused.value


def test_a_message_past_grpcs_cap_ends_the_stream_unbuffered() -> None:
    """gRPC's own cap on what the referee receives is twice a bot message's (128 KiB), not
    the 4 MiB it was: a hostile review (round 6) opened 300 streams before any hello, each
    announcing a 4 MB message and sending all of it but the last byte, and the referee held
    1.1 GB for them (never given back). Now a 1 MiB hello is refused by gRPC at its header
    (the client is told RESOURCE_EXHAUSTED with the sizes), the bot is not admitted, and
    holding 40 such streams one byte short costs the referee almost no memory."""

    async def test(hub: Hub, port: int) -> None:
        refused = await _refused_hello(hub, port, 1 << 20)
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "larger than max" in (refused.details() or "")
        # An admitted bot's 1 MiB message: gRPC ends the stream without a word to the
        # referee, whose record of the connection says what it may have been.
        client, conn = await connected(hub, port, "tok2")
        client.send(pb.BotMessage(action=pb.ActionReply(request_id="x" * (1 << 20))))
        with trio.fail_after(10):
            await conn.closed.wait()
        assert "larger than gRPC accepts" in conn.close_reason, conn.close_reason
        client.close()

        def rss_kib() -> int:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
            raise AssertionError("no VmRSS")

        before = rss_kib()
        held = await trio.to_thread.run_sync(_hold_partial_messages, port, 40, 4_000_000)
        grown_mib = (rss_kib() - before) / 1024
        for sock in held:
            sock.close()
        assert grown_mib < 40, grown_mib  # 4 MiB each would be 160 MiB

    run(test)


def _hold_partial_messages(port: int, streams: int, size: int) -> list[socket.socket]:
    """Open `streams` raw HTTP/2 connections, each with a Play stream whose one gRPC message
    announces `size` bytes and sends all but the last; return the open sockets."""
    import h2.config
    import h2.connection
    import h2.exceptions

    held = []
    total = 5 + size - 1  # the message's header, then all of it but the last byte
    header = b"\0" + size.to_bytes(4, "big")
    for _ in range(streams):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        conn.send_headers(1, [(":method", "POST"), (":scheme", "http"),
                              (":path", "/arena.v1.Referee/Play"), (":authority", "x"),
                              ("content-type", "application/grpc"), ("te", "trailers")])
        sock.sendall(conn.data_to_send())
        sock.settimeout(0.2)
        sent = 0
        while sent < total:
            room = min(conn.local_flow_control_window(1), conn.max_outbound_frame_size,
                       total - sent)
            if room <= 0:  # wait for the server to open its window, or stop reading
                try:
                    data = sock.recv(65536)
                    if not data:
                        break
                    conn.receive_data(data)
                    sock.sendall(conn.data_to_send())
                except (TimeoutError, OSError, h2.exceptions.ProtocolError):
                    break  # what the server holds now is what it took
                continue
            piece = (header + bytes(room))[:room] if sent == 0 else bytes(room)
            try:
                conn.send_data(1, piece)
                sock.sendall(conn.data_to_send())
            except (OSError, h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
                break
            sent += room
        held.append(sock)
    return held


def test_a_compressed_message_is_refused_before_it_is_inflated() -> None:
    """gzip turns 64 MiB of one letter into 64 KiB, under every size limit until gRPC has
    inflated it: a hello (or answer) sent compressed cost the referee ~19 ms of CPU each
    before gRPC's own 4 MiB limit cancelled the call (20 such hellos of 50 MiB: 380 ms).
    The referee accepts uncompressed messages only (bots never need more): a compressed
    one ends its call at once with UNIMPLEMENTED, naming the algorithm, the bot is never
    admitted, and an uncompressed hello on the same port is welcome as ever."""

    async def test(hub: Hub, port: int) -> None:
        refused = await _refused_hello(hub, port, 50 << 20, grpc.Compression.Gzip)
        assert refused.code() == grpc.StatusCode.UNIMPLEMENTED
        assert "gzip" in (refused.details() or "")
        client = Client(port)
        client.hello("tok")
        assert (await client.receive()).WhichOneof("body") == "welcome"
        client.close()

    run(test)


def test_stray_messages_close_the_connection_however_slowly_they_are_read() -> None:
    """Messages that answer no request (unknown, duplicate, for another seat) are a flood once
    a connection has sent more than its bank of them, whatever the clock says: the per-second
    limit is out of reach here (10**9 a second), yet the stray flood is stopped at the first
    message past the bank, with RATE_LIMITED and RESOURCE_EXHAUSTED."""

    async def test(hub: Hub, port: int) -> None:
        hub.max_messages_per_second = 1e9
        hub.max_stray_messages = 10
        client, conn = await connected(hub, port)
        for i in range(11):
            client.send(action_reply(f"x{i}", "m", 0, 0))
        codes, status = await client.error_codes_until_closed()
        assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert codes == [pb.ERROR_CODE_UNKNOWN_REQUEST] * 11 + [pb.ERROR_CODE_RATE_LIMITED]
        with trio.fail_after(5):
            await conn.closed.wait()
        assert "10 messages that answer no request" in conn.close_reason
        with trio.fail_after(5):
            while hub.last_close("tok") is None:
                await trio.sleep(0.01)
        assert hub.last_close("tok") == conn.close_reason  # what a seat waiting for it is told
        client.close()

    run(test)


def test_big_stray_messages_weigh_by_their_size() -> None:
    """A stray costs one of the connection's stray allowance plus one per whole KiB: with an
    allowance of 200, strays of 8 KiB close the connection after 23, where 1 MiB strays (now
    60 KiB, under the message cap) were 200 a connection and their parsing struck honest
    bots in other matches (hostile review round 5). Small strays still count one each."""

    async def test(hub: Hub, port: int) -> None:
        hub.max_messages_per_second = 1e9
        hub.max_stray_messages = 200
        client, _conn = await connected(hub, port)
        for _ in range(40):
            client.send(action_reply("x" * (8 << 10), "m", 0, 0))
        codes, status = await client.error_codes_until_closed()
        assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert codes[-1] == pb.ERROR_CODE_RATE_LIMITED
        assert codes.count(pb.ERROR_CODE_UNKNOWN_REQUEST) == 200 // 9 + 1, codes
        client.close()

    run(test)


def test_each_request_earns_a_few_stray_messages() -> None:
    """A bot that wraps every answer in a few stray messages (STRAYS_PER_REQUEST at most:
    three before the request, a duplicate answer after it) keeps its connection however long
    it plays, even with a bank of only twice that. (Not less: the referee may read one
    round's duplicate and the next round's three before it sends the next request, and the
    round's own three after it sent the request: seven strays between two requests, and a
    bank of 5 broke at random, more often with the gRPC loop pumped on trio's thread.)"""

    async def test(hub: Hub, port: int) -> None:
        hub.max_stray_messages = 2 * STRAYS_PER_REQUEST
        client, conn = await connected(hub, port)
        match = Match("argentine-1v1", seed=3)
        link = conn.link("m1", request_for(match).seat)
        for n in range(12):
            rid = f"r{n}"
            for stray in range(STRAYS_PER_REQUEST - 1):
                client.send(action_reply(f"{rid}-{stray}", "m1", 0, 0))
            request = request_for(match, rid)
            async with trio.open_nursery() as nursery:
                answers: list[Answer] = []

                async def ask(
                    request: DecisionRequest = request, answers: list[Answer] = answers
                ) -> None:
                    answers.append(await link.ask(request))

                nursery.start_soon(ask)
                while True:
                    message = await client.receive()
                    if message.WhichOneof("body") == "decision":
                        break
                client.send(action_reply(rid, "m1", request.seat, 0))
                client.send(action_reply(rid, "m1", request.seat, 0))  # a duplicate: a stray
            assert answers == [Answer(action_index=0)]
        assert not conn.closed.is_set(), conn.close_reason
        client.close()

    run(test)


def test_connections_per_token_are_capped() -> None:
    """Beyond the cap, a further connection with the same token is refused."""

    async def test(hub: Hub, port: int) -> None:
        hub.max_connections_per_token = 2
        hub.admit("tok", "bot")
        clients = [Client(port) for _ in range(3)]
        for client in clients[:2]:
            client.hello("tok")
            assert (await client.receive()).WhichOneof("body") == "welcome"
        clients[2].hello("tok")
        refused = await clients[2].receive()
        assert refused.error.code == pb.ERROR_CODE_TOO_MANY_CONNECTIONS
        assert await clients[2].status() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for client in clients:
            client.close()

    run(test)


def test_a_dropped_seat_moves_to_the_bots_new_connection() -> None:
    """After a disconnect, `reconnect` waits for a new connection with the same token and
    re-sends the match start there; the next request goes to the new connection."""

    async def test(hub: Hub, port: int) -> None:
        first, conn = await connected(hub, port)
        match = Match("argentine-1v1", seed=4)
        request = request_for(match)
        link = conn.link("m1", request.seat)
        await link.start(MatchStart("m1", "argentine-1v1", match.options, request.seat, 0,
                                    ("a", "b"), match.team_of, TimeControl()))
        assert (await first.receive()).WhichOneof("body") == "game_started"
        await trio.to_thread.run_sync(first.close)
        with trio.fail_after(5):
            await conn.closed.wait()
        second = Client(port)
        second.hello("tok")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(link.reconnect)
            assert (await second.receive()).WhichOneof("body") == "welcome"
            assert (await second.receive()).game_started.match_id == "m1"
        async with trio.open_nursery() as nursery:
            answer: list[Answer] = []

            async def ask() -> None:
                answer.append(await link.ask(request))

            nursery.start_soon(ask)
            sent = await second.receive()
            second.send(action_reply(sent.decision.request_id, "m1", request.seat, 1))
        assert answer == [Answer(action_index=1)]
        second.close()

    run(test)


def test_a_seat_without_reconnect_cannot_come_back() -> None:
    """A launched bot's seat (reconnect=False) raises BotDisconnected at once."""

    async def test(hub: Hub, port: int) -> None:
        client, conn = await connected(hub, port)
        link = conn.link("m1", 0, reconnect=False)
        with pytest.raises(BotDisconnected):
            await link.reconnect()
        client.close()

    run(test)


def _play_out(port: int, token: str, batches: bool) -> tuple[int, list[pb.ServerMessage]]:
    """A bot holding both seats of a match: answers every decision with index 0, unpacking
    batches; returns how many batches came and every message, unpacked, in order."""
    client = Client(port)
    client.send(pb.BotMessage(hello=pb.Hello(bot_name="t", token=token, protocol_version=1,
                                             accepts_batches=batches)))
    packed, seen, over = 0, [], 0
    try:
        for message in client.responses:
            if message.WhichOneof("body") == "batch":
                packed += 1
                items = list(message.batch.messages)
                assert items
                assert all(m.WhichOneof("body") != "batch" for m in items)
            else:
                items = [message]
            for item in items:
                seen.append(item)
                if item.WhichOneof("body") == "decision":
                    d = item.decision
                    client.send(action_reply(d.request_id, d.match_id, d.seat, 0))
                over += item.WhichOneof("body") == "game_over"
            if over == 2:
                return packed, seen
        raise AssertionError("the stream ended before the match")
    finally:
        client.close()


def _comparable(message: pb.ServerMessage) -> pb.ServerMessage:
    """The message without what differs from one run to the next (ids, clocks)."""
    copy = pb.ServerMessage()
    copy.CopyFrom(message)
    if copy.WhichOneof("body") == "decision":
        copy.decision.request_id = ""
        copy.decision.deadline_unix_ms = 0
    if copy.WhichOneof("body") == "welcome":
        copy.welcome.session_id = ""
    return copy


def test_batches_go_only_to_bots_that_accept_them_and_hold_the_same_messages() -> None:
    """A bot whose hello sets accepts_batches gets batches (never nested, never empty); one
    that does not gets every message alone; unpacked, both get the same messages in the same
    order for the same match."""
    async def test(hub: Hub, port: int) -> None:
        results: dict[str, tuple[int, list[pb.ServerMessage]]] = {}

        async def bot(token: str, batches: bool) -> None:
            results[token] = await trio.to_thread.run_sync(_play_out, port, token, batches)

        async def referee(token: str) -> None:
            conn = await hub.connection_for(token)
            game = Match("argentine-1v1", {"target": 15, "chicos": 1}, 9)
            await run_match("m", game, [conn.link("m", 0), conn.link("m", 1)])

        async with trio.open_nursery() as nursery:
            for token, batches in (("packed", True), ("alone", False)):
                hub.admit(token, "bot")
                nursery.start_soon(bot, token, batches)
                nursery.start_soon(referee, token)
        packed, packed_seen = results["packed"]
        alone, alone_seen = results["alone"]
        assert packed > 0
        assert alone == 0
        assert [_comparable(m) for m in packed_seen] == [_comparable(m) for m in alone_seen]

    run(test)


async def _silent_streams(hub: Hub, door: str, count: int, port: int,
                         address: str | None = None) -> list[Client]:
    """`count` streams opened (no message at all), each seen by the hub before the next."""
    streams = []
    for _ in range(count):
        before = hub.silent(door)
        streams.append(Client(port, address))
        with trio.fail_after(10):
            while hub.silent(door) == before and before < hub.max_pending:
                await trio.sleep(0.005)
        await trio.sleep(0.02)  # in arrival order, even at a full door
    return streams


def test_a_full_door_closes_the_stream_silent_longest_for_a_newcomer() -> None:
    """With max_pending = 2, two streams that have sent nothing fill the door. A third that
    says hello gets in, and the stream silent longest is closed for it (TOO_MANY_CONNECTIONS
    in-band, RESOURCE_EXHAUSTED), not the newer one. (Refusing newcomers instead let anyone
    who can open streams keep every bot out for the hello deadline, again and again.)"""

    async def test(hub: Hub, port: int) -> None:
        hub.max_pending = 2
        hub.admit("tok", "bot")
        oldest, newer = await _silent_streams(hub, "network", 2, port)
        newcomer = Client(port)
        newcomer.hello("tok")
        assert (await newcomer.receive()).WhichOneof("body") == "welcome"
        codes, status = await oldest.error_codes_until_closed()
        assert codes == [pb.ERROR_CODE_TOO_MANY_CONNECTIONS]
        assert status == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert hub.silent("network") == 1  # the newer one waits on, within its hello deadline
        newer.hello("tok")
        assert (await newer.receive()).WhichOneof("body") == "welcome"
        for client in (oldest, newer, newcomer):
            client.close()

    run(test)


def test_a_flood_from_the_network_does_not_close_the_launched_bots_door(tmp_path: Path) -> None:
    """Streams that never say hello, opened from the network (anyone who can reach the
    listen address, no token needed), fill only the network's share of the cap: a bot
    coming through the launched bots' unix socket finds its door empty, a network bot still
    gets in by closing a silent stream, and the referee logs that the door is full. (With
    one cap for both, 300 silent streams from outside made every launched bot of a
    tournament fail to connect, and their matches were forfeits charged to nobody.)"""
    socket_path = tmp_path / "referee.sock"

    async def main() -> list[Any]:
        hub = Hub(hello_timeout=5.0, max_pending=2)
        hub.admit("tok", "bot")
        async with serve_referee(hub, local_addresses=(f"unix:{socket_path}",)) as server:
            port = server.port
            flood = await _silent_streams(hub, "network", 2, port)
            launched_silent = hub.silent("launched")
            launched = Client(port, f"unix:{socket_path}")
            launched.hello("tok")
            first = (await launched.receive()).WhichOneof("body")
            extra = Client(port)
            extra.hello("tok")
            second = (await extra.receive()).WhichOneof("body")
            codes, _status = await flood[0].error_codes_until_closed()
            for client in (*flood, launched, extra):
                client.close()
            return [launched_silent, first, second, codes]

    with capture_logs() as logs:
        launched_silent, first, second, codes = trio.run(main)
    assert launched_silent == 0
    assert (first, second) == ("welcome", "welcome")
    assert codes == [pb.ERROR_CODE_TOO_MANY_CONNECTIONS]
    full = [e for e in logs if e["event"] == "hello_door_full"]
    assert full, [e["event"] for e in logs]
    assert full[0]["door"] == "network"
    assert full[0]["evicted"] == 1


def test_a_launched_bot_flooding_its_own_door_cannot_keep_a_sibling_out(tmp_path: Path) -> None:
    """A launched bot reaches the launched bots' socket too: there, with the door full of
    its silent streams (three times the cap, each a newcomer closing an older one), an
    honest bot coming later still gets in at its first hello. (Before: refused, and the
    launched bot, never connected, forfeited its match to the flooder.)"""
    socket_path = tmp_path / "referee.sock"
    address = f"unix:{socket_path}"

    async def main() -> list[Any]:
        hub = Hub(hello_timeout=5.0, max_pending=3)
        hub.admit("honest", "bot")
        async with serve_referee(hub, local_addresses=(address,)) as server:
            flood = await _silent_streams(hub, "launched", 9, server.port, address)
            full = hub.silent("launched")
            honest = Client(server.port, address)
            honest.hello("honest")
            first = (await honest.receive()).WhichOneof("body")
            told = [await c.error_codes_until_closed() for c in flood[:6]]
            for client in (*flood, honest):
                client.close()
            return [full, first, told]

    full, first, told = trio.run(main)
    assert full == 3
    assert first == "welcome"
    assert told == [([pb.ERROR_CODE_TOO_MANY_CONNECTIONS], grpc.StatusCode.RESOURCE_EXHAUSTED)] * 6


def _bot_command(kind: str, folder: Path, js_random: list[str]) -> list[str]:
    """A bot of each client we ship, as a process: the Python SDK (the sample random bot),
    the stdio adapter (with a line bot that only reads) and the Node.js sample bot."""
    import sys

    from test_e2e_support import SAMPLE_BOTS

    quiet = folder / "quiet.py"
    quiet.write_text("import sys\nfor line in sys.stdin:\n    pass\n", encoding="utf-8")
    return {
        "sdk": [sys.executable, str(SAMPLE_BOTS / "random_bot.py")],
        "stdio": [sys.executable, "-m", "arena.stdio", "--", sys.executable, str(quiet)],
        "js": js_random,
    }[kind]


class _Stderr:
    """A bot process's stderr, read line by line on a thread as it comes."""

    def __init__(self, bot: Any) -> None:
        import threading

        self.lines: list[str] = []
        self._said = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(bot.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            with self._said:
                self.lines.append(line)
                self._said.notify_all()
        stream.close()
        with self._said:
            self.lines.append("")  # the end
            self._said.notify_all()

    def wait_for(self, text: str, timeout: float = 20) -> None:
        """Until a line holds `text` (or the stream ends, or `timeout` s pass)."""
        with self._said:
            self._said.wait_for(lambda: any(text in line for line in self.lines)
                                or "" in self.lines, timeout)

    def text(self) -> str:
        self._thread.join(20)
        return "".join(self.lines)


async def _tried_again(bot: Any) -> _Stderr:
    """Once `bot` has said it will try again (however slowly it started on a busy machine)."""
    err = _Stderr(bot)
    await trio.to_thread.run_sync(err.wait_for, "trying again in")
    return err


async def _admitted(hub: Hub, bot: Any, name: str,
                    err: _Stderr | None = None) -> tuple[str, int, str]:
    """Wait for `bot` (a process) to get in as `name`, end its stream normally, and return
    its hello name, exit status and stderr (read by `err`, if given)."""
    try:
        with trio.fail_after(20):
            while True:
                conn = await hub.connection_for("tok")
                if conn.hello_name == name:
                    break
                await trio.sleep(0.05)
        await conn.close()
        if err is None:
            _, text = await trio.to_thread.run_sync(lambda: bot.communicate(timeout=20))
        else:
            await trio.to_thread.run_sync(lambda: bot.wait(timeout=20))
            text = await trio.to_thread.run_sync(err.text)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
        if bot.stderr is not None and err is None:
            bot.stderr.close()
    return conn.hello_name, bot.returncode, text


@pytest.mark.parametrize("kind", ["sdk", "stdio", "js"])
def test_a_bot_refused_at_the_door_tries_again_and_gets_in(
    kind: str, tmp_path: Path, js_random: list[str],
) -> None:
    """Refused before any welcome with TOO_MANY_CONNECTIONS (here its token already has its
    one allowed connection, held by a raw client until the bot says it will try again, as
    when a bot restarts before the referee has seen its old stream go), each client we ship
    says hello again after 0.25, 0.5, ... s and gets in, instead of exiting 1 (a launched bot
    that exits before it connects forfeits its match)."""
    import os
    import subprocess

    env = {**os.environ, "ARENA_TOKEN": "tok", "ARENA_BOT_NAME": f"retry-{kind}"}
    env.pop("ARENA_TOKEN_FD", None)

    async def main() -> tuple[str, int, str]:
        hub = Hub(hello_timeout=5.0, max_connections_per_token=1)
        hub.admit("tok", "bot")
        async with serve_referee(hub) as server:
            holder = Client(server.port)
            holder.hello("tok")
            assert (await holder.receive()).WhichOneof("body") == "welcome"
            env["ARENA_SERVER"] = f"127.0.0.1:{server.port}"
            bot = subprocess.Popen(_bot_command(kind, tmp_path, js_random), env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            err = await _tried_again(bot)  # refused while the holder holds the connection
            holder.close()
            return await _admitted(hub, bot, f"retry-{kind}", err)

    name, code, err = trio.run(main)
    assert name == f"retry-{kind}", err
    assert code == 0, err
    assert "trying again in" in err


@pytest.mark.parametrize("kind", ["sdk", "stdio", "js"])
def test_a_launched_bot_that_cannot_reach_the_referee_yet_tries_again(
    kind: str, tmp_path: Path, js_random: list[str],
) -> None:
    """A launched bot (ARENA_LAUNCHED=1: no wait_for_ready) whose connection fails before
    any message (UNAVAILABLE: here the referee's socket is not there until it says so,
    as when the launched bots' socket is at its connection cap because another seat holds
    idle connections there) says hello again after a short wait and gets in, instead of
    exiting 1 before connecting (a forfeit). Each client we ship, as a real process."""
    import os
    import subprocess

    socket_path = tmp_path / "referee.sock"
    env = {**os.environ, "ARENA_SERVER": f"unix:{socket_path}", "ARENA_TOKEN": "tok",
           "ARENA_BOT_NAME": f"late-{kind}", "ARENA_LAUNCHED": "1"}
    env.pop("ARENA_TOKEN_FD", None)

    async def main() -> tuple[str, int, str]:
        bot = subprocess.Popen(_bot_command(kind, tmp_path, js_random), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = await _tried_again(bot)  # its first tries find no referee
        hub = Hub(hello_timeout=5.0)
        hub.admit("tok", "bot")
        async with serve_referee(hub, local_addresses=(f"unix:{socket_path}",)):
            return await _admitted(hub, bot, f"late-{kind}", err)

    name, code, err = trio.run(main)
    assert name == f"late-{kind}", err
    assert code == 0, err
    assert "trying again in" in err


def test_a_hello_name_is_logged_bounded_and_printable() -> None:
    """A hello's name and version are the bot's own text, bounded only by the message cap: a
    hostile entrant (review round 5) said hello again and again with 1 MiB names and the log
    grew 22 MB a second. The connection keeps, and `bot_connected` logs, at most 64
    printable characters on one line, and the length it was."""
    name = "\x1b]0;PWNED\x07evil\nline " + "x" * 60_000  # under the 64 KiB message cap

    async def main() -> str:
        hub = Hub(hello_timeout=5.0)
        hub.admit("tok", "bot")
        async with serve_referee(hub) as server:
            client = Client(server.port)
            client.send(pb.BotMessage(hello=pb.Hello(bot_name=name, bot_version="v\t" * 500,
                                                     token="tok", protocol_version=1)))
            assert (await client.receive()).WhichOneof("body") == "welcome"
            conn = await hub.connection_for("tok")
            kept = f"{conn.hello_name}|{conn.hello_version}"
            client.close()
            return kept

    with capture_logs() as logs:
        kept = trio.run(main)
    connected = [e for e in logs if e["event"] == "bot_connected"]
    assert len(connected) == 1, logs
    logged = connected[0]["name"]
    assert logged.startswith("evil line xxx"), logged
    assert logged.endswith(f"... ({len(name)} characters)"), logged
    assert len(logged) < 100
    assert kept.split("|")[0] == logged
    assert len(kept) < 200
    assert all(c.isprintable() for c in kept), kept


def test_a_token_longer_than_any_admitted_is_refused_unread_and_long_ids_are_not_echoed() -> None:
    """A hello whose token is longer than a config admits (256) is refused as an unknown
    token without being compared with the admitted ones (a hostile review, round 5: 1 MiB
    tokens against 200 admitted cost 152 ms of the referee's thread a hello). A stray answer
    whose request id is longer than any the referee issues is refused in-band without the id
    echoed back (it doubled what a flood of them cost)."""

    async def test(hub: Hub, port: int) -> None:
        # Even one the hub was told to admit (no config can): it is not looked up at all.
        hub.admit("t" * 300, "long")
        long_token = Client(port)
        long_token.hello("t" * 300)
        refused = (await long_token.receive()).error
        assert refused.code == pb.ERROR_CODE_UNAUTHENTICATED
        long_token.close()
        client, _conn = await connected(hub, port)
        client.send(action_reply("r" * 5000, "m" * 5000, 0, 0))
        stray = (await client.receive()).error
        assert stray.code == pb.ERROR_CODE_UNKNOWN_REQUEST
        assert (stray.request_id, stray.match_id) == ("", "")
        client.send(action_reply("nope", "m1", 0, 0))
        stray = (await client.receive()).error
        assert (stray.request_id, stray.match_id) == ("nope", "m1")  # short ids: echoed
        client.close()

    run(test)
