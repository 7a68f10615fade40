"""The referee's gRPC face: admits bots, and turns each seat of a connection into a SeatLink.

A thin adapter: it translates between `arena.v1` messages and the referee's values and routes
answers to the request they belong to. It decides no rule and measures no time; the referee
cancels `RemoteSeatLink.ask` when a deadline passes, and a late answer is then refused
in-band with LATE_ANSWER.

    async with serve_referee(hub, "127.0.0.1:0") as server:   # health + reflection included
        hub.admit(token, "random")
        conn = await hub.connection_for(token)
        link = conn.link(match_id, seat, "random")
"""

from __future__ import annotations

import dataclasses
import hmac
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

import arena
from arena.errors import BotDisconnected, ProtocolViolation
from arena.referee import Answer, DecisionRequest, Fault, MatchStart, Outcome
from arena.rpc import convert
from arena.rpc.bridge import (
    BadMessage,
    MessageStream,
    MessageTooLarge,
    StreamClosed,
    StreamRoute,
    serve_grpc,
    server_options,
)
from arena.rules import Event, HandSummary
from arena.rules.views import HandEndEvent
from arena.v1 import arena_pb2 as pb

PROTOCOL_VERSION = 1
PROTOCOL_MINOR = 1  # 1.1: wire-compatible with 1.0 bots (see arena.proto)
SERVICE = "arena.v1.Referee"
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
"""Reflection v1 (what grpcurl and recent tools ask first). grpcio-reflection ships only
v1alpha; v1's messages are v1alpha's with the package renamed (same fields, same numbers), so
the v1alpha servicer answers v1 requests byte for byte."""
STRAY_BANK = 200
"""Stray messages (answering no request) a connection may bank; see `Connection.read_loop`."""
STRAYS_PER_REQUEST = 4
"""Stray messages each request sent to a connection adds to its bank (up to STRAY_BANK)."""


def _batch(messages: list[Any]) -> Any:
    """Several server messages as one `Batch` (for bots whose hello set accepts_batches)."""
    return pb.ServerMessage(batch=pb.Batch(messages=messages))


PLAY_ROUTE = StreamRoute(
    SERVICE, "Play", pb.BotMessage.FromString, pb.ServerMessage.SerializeToString, _batch
)
log = structlog.get_logger("arena.rpc")

Stream = MessageStream[pb.BotMessage, pb.ServerMessage]


def _error(code: Any, message: str, *, request_id: str = "", match_id: str = "") -> Any:
    return pb.ServerMessage(
        error=pb.Error(code=code, message=message, request_id=request_id, match_id=match_id)
    )


class _AnswerSlot:
    """Where the connection's reader puts the answer to one request and its `ask` waits for
    it: a one-shot channel, much cheaper than a trio memory channel per request."""

    __slots__ = ("_ready", "_value")

    def __init__(self) -> None:
        self._value: Answer | ProtocolViolation | None = None
        self._ready = trio.Event()

    def send_nowait(self, value: Answer | ProtocolViolation) -> None:
        """Hand over the answer; `trio.WouldBlock` if one was already handed over or the slot
        is closed."""
        if self._ready.is_set():
            raise trio.WouldBlock
        self._value = value
        self._ready.set()

    def close(self) -> None:
        """No answer will come: the waiting `receive` raises `trio.EndOfChannel`."""
        self._ready.set()

    async def receive(self) -> Answer | ProtocolViolation:
        await self._ready.wait()
        if self._value is None:
            raise trio.EndOfChannel
        return self._value


@dataclass
class _Waiting:
    """A request waiting for its answer on a connection."""

    match_id: str
    seat: int
    deck: Any
    answer: _AnswerSlot


