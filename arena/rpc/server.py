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
import resource
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2

import arena
from arena.buckets import TokenBuckets
from arena.errors import BotDisconnected, ProtocolViolation
from arena.referee import (
    Answer,
    DecisionRequest,
    Fault,
    Interrupted,
    MatchStart,
    Outcome,
    PendingAnswer,
)
from arena.rpc import convert, encode, peers
from arena.rpc.bridge import (
    BadMessage,
    GrpcServerThread,
    MessageStream,
    MessageTooLarge,
    SeatDoor,
    StreamClosed,
    StreamRoute,
    serve_grpc,
    server_options,
)
from arena.rpc.spectator import SERVICE as SPECTATOR_SERVICE
from arena.rpc.spectator import SpectatorFeed
from arena.rpc.spectator import add_to_server as add_spectator_service
from arena.rules import Event, HandSummary
from arena.rules.views import HandEndEvent
from arena.safe_text import brief
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
NO_TOKEN = ("no token: a bot the referee launches reads it once from the file descriptor "
            "named in ARENA_TOKEN_FD; a remote bot gives the one the organiser gave it "
            "(--token or ARENA_TOKEN)")
"""Why a hello with an empty token is refused (the usual slip of a bot written by hand)."""


MATCHES_NOTED = 64
"""Match ids a connection notes for its `messages_refused` line (a launched seat plays one)."""

EXPIRED_KEPT = 8192
"""Request ids a connection remembers after their answer or deadline (to tell a late answer
from an unknown one)."""


_batch_message = encode.batch
"""Several server messages (objects or bytes) as one `Batch`, for bots whose hello set
accepts_batches."""

PLAY_ROUTE = StreamRoute(
    SERVICE, "Play", pb.BotMessage.FromString, encode.serialize, _batch_message
)
"""Server messages go out as protobuf messages or, for the decisions and events of a match,
as their bytes already (`arena.rpc.encode`)."""
log = structlog.get_logger("arena.rpc")

Stream = MessageStream[pb.BotMessage, pb.ServerMessage]


STRAY_KIB = 1024
"""A stray message costs one of its connection's stray allowance, plus one per whole KiB."""

TOKEN_MAX = 256
"""The longest token a config admits (`[[bot]] token`); the referee's own are shorter."""

RECEIVE_SLACK = 2
"""gRPC's own cap on a message the referee receives, in bot messages' caps: between the
two the referee explains its refusal in-band; past it gRPC refuses before buffering."""

BOT_MESSAGE_BYTES = 64 * 1024
"""The largest message a bot may send (`serve_referee`)."""

ECHO_MAX = 1024
"""Ids a bot sent are echoed in an `Error` only up to this length (the referee's own are
shorter: a request id of a few dozen characters, a match id of at most a few hundred): a
longer one is a bot's invention, and echoing it doubled what a flood of them cost."""


def _error(code: Any, message: str, *, request_id: str = "", match_id: str = "") -> Any:
    return pb.ServerMessage(error=pb.Error(
        code=code, message=message,
        request_id=request_id if len(request_id) <= ECHO_MAX else "",
        match_id=match_id if len(match_id) <= ECHO_MAX else "",
    ))


class _AnswerSlot:
    """Where the connection's reader puts the answer to one request and its `ask` waits for
    it: a one-shot channel with at most one waiting task, parked and rescheduled directly
    (no trio memory channel, no `Event` and its parking lot, per request)."""

    __slots__ = ("_done", "_interrupted", "_task", "_value")

    def __init__(self) -> None:
        self._value: Answer | ProtocolViolation | None = None
        self._done = False  # an answer was handed over, or the slot closed
        self._interrupted = False  # the waiting task was woken by `interrupt`
        self._task: trio.lowlevel.Task | None = None  # the task waiting in `receive`

    def send_nowait(self, value: Answer | ProtocolViolation) -> None:
        """Hand over the answer; `trio.WouldBlock` if one was already handed over or the slot
        is closed."""
        if self._done:
            raise trio.WouldBlock
        self._value = value
        self._done = True
        self._wake()

    def close(self) -> None:
        """No answer will come: the waiting `receive` raises `trio.EndOfChannel`."""
        self._done = True
        self._wake()

    def interrupt(self) -> None:
        """End a waiting `receive` (one not yet handed its answer) with `Interrupted`."""
        if self._task is not None:
            self._interrupted = True
            self._wake()

    def _wake(self) -> None:
        task = self._task
        if task is not None:
            self._task = None
            trio.lowlevel.reschedule(task)

    def _abort(self, _: Any) -> trio.lowlevel.Abort:
        self._task = None
        return trio.lowlevel.Abort.SUCCEEDED

    async def receive(self) -> Answer | ProtocolViolation:
        if self._done:
            await trio.lowlevel.checkpoint()
        else:
            self._task = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort)
            if self._interrupted:
                self._interrupted = False
                raise Interrupted
        if self._value is None:
            raise trio.EndOfChannel
        return self._value


class _Waiting:
    """A request waiting for its answer on a connection; the referee's `PendingAnswer`.

    It reports when the request was handed to gRPC (`handed_at`) and when it left
    (`sent_at`, once gRPC has written it), both set by the bridge's writer on the gRPC
    thread, and when its answer arrived (`received_at`, read off the wire on the gRPC
    thread), all time.monotonic(); it judges nothing: the referee does.
    """

    __slots__ = ("answer", "conn", "deck", "handed_at", "match_id", "received_at", "rid", "seat",
                 "sent_at")

    def __init__(self, conn: Connection, rid: str, match_id: str, seat: int, deck: Any) -> None:
        self.conn = conn
        self.rid = rid
        self.match_id = match_id
        self.seat = seat
        self.deck = deck
        self.answer = _AnswerSlot()
        self.sent_at: float | None = None
        self.handed_at: float | None = None
        self.received_at: float | None = None

    def unread_since(self) -> float | None:
        return self.conn.stream.unread_since()

    def interrupt(self) -> None:
        self.answer.interrupt()

    async def wait(self) -> Answer:
        """The answer; may be cancelled and awaited again (the request stays open until
        answered or `abandon`-ed)."""
        try:
            answer = await self.answer.receive()
        except trio.EndOfChannel:
            raise BotDisconnected(f"{self.conn.bot_name}: {self.conn.close_reason}") from None
        if isinstance(answer, ProtocolViolation):
            raise answer
        return answer

    def abandon(self) -> None:
        """The referee gave up: a later answer is LATE_ANSWER."""
        conn = self.conn
        if conn._waiting.pop(self.rid, None) is not None:
            conn._expire(self.rid, "late")