@dataclass
class Connection:
    """One admitted bot connection (one gRPC stream); it may hold many seats."""

    stream: Stream
    bot_name: str
    token: str
    hello_name: str
    hello_version: str
    hub: Hub | None = None
    max_rate: float = 500.0  # messages per second, sustained
    burst: float = 1000.0  # messages allowed in a burst
    max_strays: int = STRAY_BANK  # stray messages banked (see `read_loop`)
    strays_per_request: int = STRAYS_PER_REQUEST  # stray messages each request adds
    closed: trio.Event = field(default_factory=trio.Event)
    close_reason: str = ""
    _waiting: dict[str, _Waiting] = field(default_factory=dict)
    _expired: OrderedDict[str, str] = field(default_factory=OrderedDict)  # request id -> why
    _strays: int = field(init=False)  # stray messages still allowed

    def __post_init__(self) -> None:
        self._strays = self.max_strays

    def link(
        self, match_id: str, seat: int, bot_name: str | None = None, *, reconnect: bool = True
    ) -> RemoteSeatLink:
        """The seat `seat` of match `match_id`, played over this connection. With `reconnect`,
        the seat may move to a later connection with the same token (see `reconnect`)."""
        return RemoteSeatLink(self, match_id, seat, bot_name or self.bot_name, reconnect)

    def send(self, message: Any) -> None:
        """Queue a message; a connection that cannot keep up is closed."""
        if self.closed.is_set():
            return
        try:
            self.stream.send_nowait(message)
        except trio.WouldBlock:
            self._gone("the bot stopped reading its stream")
        except StreamClosed as exc:
            self._gone(exc.reason)

    def _gone(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for waiting in self._waiting.values():
            waiting.answer.close()
        self._waiting.clear()

    def _expire(self, request_id: str, why: str) -> None:
        self._expired[request_id] = why
        while len(self._expired) > 1024:
            self._expired.popitem(last=False)

    async def read_loop(self) -> None:
        """Route every answer to its request until the stream ends or the bot floods it.

        Two flood limits, both wire limits like gRPC's message size and keepalive:

        * stray messages — anything but the answer to a request the referee sent (an unknown,
          duplicate or late request id, an answer for another seat, a second hello): the
          connection banks `max_strays` of them and earns `strays_per_request` more with every
          request it is sent (up to `max_strays`). This limit counts messages, not time, so it
          catches a flood however slowly a busy referee reads it.
        * all messages — a token bucket of `burst` refilled at `max_rate` per second.
        """
        allowance, last = self.burst, trio.current_time()
        try:
            while True:
                message = await self.stream.receive()
                now = trio.current_time()
                allowance = min(self.burst, allowance + (now - last) * self.max_rate)
                last = now
                if allowance < 1:
                    await self._flooded(f"more than {self.max_rate:g} messages per second")
                    return
                allowance -= 1
                if not self._on_message(message):
                    self._strays -= 1
                    if self._strays < 0:
                        await self._flooded(
                            f"more than {self.max_strays} messages that answer no request"
                        )
                        return
        except MessageTooLarge as exc:  # refused unread: end the stream, say why
            self.send(_error(pb.ERROR_CODE_MESSAGE_TOO_LARGE, exc.reason))
            self._gone(exc.reason)
            await self.stream.aclose(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.reason)
        except BadMessage as exc:  # nothing more is read: end the stream, say why
            self.send(_error(pb.ERROR_CODE_MALFORMED, exc.reason))
            self._gone(exc.reason)
            await self.stream.aclose(grpc.StatusCode.INVALID_ARGUMENT, exc.reason)
        except StreamClosed as exc:
            self._gone(exc.reason or "stream closed")

    async def _flooded(self, what: str) -> None:
        text = f"{what}: the stream is closed"
        self.send(_error(pb.ERROR_CODE_RATE_LIMITED, text))
        self._gone(f"message flood ({text})")
        await self.stream.aclose(grpc.StatusCode.RESOURCE_EXHAUSTED, text)

    def _on_message(self, message: Any) -> bool:
        """Route one message; False if it answered no request (a stray message)."""
        body = message.WhichOneof("body")
        if body != "action":
            what = "a second hello" if body == "hello" else "an empty message"
            self.send(_error(pb.ERROR_CODE_MALFORMED, f"expected an action reply, got {what}"))
            return False
        reply = message.action
        rid = reply.request_id
        waiting = self._waiting.get(rid)
        if waiting is None:
            why = self._expired.get(rid)
            if why == "answered":
                code, text = pb.ERROR_CODE_DUPLICATE_ANSWER, "this request was already answered"
            elif why is not None:
                code, text = pb.ERROR_CODE_LATE_ANSWER, "the deadline passed; answer discarded"
            else:
                code, text = pb.ERROR_CODE_UNKNOWN_REQUEST, "no such request on this connection"
            self.send(_error(code, text, request_id=rid, match_id=reply.match_id))
            return False
        if reply.match_id != waiting.match_id or reply.seat != waiting.seat:
            self.send(
                _error(
                    pb.ERROR_CODE_NOT_YOUR_SEAT,
                    f"request {rid} is for match {waiting.match_id} seat {waiting.seat}",
                    request_id=rid,
                    match_id=reply.match_id,
                )
            )
            return False
        del self._waiting[rid]
        self._expire(rid, "answered")
        choice = reply.WhichOneof("choice")
        answer: Answer | ProtocolViolation
        try:
            signal = (
                convert.signal_from_proto(reply.signal) if reply.HasField("signal") else None
            )
            if choice == "action_index":
                answer = Answer(action_index=reply.action_index, signal=signal)
            elif choice == "action":
                action = convert.action_from_proto(reply.action, waiting.deck)
                answer = Answer(action=action, signal=signal)
            else:
                answer = ProtocolViolation(
                    "the answer chose no action (set action_index or action)"
                )
        except ProtocolViolation as exc:
            answer = exc
        if isinstance(answer, ProtocolViolation):
            self.send(
                _error(pb.ERROR_CODE_MALFORMED, str(answer), request_id=rid,
                       match_id=reply.match_id)
            )
        with suppress(trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            waiting.answer.send_nowait(answer)
        return True

    async def ask(self, match_id: str, seat: int, deck: Any, message: Any, rid: str) -> Answer:
        if self.closed.is_set():
            raise BotDisconnected(f"{self.bot_name}: {self.close_reason}")
        slot = _AnswerSlot()
        self._waiting[rid] = _Waiting(match_id, seat, deck, slot)
        self._strays = min(self.max_strays, self._strays + self.strays_per_request)
        answered = False
        try:
            self.send(message)
            try:
                answer = await slot.receive()
            except trio.EndOfChannel:
                raise BotDisconnected(f"{self.bot_name}: {self.close_reason}") from None
            answered = True
        finally:
            if not answered and self._waiting.pop(rid, None) is not None:
                self._expire(rid, "late")
        if isinstance(answer, ProtocolViolation):
            raise answer
        return answer

    async def close(self, details: str = "") -> None:
        """End the stream normally (the bot has no more matches here)."""
        self._gone(details or "closed by the referee")
        await self.stream.aclose(grpc.StatusCode.OK, details)


class RemoteSeatLink:
    """A `SeatLink` over a bot connection."""

    def __init__(
        self, conn: Connection, match_id: str, seat: int, bot_name: str, reconnect: bool = True
    ) -> None:
        self.conn = conn
        self.match_id = match_id
        self.seat = seat
        self._name = bot_name
        self._deck: Any = None
        self._can_reconnect = reconnect and conn.hub is not None
        self._started: Any = None

    @property
    def bot_name(self) -> str:
        return self._name

    async def reconnect(self) -> None:
        """Wait for the bot to connect again with the same token, move the seat there, and
        re-send its match start (the referee then re-sends the pending request with the
        current view). The referee bounds the wait; without a hub, or for a launched bot's
        one-off token, the seat cannot come back."""
        hub = self.conn.hub
        if not self._can_reconnect or hub is None:
            raise BotDisconnected(f"{self._name}: {self.conn.close_reason}")
        self.conn = await hub.connection_for(self.conn.token)  # a live one: not the old
        log.info("seat_reconnected", bot=self._name, match_id=self.match_id, seat=self.seat)
        if self._started is not None:
            self.conn.send(self._started)

    async def start(self, start: MatchStart) -> None:
        self._deck = convert.deck_of(start.variant)
        tc = start.time_control
        self._started = pb.ServerMessage(
                game_started=pb.GameStarted(
                    match_id=start.match_id,
                    variant=start.variant,
                    options=convert.options_to_proto(start.options),
                    seat=start.seat,
                    team=start.team,
                    seats=[
                        pb.SeatInfo(seat=s, team=start.team_of[s], bot_name=name)
                        for s, name in enumerate(start.seat_names)
                    ],
                    time_control=pb.TimeControl(
                        decision_ms=tc.decision_ms, bank_ms=tc.bank_ms,
                        increment_ms=tc.increment_ms, grace_ms=tc.grace_ms,
                    ),
                )
            )
        self.conn.send(self._started)

    async def ask(self, request: DecisionRequest) -> Answer:
        message = pb.ServerMessage()
        decision = message.decision
        decision.request_id = request.request_id
        decision.match_id = request.match_id
        decision.seat = request.seat
        convert.view_into(decision.view, request.view)
        convert.legal_actions_into(decision, request.legal_actions)
        decision.deadline_unix_ms = request.deadline_unix_ms
        decision.time_left_ms = request.time_left_ms
        return await self.conn.ask(
            self.match_id, self.seat, self._deck, message, request.request_id
        )

    def tell(self, item: Event | HandSummary) -> None:
        body = HandEndEvent(item) if isinstance(item, HandSummary) else item.body
        self.conn.send(convert.event_to_proto(body, match_id=self.match_id, seat=self.seat))

    def fault(self, fault: Fault) -> None:
        code = pb.ERROR_CODE_TIMEOUT if fault.kind == "timeout" else pb.ERROR_CODE_ILLEGAL_ACTION
        message = (
            f"{fault.kind} (strike {fault.strikes} of {fault.max_strikes}): {fault.detail}"
        )
        self.conn.send(
            pb.ServerMessage(
                error=pb.Error(
                    code=code, message=message, request_id=fault.request_id,
                    match_id=self.match_id, seat=fault.seat, detail=fault.detail,
                    strikes=fault.strikes, max_strikes=fault.max_strikes,
                )
            )
        )

    async def finish(self, outcome: Outcome) -> None:
        result = outcome.result
        msg = pb.MatchOutcome(
            termination=pb.Termination.Name(int(outcome.termination)),
            detail=outcome.detail,
            strikes=list(outcome.strikes),
        )
        if outcome.winner_team is not None:
            msg.winner_team = outcome.winner_team
        if outcome.faulty_seat is not None:
            msg.faulty_seat = outcome.faulty_seat
        if result is not None:
            msg.result.CopyFrom(convert.result_to_proto(result))
        self.conn.send(
            pb.ServerMessage(game_over=pb.GameOver(match_id=self.match_id, seat=self.seat,
                                                   outcome=msg))
        )


class Hub:
    """Admits connections by token and hands them to whoever waits for that token."""

    def __init__(
        self,
        *,
        hello_timeout: float = 10.0,
        max_connections_per_token: int = 4,
        max_messages_per_second: float = 500.0,
        max_stray_messages: int = STRAY_BANK,
    ) -> None:
        self.hello_timeout = hello_timeout
        self.max_connections_per_token = max_connections_per_token
        self.max_messages_per_second = max_messages_per_second
        self.max_stray_messages = max_stray_messages
        self._tokens: dict[str, str] = {}  # token -> bot name
        self._connections: dict[str, list[Connection]] = {}
        self._last_close: dict[str, str] = {}  # token -> why its latest connection closed
        self._changed = trio.Event()

    def admit(self, token: str, bot_name: str) -> None:
        """Let connections with `token` in, as `bot_name`."""
        self._tokens[token] = bot_name

    def revoke(self, token: str) -> None:
        """Refuse `token` from now on (connections already in stay)."""
        self._tokens.pop(token, None)
        self._last_close.pop(token, None)

    def last_close(self, token: str) -> str | None:
        """Why the latest connection admitted with `token` closed (None if none closed)."""
        return self._last_close.get(token)

    @staticmethod
    def new_token() -> str:
        """An unguessable one-off token (for a bot process the referee launches)."""
        return secrets.token_urlsafe(24)

    def _lookup(self, token: str) -> str | None:
        found = None
        for known, name in self._tokens.items():  # constant time per comparison
            if hmac.compare_digest(known.encode(), token.encode()):
                found = name
        return found

    async def connection_for(self, token: str) -> Connection:
        """Wait until a live connection with `token` is in; return it."""
        while True:
            for conn in self._connections.get(token, []):
                if not conn.closed.is_set():
                    return conn
            changed = self._changed
            await changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def close_all(self, details: str = "the tournament is over") -> None:
        """End every open connection normally (status OK): no more matches here."""
        for conns in list(self._connections.values()):
            for conn in list(conns):
                await conn.close(details)

    async def accept(self, streams: trio.abc.ReceiveChannel[Any]) -> None:
        """Serve every incoming stream (run in a nursery for the server's lifetime)."""
        async with trio.open_nursery() as nursery:
            async for stream in streams:
                nursery.start_soon(self._serve_stream, stream)

    async def _serve_stream(self, stream: Stream) -> None:
        conn = await self._hello(stream)
        if conn is None:
            return
        self._connections.setdefault(conn.token, []).append(conn)
        self._notify()
        log.info("bot_connected", bot=conn.bot_name, peer=stream.peer, name=conn.hello_name)
        try:
            await conn.read_loop()
        finally:
            self._connections[conn.token].remove(conn)
            if conn.token in self._tokens:  # a revoked one-off token is forgotten
                self._last_close[conn.token] = conn.close_reason
            self._notify()
            log.info("bot_disconnected", bot=conn.bot_name, reason=conn.close_reason)

    async def _hello(self, stream: Stream) -> Connection | None:
        with trio.move_on_after(self.hello_timeout):
            try:
                first = await stream.receive()
            except BadMessage as exc:
                await self._refuse(stream, pb.ERROR_CODE_BAD_HELLO,
                                   f"the first message must be a hello: {exc.reason}",
                                   grpc.StatusCode.INVALID_ARGUMENT)
                return None
            except StreamClosed:
                return None
            if first.WhichOneof("body") != "hello":
                await self._refuse(stream, pb.ERROR_CODE_BAD_HELLO,
                                   "the first message must be a hello",
                                   grpc.StatusCode.INVALID_ARGUMENT)
                return None
            hello = first.hello
            if hello.protocol_version != PROTOCOL_VERSION:
                await self._refuse(
                    stream, pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
                    f"protocol version {hello.protocol_version} is not supported; "
                    f"this referee speaks {PROTOCOL_VERSION}",
                    grpc.StatusCode.FAILED_PRECONDITION,
                )
                return None
            name = self._lookup(hello.token)
            if name is None:
                await self._refuse(stream, pb.ERROR_CODE_UNAUTHENTICATED,
                                   "unknown token: use the token the organiser gave you",
                                   grpc.StatusCode.UNAUTHENTICATED)
                return None
            live = [c for c in self._connections.get(hello.token, []) if not c.closed.is_set()]
            if len(live) >= self.max_connections_per_token:
                await self._refuse(
                    stream, pb.ERROR_CODE_TOO_MANY_CONNECTIONS,
                    f"this token already has {len(live)} open connections "
                    f"(at most {self.max_connections_per_token})",
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                )
                return None
            conn = Connection(
                stream, name, hello.token, hello.bot_name, hello.bot_version, hub=self,
                max_rate=self.max_messages_per_second,
                burst=2 * self.max_messages_per_second,
                max_strays=self.max_stray_messages,
            )
            conn.send(
                pb.ServerMessage(
                    welcome=pb.Welcome(
                        protocol_version=PROTOCOL_VERSION,
                        protocol_minor=PROTOCOL_MINOR,
                        server_version=arena.__version__,
                        session_id=secrets.token_hex(8),
                    )
                )
            )
            if hello.accepts_batches:
                stream.send_in_batches()
            return conn
        await self._refuse(stream, pb.ERROR_CODE_BAD_HELLO,
                           f"no hello within {self.hello_timeout} s",
                           grpc.StatusCode.DEADLINE_EXCEEDED)
        return None

    @staticmethod
    async def _refuse(stream: Stream, code: int, text: str, status: grpc.StatusCode) -> None:
        with suppress(trio.WouldBlock, StreamClosed):
            stream.send_nowait(_error(code, text))
        await stream.aclose(status, text)


def _add_standard_services(server: grpc.aio.Server) -> None:
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    # Both the whole server ("") and the referee service report SERVING while it runs.
    for name in ("", SERVICE):
        health._server_status[name] = health_pb2.HealthCheckResponse.SERVING
    names = (
        SERVICE,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
        REFLECTION_V1,
    )
    servicer = reflection.aio.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    info = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": info}),)
    )


@asynccontextmanager
async def serve_referee(
    hub: Hub,
    address: str = "127.0.0.1:0",
    *,
    credentials: grpc.ServerCredentials | None = None,
    max_message_bytes: int = 1 << 20,
) -> AsyncIterator[Any]:
    """Run the referee's gRPC server (with health and reflection) feeding `hub`.

    A bot message over `max_message_bytes` is refused in-band (MESSAGE_TOO_LARGE, naming its
    size) and ends its stream; gRPC itself only stops messages over four times that, which
    it does without saying why."""
    async with serve_grpc(
        address,
        [dataclasses.replace(PLAY_ROUTE, max_request_bytes=max_message_bytes)],
        configure=_add_standard_services,
        options=server_options(
            max_message_bytes=max_message_bytes, max_receive_bytes=4 * max_message_bytes
        ),
        credentials=credentials,
        window=4096,
    ) as server, trio.open_nursery() as nursery:
        nursery.start_soon(hub.accept, server.incoming)
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