def _read_answer(reply: Any, deck: Any) -> Answer | ProtocolViolation:
    """An `ActionReply` as the referee's `Answer`, or why it cannot be one. Never raises: a
    bot's bytes reach code (card notation, enums, signals) that may fail in ways nobody
    listed, and an answer that raised here was taken off its request and never handed on —
    the referee waited for it forever (hostile review round 5: card text "⁷e")."""
    choice = reply.WhichOneof("choice")
    try:
        signal, unreadable = None, ""
        if reply.HasField("signal"):
            try:
                signal = convert.signal_from_proto(reply.signal)
            except ProtocolViolation as exc:  # refused alone: the action goes ahead
                unreadable = str(exc)
        if choice == "action_index":
            return Answer(action_index=reply.action_index, signal=signal,
                          unreadable_signal=unreadable)
        if choice == "action":
            return Answer(action=convert.action_from_proto(reply.action, deck), signal=signal,
                          unreadable_signal=unreadable)
        return ProtocolViolation("the answer chose no action (set action_index or action)")
    except ProtocolViolation as exc:
        return exc
    except Exception as exc:  # a bug of ours a bot found: its answer is unreadable, not lost
        log.exception("answer_unreadable", error=repr(exc)[:200])
        return ProtocolViolation(f"the answer could not be read ({type(exc).__name__})")


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
    refused: Counter[str] = field(default_factory=Counter)
    """Messages refused in-band (an `Error` sent back) and otherwise ignored, by error code
    (``UNKNOWN_REQUEST``, ``DUPLICATE_ANSWER``, ``NOT_YOUR_SEAT``, ``MALFORMED``: a second
    hello or an empty message, ``LATE_ANSWER``); an unreadable answer is not one of them:
    it reaches its request, and the referee strikes it."""
    refused_first: dict[str, str] = field(default_factory=dict)  # code -> the first's text
    matches: dict[str, None] = field(default_factory=dict)  # ids of the matches it played
    in_play: set[tuple[str, int]] = field(default_factory=set)
    """The seats (match id, seat) linked to this connection whose match has not let go yet."""
    retired: str = ""
    """Why its token was withdrawn (`Hub.retire`): it is told so and closed once no seat of
    it is in play."""
    _reading: trio.CancelScope = field(default_factory=trio.CancelScope)

    def __post_init__(self) -> None:
        self._strays = self.max_strays

    def link(
        self, match_id: str, seat: int, bot_name: str | None = None, *, reconnect: bool = True
    ) -> RemoteSeatLink:
        """The seat `seat` of match `match_id`, played over this connection. With `reconnect`,
        the seat may move to a later connection with the same token (see `reconnect`)."""
        if len(self.matches) < MATCHES_NOTED:
            self.matches[match_id] = None
        self.in_play.add((match_id, seat))
        return RemoteSeatLink(self, match_id, seat, bot_name or self.bot_name, reconnect)

    def release(self, match_id: str, seat: int) -> None:
        """The match of this seat is over here (ended, forfeited, abandoned, or the seat
        moved to another connection)."""
        self.in_play.discard((match_id, seat))
        if self.retired and not self.in_play:
            self._reading.cancel()

    def retire(self, why: str) -> None:
        """Its token no longer admits anyone: the seats in play finish their matches, then
        the bot is told `why` (an in-band `UNAUTHENTICATED` error) and the stream ends with
        PERMISSION_DENIED. Left open, a retired bot's idle connection sat silent until the
        referee stopped, and its author never learnt why no match came (an outside
        walkthrough)."""
        self.retired = why
        if not self.in_play:
            self._reading.cancel()

    def _refuse(self, code: Any, text: str, *, request_id: str = "", match_id: str = "") -> None:
        """Refuse a message in-band, and count it (`refused`; logged as `messages_refused`
        when the connection ends, which `arena check` reads)."""
        name = pb.ErrorCode.Name(code).removeprefix("ERROR_CODE_")
        self.refused[name] += 1
        if name not in self.refused_first:
            where = (f" (request {brief(request_id, 100)!r})"
                     if request_id and request_id not in text else "")
            self.refused_first[name] = text + where
        self.send(_error(code, text, request_id=request_id, match_id=match_id))

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
        while len(self._expired) > EXPIRED_KEPT:
            self._expired.popitem(last=False)

    async def read_loop(self) -> None:
        """Route every answer to its request until the stream ends or the bot floods it.

        Two flood limits, both wire limits like gRPC's message size and keepalive:

        * stray messages — anything but the answer to a request the referee sent (an unknown
          or duplicate request id, an answer for another seat, a second hello; a late answer,
          the first after its deadline, is refused in-band but is not a stray): the
          connection banks `max_strays` of them and earns `strays_per_request` more with every
          request it is sent (up to `max_strays`). This limit counts messages, not time, so it
          catches a flood however slowly a busy referee reads it.
        * the same messages per second — a token bucket of `burst` refilled at `max_rate`
          per second. Answers to requests the referee sent (late ones included) count
          towards neither: they are bounded by the requests, and a connection may hold many
          seats.
        """
        allowance, last = self.burst, trio.current_time()
        take_on_arrival = getattr(self.stream, "take_on_arrival", None)
        if take_on_arrival is not None:  # answers routed as they arrive (`_route_answer`)
            take_on_arrival(self._route_answer)
        try:
            with self._reading:  # cancelled by `retire` once no seat is in play
                while True:
                    message = await self.stream.receive()
                    if self._on_message(message):
                        continue  # an answer to a request the referee sent: bounded
                    now = trio.current_time()
                    allowance = min(self.burst, allowance + (now - last) * self.max_rate)
                    last = now
                    if allowance < 1:
                        await self._flooded(f"more than {self.max_rate:g} messages per second")
                        return
                    allowance -= 1
                    # Weighed by size: each started KiB a stray, so 60 KiB strays are not
                    # 200 a connection (hostile review round 5: their parsing struck honest
                    # bots).
                    self._strays -= 1 + message.ByteSize() // STRAY_KIB
                    if self._strays < 0:
                        await self._flooded(
                            f"more than {self.max_strays} messages that answer no request"
                        )
                        return
            text = f"{self.retired}: this connection is closed"
            self.send(_error(pb.ERROR_CODE_UNAUTHENTICATED, text))
            self._gone(f"token withdrawn ({self.retired})")
            await self.stream.aclose(grpc.StatusCode.PERMISSION_DENIED, text)
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

    def _route_answer(self, message: Any) -> bool:
        """Route `message` at once if it answers a request this connection is waiting on (for
        the seat and match it was sent to); anything else is left, untouched, to `read_loop`
        (which counts strays and refuses what is wrong)."""
        if message.WhichOneof("body") != "action":
            return False
        reply = message.action
        waiting = self._waiting.get(reply.request_id)
        if waiting is None or reply.match_id != waiting.match_id or reply.seat != waiting.seat:
            return False
        return self._on_message(message)

    def _on_message(self, message: Any) -> bool:
        """Route one message; False if it answered no request (a stray message)."""
        body = message.WhichOneof("body")
        if body != "action":
            what = "a second hello" if body == "hello" else "an empty message"
            self._refuse(pb.ERROR_CODE_MALFORMED, f"expected an action reply, got {what}")
            return False
        reply = message.action
        rid = reply.request_id
        waiting = self._waiting.get(rid)
        if waiting is None:
            why = self._expired.get(rid)
            if why == "late":
                # The first answer to a request the referee really sent, after its deadline:
                # a bot that stalled and answers its backlog. Refused in-band, never counted
                # as flood evidence (each request earns at most one such answer).
                self._expired[rid] = "answered"
                self._refuse(pb.ERROR_CODE_LATE_ANSWER, "the deadline passed; answer discarded",
                             request_id=rid, match_id=reply.match_id)
                return True
            if why == "answered":
                code, text = pb.ERROR_CODE_DUPLICATE_ANSWER, "this request was already answered"
            else:
                code, text = pb.ERROR_CODE_UNKNOWN_REQUEST, "no such request on this connection"
            self._refuse(code, text, request_id=rid, match_id=reply.match_id)
            return False
        if reply.match_id != waiting.match_id or reply.seat != waiting.seat:
            self._refuse(
                pb.ERROR_CODE_NOT_YOUR_SEAT,
                f"request {rid} is for match {waiting.match_id!r} seat {waiting.seat}; "
                f"the reply said match {brief(reply.match_id, 100)!r} seat {reply.seat} "
                "(echo both from the DecisionRequest)",
                request_id=rid,
                match_id=reply.match_id,
            )
            return False
        answer = _read_answer(reply, waiting.deck)
        del self._waiting[rid]
        self._expire(rid, "answered")
        waiting.received_at = self.stream.received_at
        if isinstance(answer, ProtocolViolation):  # a strike, the referee's: not `refused`
            self.send(_error(pb.ERROR_CODE_MALFORMED, str(answer), request_id=rid,
                             match_id=reply.match_id))
        with suppress(trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            waiting.answer.send_nowait(answer)
        return True

    def post(self, match_id: str, seat: int, deck: Any, message: Any, rid: str) -> _Waiting:
        """Send a decision request; the handle reports when it left and waits for its answer."""
        if self.closed.is_set():
            raise BotDisconnected(f"{self.bot_name}: {self.close_reason}")
        waiting = _Waiting(self, rid, match_id, seat, deck)
        self._waiting[rid] = waiting
        self._strays = min(self.max_strays, self._strays + self.strays_per_request)
        if not self.closed.is_set():
            try:
                self.stream.send_nowait(message, waiting)
            except trio.WouldBlock:
                self._gone("the bot stopped reading its stream")
            except StreamClosed as exc:
                self._gone(exc.reason)
        return waiting

    async def ask(self, match_id: str, seat: int, deck: Any, message: Any, rid: str) -> Answer:
        waiting = self.post(match_id, seat, deck, message, rid)
        answered = False
        try:
            answer = await waiting.wait()
            answered = True
        finally:
            if not answered:
                waiting.abandon()
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
        self._decision_address = encode.decision_address(match_id, seat)
        self._event_address = encode.event_address(match_id, seat)
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
        old = self.conn
        self.conn = await hub.connection_for(self.conn.token)  # a live one: not the old
        old.release(self.match_id, self.seat)
        self.conn.in_play.add((self.match_id, self.seat))
        log.info("seat_reconnected", bot=self._name, match_id=self.match_id, seat=self.seat)
        if self._started is not None:
            self.conn.send(self._started)

    def release(self) -> None:
        """The match is over for this seat (its runner lets go of it, however it ended)."""
        self.conn.release(self.match_id, self.seat)

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
        return await self.conn.ask(
            self.match_id, self.seat, self._deck, self._decision(request), request.request_id
        )

    def _decision(self, request: DecisionRequest) -> bytes:
        """The request's `ServerMessage`, as its bytes (`arena.rpc.encode`)."""
        address = self._decision_address
        if request.match_id != self.match_id or request.seat != self.seat:
            address = encode.decision_address(request.match_id, request.seat)
        return encode.decision_message(
            address, request.request_id, request.view, request.legal_actions,
            request.deadline_unix_ms, request.time_left_ms,
        )

    def post(self, request: DecisionRequest) -> PendingAnswer:
        """Send the request now; the referee waits on the handle and judges its times."""
        return self.conn.post(
            self.match_id, self.seat, self._deck, self._decision(request), request.request_id
        )

    def tell(self, item: Event | HandSummary) -> None:
        body = HandEndEvent(item) if isinstance(item, HandSummary) else item.body
        self.conn.send(encode.event_message(self._event_address, body, self.match_id, self.seat))

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
        max_pending: int = 256,
    ) -> None:
        self.hello_timeout = hello_timeout
        # Streams that have sent nothing yet, at most `max_pending` through each door
        # (`_serve_stream`): a flood of silent streams from the network cannot keep the
        # referee's own launched bots out, who come through their socket; and at a full door
        # a newcomer closes the stream that has been silent longest, so a flood through either
        # door (a launched bot can reach its socket too) cannot keep an honest bot out: its
        # hello comes with its stream, while the flood's streams wait with nothing to say.
        self.max_pending = max_pending
        self._silent: dict[str, dict[Stream, trio.CancelScope]] = {"launched": {},
                                                                    "network": {}}
        self._full_noted: dict[str, float] = {}  # door -> when its being full was last logged
        self._evicted: Counter[str] = Counter()  # door -> silent streams closed for newcomers
        self.max_connections_per_token = max_connections_per_token
        self.max_messages_per_second = max_messages_per_second
        self.max_stray_messages = max_stray_messages
        self._tokens: dict[str, str] = {}  # token -> bot name
        self._connections: dict[str, list[Connection]] = {}
        self._last_close: dict[str, str] = {}  # token -> why its latest connection closed
        self._gone_since: dict[str, float] = {}  # token -> trio time its last connection closed
        # Launched seats' tokens -> the root pid of the seat's process tree (None: not known
        # yet, see `bind_owner`), and an event set once it is known.
        self._owners: dict[str, int | None] = {}
        self._owner_known: dict[str, trio.Event] = {}
        self._owner_names: dict[str, str] = {}  # launched token -> bot name
        self._convicted: dict[str, str] = {}  # token of a seat caught hijacking -> why
        self._changed = trio.Event()

    def admit(
        self, token: str, bot_name: str, owner_pid: int | None = None, *, launched: bool = False
    ) -> None:
        """Let connections with `token` in, as `bot_name`.

        A launched seat's token (`launched`, or an `owner_pid` given) is bound to a process
        tree: over TCP loopback, a hello presenting it is refused unless the connecting
        socket belongs to the process `owner_pid` or one of its descendants. Without
        `owner_pid` such a hello waits (within the hello deadline) for `bind_owner`."""
        self._tokens[token] = bot_name
        if launched or owner_pid is not None:
            self._owners[token] = owner_pid
            self._owner_names[token] = bot_name
            self._owner_known[token] = known = trio.Event()
            if owner_pid is not None:
                known.set()

    def bind_owner(self, token: str, pid: int) -> None:
        """The process tree rooted at `pid` owns the launched seat of `token` (call once the
        process has started)."""
        if token in self._tokens:
            self._owners[token] = pid
            self._owner_known.setdefault(token, trio.Event()).set()

    def revoke(self, token: str) -> None:
        """Refuse `token` from now on (connections already in stay)."""
        self._tokens.pop(token, None)
        self._last_close.pop(token, None)
        self._gone_since.pop(token, None)
        if not self.is_connected(token):  # a seat in play keeps its owner: thieves are named
            self._forget_owner(token)

    def retire(self, token: str, why: str) -> None:
        """`revoke` `token`, and close its connections once their matches are over, telling
        the bot `why` (`Connection.retire`)."""
        self.revoke(token)
        for conn in list(self._connections.get(token, [])):
            conn.retire(why)

    def _forget_owner(self, token: str) -> None:
        self._owners.pop(token, None)
        self._owner_known.pop(token, None)
        self._owner_names.pop(token, None)
        self._convicted.pop(token, None)

    def is_connected(self, token: str) -> bool:
        """Whether a live connection with `token` is in."""
        return any(not c.closed.is_set() for c in self._connections.get(token, []))

    def gone_since(self, token: str) -> float | None:
        """The trio time at which the last live connection with `token` closed; None if the
        token never connected or is connected now."""
        return None if self.is_connected(token) else self._gone_since.get(token)

    async def changed(self) -> None:
        """Wait until a connection comes in or goes away."""
        await self._changed.wait()

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

    async def accept(
        self, streams: trio.abc.ReceiveChannel[Any], door: str | None = None
    ) -> None:
        """Serve every incoming stream (run in a nursery for the server's lifetime); `door`
        ("launched" or "network") if every one of them comes through it, else each stream's
        door is told by its peer (`_door`)."""
        async with trio.open_nursery() as nursery:
            async for stream in streams:
                nursery.start_soon(self._serve_stream, stream, door or self._door(stream))

    def silent(self, door: str) -> int:
        """How many streams through `door` ("launched": the launched bots' socket, or
        "network") have sent nothing yet."""
        return len(self._silent[door])

    @staticmethod
    def _door(stream: Stream) -> str:
        """The launched bots' socket (only they reach it), or the network."""
        return "launched" if peers.launched_socket(stream.peer) else "network"

    async def _serve_stream(self, stream: Stream, door: str) -> None:
        silent = self._silent[door]
        if len(silent) >= self.max_pending:
            # Full: the stream silent longest makes room (dicts keep their arrival order),
            # passing over any whose first message has come but is not read yet.
            oldest = next((s for s in silent if s.unread_since() is None), None)
            if oldest is not None:
                silent.pop(oldest).cancel()
                self._evicted[door] += 1
            now = trio.current_time()
            if now - self._full_noted.get(door, -1.0) >= 1.0:  # once a second at most
                self._full_noted[door] = now
                log.warning("hello_door_full", door=door, silent=len(silent) + 1,
                            evicted=self._evicted[door], peer=stream.peer)
        silent[stream] = scope = trio.CancelScope()
        try:
            conn = await self._hello(stream, scope, door)
        finally:
            silent.pop(stream, None)
        if conn is None:
            return
        self._connections.setdefault(conn.token, []).append(conn)
        self._notify()
        log.info("bot_connected", bot=conn.bot_name, peer=stream.peer, name=conn.hello_name)
        try:
            await conn.read_loop()
        finally:
            self._connections[conn.token].remove(conn)
            if conn.token in self._tokens and not self.is_connected(conn.token):
                self._gone_since[conn.token] = trio.current_time()
            if conn.token not in self._tokens and not self.is_connected(conn.token):
                self._forget_owner(conn.token)
            if conn.token in self._tokens:  # a revoked one-off token is forgotten
                self._last_close[conn.token] = conn.close_reason
            self._notify()
            if conn.refused:  # what `arena check` reports as "nothing refused"
                log.info("messages_refused", bot=conn.bot_name, matches=list(conn.matches),
                         counts=dict(conn.refused), first=conn.refused_first)
            log.info("bot_disconnected", bot=conn.bot_name, reason=conn.close_reason)

    async def _hello(
        self, stream: Stream, silent: trio.CancelScope, door: str
    ) -> Connection | None:
        """Admit `stream` by its hello, or refuse it; `silent` is cancelled to close the
        stream while it has sent nothing (a newcomer at its full door)."""
        with trio.move_on_after(self.hello_timeout):
            try:
                with silent:
                    first = await stream.receive()
            except BadMessage as exc:
                await self._refuse(stream, pb.ERROR_CODE_BAD_HELLO,
                                   f"the first message must be a hello: {exc.reason}",
                                   grpc.StatusCode.INVALID_ARGUMENT)
                return None
            except StreamClosed:
                return None
            self._silent[door].pop(stream, None)  # it spoke: not to be closed
            if silent.cancelled_caught:
                await self._refuse(
                    stream, pb.ERROR_CODE_TOO_MANY_CONNECTIONS,
                    f"closed for a newcomer: this stream sent nothing while {self.max_pending} "
                    "streams waited to say hello; say hello as soon as the stream opens",
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                )
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
            # No token is longer than a config admits: a longer one is refused before it is
            # compared with every admitted token (a hostile review, round 5, sent hellos with
            # 1 MiB tokens against 200 admitted: 152 ms of the referee's thread each).
            name = self._lookup(hello.token) if len(hello.token) <= TOKEN_MAX else None
            if name is None:
                await self._refuse(stream, pb.ERROR_CODE_UNAUTHENTICATED,
                                   "unknown token: use the token the organiser gave you"
                                   if hello.token else NO_TOKEN,
                                   grpc.StatusCode.UNAUTHENTICATED)
                return None
            convicted = self._convicted.get(hello.token)
            if convicted is not None:
                await self._refuse(stream, pb.ERROR_CODE_UNAUTHENTICATED, convicted,
                                   grpc.StatusCode.PERMISSION_DENIED)
                return None
            if hello.token in self._owners and not await self._owner_checked(
                stream, hello.token, name
            ):
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
                stream, name, hello.token, brief(hello.bot_name), brief(hello.bot_version),
                hub=self,
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

    async def _owner_checked(self, stream: Stream, token: str, name: str) -> bool:
        """Whether the process that opened `stream` may present launched token `token`; if
        not, the hello is refused, and a thief found among the other launched seats is
        recorded (`hijack_attempt`) and its own connections ended: the victim pays nothing."""
        await self._owner_known[token].wait()
        owner = self._owners.get(token)
        inodes = await trio.to_thread.run_sync(peers.socket_inodes, stream.peer)
        if inodes is None or owner is None:
            return True  # a Unix socket (a sandboxed seat's own): nothing to look up
        if await trio.to_thread.run_sync(_holds, owner, inodes):
            return True
        text = "this seat's token was presented by another process"
        log.warning("seat_token_refused", bot=name, peer=stream.peer, detail=text)
        for other, pid in list(self._owners.items()):
            if other == token or pid is None:
                continue
            if await trio.to_thread.run_sync(_holds, pid, inodes):
                thief = self._owner_names.get(other, "?")
                why = (f"hijack attempt: {thief} presented the one-off token of a seat of "
                       f"{name}")
                log.warning("hijack_attempt", thief=thief, victim=name, peer=stream.peer)
                self._convicted[other] = why
                for conn in list(self._connections.get(other, [])):
                    conn.send(_error(pb.ERROR_CODE_UNAUTHENTICATED, why))
                    conn._gone(why)
                    await conn.stream.aclose(grpc.StatusCode.PERMISSION_DENIED, why)
                break
        await self._refuse(stream, pb.ERROR_CODE_UNAUTHENTICATED, text,
                           grpc.StatusCode.UNAUTHENTICATED)
        return False

    @staticmethod
    async def _refuse(stream: Stream, code: int, text: str, status: grpc.StatusCode) -> None:
        with suppress(trio.WouldBlock, StreamClosed):
            stream.send_nowait(_error(code, text))
        await stream.aclose(status, text)


async def _report_refused(server: Any, per_second: float | None) -> None:
    """Once a second at most, a `streams_refused` event when connections opened streams
    faster than `per_second` (a stream flood): how many were refused, and the last peer."""
    while True:
        await trio.sleep(1.0)
        refused, peer = server.take_refused()
        if refused:
            log.warning("streams_refused", refused=refused, peer=peer, per_second=per_second)


def _holds(root: int, inodes: set[int]) -> bool:
    return peers.holds_socket(peers.process_tree(root), inodes)


STREAMS_PER_CONNECTION = 4
"""Streams one network connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS): a
bot needs one, a spectator one per match it watches at once; gRPC clients wait for a free
one. A flood of silent streams over a few connections is held to this."""
LAUNCHED_STREAMS_PER_CONNECTION = 2
"""The same for the launched bots' server: a seat needs one (two let a reconnect overlap)."""
STREAMS_PER_SECOND = 20.0
"""New streams a TCP connection may open per second (twice as many at once); more are
refused (RESOURCE_EXHAUSTED) on the gRPC thread before trio hears of them: a client opening
and resetting streams as fast as it can (a "rapid reset" flood) costs the referee little."""

SEAT_FLOOD_BOUND = 50
"""Streams refused at one launched seat's own door (`seat_door`, held to
`STREAMS_PER_SECOND` over all its connections, twice that at once) before the seat counts as
flooding it: an honest bot opens one stream a match (a few if it reconnects, seconds apart),
so it would have to open 90 within about two seconds; a flood reaches it in a fraction of a
second (each refused stream costs the referee's gRPC thread a handler call: the fewer the
better; 200 let three floods at once strike honest opponents in their own matches)."""


def seat_door(server: GrpcServerThread, path: Path) -> AbstractAsyncContextManager[SeatDoor]:
    """One launched seat's own door while the block runs: ``unix:`` `path`, served apart
    on the referee's gRPC loop (`GrpcServerThread.seat_door`); its streams reach the hub
    through the launched door, named by the path. New streams over all the seat's
    connections are held to `STREAMS_PER_SECOND`; the door's ``flooded`` is set once
    `SEAT_FLOOD_BOUND` were refused. Yields the `SeatDoor`."""
    return server.seat_door(f"unix:{path}", rate=STREAMS_PER_SECOND,
                            flood_bound=SEAT_FLOOD_BOUND)


FD_RESERVE = 128
"""File descriptors kept out of reach of incoming connections: for the database, log and
replay files, and launched bots' processes."""
MIN_CONNECTIONS = 32


def raise_open_files_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return int(soft)


def _add_standard_services(
    server: grpc.aio.Server, spectators: SpectatorFeed | None = None
) -> None:
    if spectators is not None:  # arena.v1.Spectator (arena/rpc/spectator.py)
        add_spectator_service(spectators, server)
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    # Both the whole server ("") and the referee service report SERVING while it runs.
    for name in ("", SERVICE):
        health._server_status[name] = health_pb2.HealthCheckResponse.SERVING
    names = (
        SERVICE,
        *([SPECTATOR_SERVICE] if spectators is not None else []),
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
        REFLECTION_V1,
    )
    servicer = reflection.aio.ReflectionServicer(names)
    info = grpc.stream_stream_rpc_method_handler(
        _budgeted(servicer.ServerReflectionInfo,
                  TokenBuckets(REFLECTION_PER_SECOND, 5 * REFLECTION_PER_SECOND)),
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(tuple(  # both versions, one budget
        grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": info})
        for name in (reflection.SERVICE_NAME, REFLECTION_V1)))


REFLECTION_PER_SECOND = 10.0
"""Reflection requests one host may make a second (five times as many at once): grpcurl
needs a handful; a hostile review (round 4) asked for the referee's descriptors (8.5 KB each)
in a loop on 4 connections, with no token, and honest bots lost matches by timeout."""


def _budgeted(method: Any, budget: TokenBuckets) -> Any:
    """A stream-stream handler `method` whose requests are held to `budget` for the client's
    host (gRPC thread only): past it, the stream ends RESOURCE_EXHAUSTED saying so."""

    async def handler(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        host = peers.peer_host(context.peer())

        async def held() -> AsyncIterator[Any]:
            async for request in requests:
                if not budget.take(host, time.monotonic()):
                    await context.abort(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"reflection: at most {budget.rate:g} requests a second from one host")
                yield request

        async for response in method(held(), context):
            yield response

    return handler


@asynccontextmanager
async def serve_referee(
    hub: Hub,
    address: str = "127.0.0.1:0",
    *,
    credentials: grpc.ServerCredentials | None = None,
    max_message_bytes: int = 1 << 20,
    max_bot_message_bytes: int = BOT_MESSAGE_BYTES,
    private_address: str | None = None,
    local_addresses: tuple[str, ...] = (),
    spectators: SpectatorFeed | None = None,
    streams_per_connection: int = STREAMS_PER_CONNECTION,
    launched_streams_per_connection: int = LAUNCHED_STREAMS_PER_CONNECTION,
    streams_per_second: float | None = STREAMS_PER_SECOND,
) -> AsyncIterator[Any]:
    """Run the referee's gRPC server (with health and reflection) feeding `hub`, on
    `address` and on `local_addresses` (``unix:/path``, never TLS: for launched bots).

    A bot message over `max_bot_message_bytes` (64 KiB: a hello or an answer is a few hundred
    bytes) is refused in-band (MESSAGE_TOO_LARGE, naming its size) and ends its stream; gRPC
    itself refuses a message over `RECEIVE_SLACK` times that before it buffers it (the client
    is told RESOURCE_EXHAUSTED and both sizes; the referee sees the stream end). (At 1 MiB, a
    hostile review, round 5, sent strays of 1 MiB each: the referee read, parsed and echoed
    each, at 60 % of a core; at gRPC's 4 MiB, round 6 held 300 streams each 1 byte short of
    a 4 MB message, before any hello: 1.1 GB of the referee's memory, never given back.)

    ``private_address`` (say ``127.0.0.1:0``), if given, is a second listener, for the bots
    the referee launches (its port is ``server.more_ports[0]``): each listener has its own
    connection cap, so a flood of idle connections on the public address cannot keep the
    referee's own bots out.

    ``spectators``, if given, is served as `arena.v1.Spectator` on the same listeners, and
    its sampler runs for as long as the server does.

    The launched bots' listeners (``private_address``, ``local_addresses``) are a grpc.aio
    server of their own on the same loop (`serve_grpc`'s ``launched_options``), so nothing
    done at ``address`` (connections, streams by the thousand) can refuse, cancel or delay
    their streams in gRPC: each server has its own connection caps, its own
    ``*streams_per_connection`` (HTTP/2 MAX_CONCURRENT_STREAMS) and its own queue of calls
    not yet taken (grpc-core's, which cancels the calls that wait in it too long: under a
    stream flood those were the launched bots' own). ``streams_per_second`` bounds how fast
    one TCP connection may open streams (None: no bound)."""
    open_files = raise_open_files_limit()
    listeners = 1 + bool(private_address) + len(local_addresses)
    max_connections = max(MIN_CONNECTIONS, (open_files - FD_RESERVE) // listeners)
    log.info("admission", open_files=open_files, max_connections=max_connections,
             max_pending=hub.max_pending, hello_timeout_s=hub.hello_timeout)
    options = partial(
        server_options,
        max_message_bytes=max_message_bytes,
        max_receive_bytes=max(RECEIVE_SLACK * max_bot_message_bytes, 16 << 10),
        handshake_timeout_s=hub.hello_timeout, max_connections=max_connections,
    )
    async with serve_grpc(
        address,
        [dataclasses.replace(PLAY_ROUTE, max_request_bytes=max_bot_message_bytes)],
        configure=partial(_add_standard_services, spectators=spectators),
        options=options(max_streams_per_connection=streams_per_connection),
        credentials=credentials,
        window=4096,
        more_addresses=(private_address,) if private_address else (),
        local_addresses=local_addresses,
        launched_options=options(max_streams_per_connection=launched_streams_per_connection),
        streams_per_second=streams_per_second,
    ) as server, trio.open_nursery() as nursery:
        nursery.start_soon(hub.accept, server.incoming)
        nursery.start_soon(hub.accept, server.launched_incoming, "launched")
        nursery.start_soon(_report_refused, server, streams_per_second)
        if spectators is not None:
            nursery.start_soon(spectators.run)
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
