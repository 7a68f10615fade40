"""The one foreign world: a grpc.aio server, bridged to trio.

Thread model
------------
trio owns the program. `serve_grpc` serves from a ``grpc.aio`` server, whose asyncio event
loop runs where ``ARENA_GRPC_HOST`` says (`HOST_ENV`):

* ``pump`` (the default): on trio's own thread, driven by a trio task (`arena.rpc.pump`)
  that runs one pass of the loop whenever it has work (its selector's fd is readable, a
  timer is due, or trio posted a callback). No thread of ours but trio's; gRPC's own poller
  thread wakes the loop as it always does, which wakes trio's thread.
* ``thread``: on a thread of its own (named ``arena-grpc``): everything gRPC happens on that
  thread, everything else (referee, tournament) on trio's. Also where a loop that cannot be
  pumped (not CPython's selector loop) runs.

The two sides meet in exactly two calls:

* trio -> asyncio: ``loop.call_soon_threadsafe(fn, *args)`` (pumped, its self-pipe write is
  what wakes the pump task, on the same thread)
* asyncio -> trio: ``trio_token.run_sync_soon(fn, *args)``; pumped, a direct call (the
  loop's callbacks run on trio's thread, inside the pump task or trio's batch-end
  instrument; after the latter, one wake-up keeps trio from sleeping on what they woke)

A callback handed to either never raises (trio would crash the whole run if one did). The
only state both threads touch is, per stream, two `collections.deque` objects and a few
boolean flags, and per server two queues of pending wake-ups; single reads, writes, appends
and pops of those are atomic under the GIL.

One bidirectional RPC is one stream. On the asyncio side its handler runs one reader task and
one writer task; on the trio side it is a `BridgedStream`::

    client --read()--> reader task --inbox deque, run_sync_soon--> BridgedStream.receive()
    client <--write()-- writer task <--outbox deque, call_soon_threadsafe-- BridgedStream.send()

Each direction is a deque plus a "wake-up pending" flag: the producer appends and posts a
wake-up only if none is pending for that stream. Wake-ups of all streams travel together
(`_Batch`): one hop carries every wake-up posted while it was on its way. On the trio side the
hop also waits for the end of the scheduler batch that posted it (a trio instrument,
`_BatchEnd`, sends it), so everything the running trio tasks queue before they wait again
rides on one hop. So a burst costs one hop, a ping-pong on one stream one hop per message
each way, and many busy streams share hops. Each direction also has a window: the reader
stops reading while ``window`` messages wait for trio (gRPC flow control then holds the
client back), and `BridgedStream.send` waits while ``window`` messages wait for the network.

gRPC costs far more per message than per byte, so a route may also say how to pack several
messages into one (`StreamRoute.batch`). Once trio calls `BridgedStream.send_in_batches` on a
stream (its client said it unpacks them), the writer packs everything queued when it gets to
write, up to `MAX_BATCH` messages, into one: a burst of messages then costs one gRPC message.

Lifecycle: a new RPC reaches trio through `GrpcServerThread.incoming`. It ends when trio calls
`BridgedStream.aclose` (with any status, after the messages already queued), when the client
cancels or disconnects, or when the server stops; trio learns of every end through `receive`
raising `StreamClosed`. Leaving `serve_grpc` aborts every open stream with
UNAVAILABLE, waits for the handlers (up to the grace period), stops the server and joins the
thread.

Hosted: when trio runs as a guest on an asyncio loop (`arena.rpc.guest.run`), `serve_grpc`
finds that loop running and serves on it instead of starting the thread; everything above
holds, with ``loop.call_soon`` for the trio -> asyncio hop (same thread). The commands do not
use it: docs/ARCHITECTURE.md ("Threads and tasks") says why, with the numbers.

While any server runs, the garbage collector is tuned for serving (`_QuietGc`), and the
gRPC loop measures its own lag (`GrpcServerThread.take_loop_lag`) for the runner's
backpressure.

A launched seat may get a listener of its own (`GrpcServerThread.seat_door`, a `SeatDoor`):
one more grpc.aio server on the same loop, for one unix socket, opened and closed while the
server runs; its streams arrive on ``launched_incoming`` like the other launched ones.

The rest of arena depends only on the `MessageStream` and `StreamServer` shapes, on
`serve_grpc`'s signature and on `seat_door`.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import threading
import time
import traceback
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, TypeVarTuple, Unpack, final

import grpc
import structlog
import trio

from arena.buckets import TokenBuckets
from arena.rpc.peers import peer_host
from arena.rpc.pump import Pump, noop
from arena.rpc.pump import supported as pump_supported

THREAD_NAME = "arena-grpc"
"""Name of the thread that runs the gRPC server's event loop."""

log = structlog.get_logger("arena.rpc")

MAX_BATCH = 64
"""The most messages `BridgedStream.send_in_batches` packs into one."""

HOST_ENV = "ARENA_GRPC_HOST"
"""Where the gRPC loop runs: ``pump`` (the default), on trio's thread, pumped by a trio task
(`arena.rpc.pump`), or ``thread``, on a thread of its own (``arena-grpc``): slower, one
thread hop and GIL hand-over each way per message (docs/ARCHITECTURE.md)."""

LOOP_PROBE_S = 0.02
"""How often the gRPC thread measures its event loop's lag (`GrpcServerThread.take_loop_lag`)."""

InT = TypeVar("InT")
OutT = TypeVar("OutT")
_In_co = TypeVar("_In_co", covariant=True)
_Out_contra = TypeVar("_Out_contra", contravariant=True)
_Args = TypeVarTuple("_Args")

Metadata = Mapping[str, str | bytes]


class StreamClosed(Exception):
    """The stream carries no more messages in this direction; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BadMessage(StreamClosed):
    """The client sent a message that could not be decoded; nothing more is read from it."""


class MessageTooLarge(BadMessage):
    """The client sent a message over its route's `StreamRoute.max_request_bytes`."""


# --------------------------------------------------------------------------- the interface


class MessageStream(Protocol[_In_co, _Out_contra]):
    """One bidirectional stream as trio code sees it, whatever carries it."""

    @property
    def method(self) -> str:
        """The full RPC path, e.g. ``/arena.v1.Referee/Play``."""
        ...

    @property
    def peer(self) -> str:
        """The client's address as gRPC reports it, e.g. ``ipv4:127.0.0.1:53412``."""
        ...

    @property
    def metadata(self) -> Metadata:
        """The invocation metadata the client sent (``-bin`` keys have bytes values)."""
        ...

    async def receive(self) -> _In_co:
        """The next message; raises `StreamClosed` once the client is done or gone."""
        ...

    async def send(self, message: _Out_contra) -> None:
        """Queue a message, waiting while too many are still unsent."""
        ...

    def send_nowait(self, message: _Out_contra, note: SentNote | None = None) -> None:
        """Queue a message; `trio.WouldBlock` if too many are still unsent. Once it is
        written, ``note.sent_at`` is set to the time.monotonic() of that moment."""
        ...

    @property
    def received_at(self) -> float:
        """When the message `receive` returned last arrived (time.monotonic())."""
        ...

    def unread_since(self) -> float | None:
        """When the oldest message arrived that `receive` has not returned yet."""
        ...

    def send_in_batches(self) -> None:
        """From now on, messages queued while the network was busy may go out as one."""
        ...

    async def aclose(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "") -> None:
        """End the RPC with this status and wait until it has ended."""
        ...


class StreamServer(Protocol):
    """A running server handing new streams to trio."""

    @property
    def port(self) -> int:
        """The port actually bound (useful after binding port 0)."""
        ...

    @property
    def incoming(self) -> trio.abc.ReceiveChannel[MessageStream[Any, Any]]:
        """New streams, in the order the RPCs arrived."""
        ...


@dataclass(frozen=True, slots=True)
class StreamRoute:
    """A bidirectional-streaming RPC whose streams the bridge hands to trio.

    Leave the (de)serializers as None to move raw bytes (benchmarks, tests); pass the
    generated ``FromString`` / ``SerializeToString`` for a proto service. ``batch``, if given,
    packs several outgoing messages into one, for streams switched to `send_in_batches`.
    ``max_request_bytes``, if given, refuses a larger request (`MessageTooLarge`, naming its
    size): gRPC's own receive limit (`server_options`) then only stops what is far over it,
    without saying why to the server.
    """

    service: str
    method: str
    request_deserializer: Callable[[bytes], Any] | None = None
    response_serializer: Callable[[Any], bytes] | None = None
    batch: Callable[[list[Any]], Any] | None = None
    max_request_bytes: int | None = None

    @property
    def path(self) -> str:
        """The full RPC path, ``/package.Service/Method``."""
        return f"/{self.service}/{self.method}"


def server_options(
    *,
    max_message_bytes: int = 1 << 20,
    max_receive_bytes: int | None = None,
    keepalive_time_s: float = 20.0,
    keepalive_timeout_s: float = 10.0,
    handshake_timeout_s: float | None = None,
    max_connections: int | None = None,
    max_streams_per_connection: int | None = None,
) -> list[tuple[str, int]]:
    """gRPC server options: message size limits, and keepalive pings that find dead clients.

    gRPC refuses to receive a message over ``max_receive_bytes`` (default
    ``max_message_bytes``) and cancels its call without telling the server why; set it above
    a route's `StreamRoute.max_request_bytes` so that the route's own, explained limit acts
    first. Without keepalive a client whose machine vanishes (no TCP reset) keeps its stream
    open until the referee's next deadline; with it the stream ends within about
    ``keepalive_time_s + keepalive_timeout_s``.

    Admission at the door, for connections that never open a stream: with
    ``handshake_timeout_s`` a TCP connection that has not completed gRPC's HTTP/2 handshake
    by then (say, an idle socket that sends no byte) is closed, and one that did but has no
    stream open that long is closed too; ``max_connections`` caps the connections open at
    once (beyond it new ones are closed at accept), so a flood cannot take every file
    descriptor.

    ``max_streams_per_connection`` is HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS: the streams
    one connection may have open at once (a bot needs one). gRPC clients wait for a free
    stream; a client that opens more anyway has the extra ones refused (RST_STREAM
    REFUSED_STREAM) by gRPC itself, before any handler runs.
    """
    door: list[tuple[str, int]] = []
    if max_streams_per_connection is not None:
        door.append(("grpc.max_concurrent_streams", max_streams_per_connection))
    if handshake_timeout_s is not None:
        door += [
            ("grpc.server_handshake_timeout_ms", int(handshake_timeout_s * 1000)),
            ("grpc.max_connection_idle_ms", int(handshake_timeout_s * 1000)),
        ]
    if max_connections is not None:
        door.append(("grpc.max_allowed_incoming_connections", max_connections))
    return [
        *door,
        ("grpc.max_receive_message_length", max_receive_bytes or max_message_bytes),
        # Identity only: a compressed message is refused before it is inflated (64 KiB of
        # gzip inflate to 64 MiB, past every size limit but after the work).
        ("grpc.compression_enabled_algorithms_bitset", 1),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.keepalive_time_ms", int(keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(keepalive_timeout_s * 1000)),
        # grpcio (1.85) waits for a keepalive ping's ack for this long, not for
        # keepalive_timeout_ms (default 60 s): without it a frozen client lingers a minute.
        ("grpc.http2.ping_timeout_ms", int(keepalive_timeout_s * 1000)),
        # Keep pinging an idle connection: a bot between matches is still worth watching.
        ("grpc.http2.max_pings_without_data", 0),
    ]


# --------------------------------------------------------------------------- the crossings


def _now(after: float) -> float:
    return time.monotonic()


@final
class _Crossing:
    """The two thread hops. Each returns False instead of raising when the far side is gone.

    `to_trio` / `to_asyncio` carry one call each; `batch_to_trio` / `batch_to_asyncio` carry
    the per-message wake-ups of every stream, gathered so that all the wake-ups posted while
    one hop is on its way ride on that hop.
    """

    __slots__ = ("_loop", "_pumped", "_same_thread", "_token", "arrival_time",
                 "batch_to_asyncio", "batch_to_trio", "direct_calls", "look")

    def __init__(
        self,
        token: trio.lowlevel.TrioToken,
        loop: asyncio.AbstractEventLoop,
        *,
        same_thread: bool = False,
        pumped: bool = False,
    ) -> None:
        self._token = token
        self._loop = loop
        self._same_thread = same_thread  # trio is a guest on `loop`: no thread to cross
        # `loop` is pumped by a trio task (arena.rpc.pump): its callbacks run on trio's
        # thread, inside trio, and call trio directly.
        self._pumped = pumped
        self.direct_calls = 0  # calls `to_trio` made directly (pumped), ever
        # The time.monotonic() to stamp a message read off the wire with, given the latest
        # request handed to gRPC on its stream (an answer cannot come before it): now, or,
        # pumped, the earliest it can have come (`Pump.arrival_time`); and, pumped, how to
        # read what came and is not read yet (`Pump.look`: before a referee calls a timeout).
        self.arrival_time: Callable[[float], float] = _now
        self.look: Callable[[], None] | None = None
        self.batch_to_trio = _Batch(self.to_trio)
        self.batch_to_asyncio = _Batch(self.to_asyncio)

    def to_trio(self, fn: Callable[[Unpack[_Args]], object], *args: *_Args) -> bool:
        """Run ``fn(*args)`` on the trio thread soon (call from any thread)."""
        if self._pumped:  # we are on trio's thread, in a pass of the loop
            self.direct_calls += 1
            fn(*args)
            return True
        try:
            self._token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            return False
        return True

    def keep_trio_awake(self) -> None:
        """Make trio's coming wait for I/O return at once (its run_sync_soon wake-up)."""
        with suppress(trio.RunFinishedError):
            self._token.run_sync_soon(noop)

    def to_asyncio(self, fn: Callable[[Unpack[_Args]], object], *args: *_Args) -> bool:
        """Run ``fn(*args)`` on the gRPC thread's loop soon (call from any thread)."""
        try:
            if self._same_thread or self._pumped:  # pumped: run at the latest by
                self._loop.call_soon(fn, *args)  # `_BatchEnd`, before trio sleeps
            else:
                self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the server thread has finished
            return False
        return True


@final
class _Batch:
    """Callbacks for one thread, posted from the other, delivered one hop per burst.

    `post` appends and sends the drain across only if no drain is on its way; the drain
    clears that mark before draining, so a callback posted at any moment is run by a drain.
    With `defer` set, the hop itself is handed to ``defer``, which sends it once the posting
    thread is done with what it is doing now: everything posted meanwhile rides on it.
    """

    __slots__ = ("_dead", "_hop", "_pending", "_scheduled", "defer")

    def __init__(self, hop: Callable[[Callable[[], None]], bool]) -> None:
        self._hop = hop
        self._pending: deque[Callable[[], None]] = deque()
        self._scheduled = False
        self._dead = False
        self.defer: Callable[[Callable[[], object]], None] | None = None

    def post(self, fn: Callable[[], None]) -> bool:
        """Run ``fn()`` (which must never raise) on the other thread soon."""
        if self._dead:
            return False
        self._pending.append(fn)
        if not self._scheduled:
            self._scheduled = True
            if self.defer is None:
                return self._send()
            self.defer(self._send)
        return True

    def _send(self) -> bool:
        if not self._hop(self._drain):
            self._dead = True
            self._pending.clear()
            return False
        return True

    def _drain(self) -> None:
        self._scheduled = False
        pending = self._pending
        while pending:
            pending.popleft()()


@final
class _BatchEnd(trio.abc.Instrument):
    """Sends the trio -> asyncio hops deferred to it when trio has run its current batch of
    tasks and is about to wait for I/O: a referee step that queues a few events and then a
    decision on a stream wakes its writer once, when all of them are queued, and they go out
    as one batch."""

    def __init__(self) -> None:
        self._due: list[Callable[[], object]] = []
        self.pumped: tuple[Pump, _Crossing] | None = None
        """Pumped (`arena.rpc.pump`), trio -> asyncio calls are ``call_soon``s that run here,
        after the hops: a message a task queued is written in the same pass of trio's loop."""

    def defer(self, send: Callable[[], object]) -> None:
        """Call ``send`` (which must never raise) at the end of this scheduler batch."""
        self._due.append(send)

    def before_io_wait(self, timeout: float) -> None:
        if self._due:
            due, self._due = self._due, []
            for send in due:
                send()  # never raises: a hop into a finished world returns False
        if self.pumped is not None:
            pump, crossing = self.pumped
            # Outside any task, but on trio's thread: what the loop's callbacks hand to trio
            # is a direct call here too (trio's reschedule, an Event, a channel's send_nowait
            # need no task), so an answer read in this pass wakes its referee in trio's very
            # next batch, with no entry-queue task and no batch of trio's loop in between.
            # trio has already chosen how long to wait for I/O, though: if it meant to sleep
            # and a call may have made a task runnable, one wake-up keeps it from sleeping.
            calls = crossing.direct_calls
            pump.run_ready()  # never raises
            if timeout > 0 and crossing.direct_calls != calls:
                crossing.keep_trio_awake()


class SentNote(Protocol):
    """Whoever wants to know when a message left: the writer sets ``handed_at`` as it hands
    the message to gRPC and ``sent_at`` once gRPC has written it (the write returns)."""

    sent_at: float | None
    handed_at: float | None


@dataclass(frozen=True, slots=True)
class _Noted:
    """Outbox item: a message and the note to stamp with the time it was written."""

    message: Any
    note: SentNote


@dataclass(frozen=True, slots=True)
class _End:
    """Inbox marker: nothing more will arrive."""

    reason: str
    bad: bool = False
    too_large: bool = False


@dataclass(frozen=True, slots=True)
class _Close:
    """Outbox marker: end the RPC with this status once the messages before it are written."""

    code: grpc.StatusCode
    details: str


@dataclass(frozen=True, slots=True)
class _Undecodable:
    """What the request deserializer returns instead of raising inside grpc."""

    error: str
    too_large: bool = False


def _tolerant(route: StreamRoute) -> Callable[[bytes], Any] | None:
    deserializer, limit = route.request_deserializer, route.max_request_bytes
    if deserializer is None and limit is None:
        return None

    def decode(raw: bytes) -> Any:
        if limit is not None and len(raw) > limit:
            return _Undecodable(
                f"a message of {len(raw):,} bytes, over the limit of {limit:,}", too_large=True
            )
        if deserializer is None:
            return raw
        try:
            return deserializer(raw)
        except Exception as exc:  # garbage from a client must not become a grpc crash
            return _Undecodable(f"{type(exc).__name__}: {exc}")

    return decode


# --------------------------------------------------------------------------- the trio side


@final
class BridgedStream(Generic[InT, OutT]):
    """One bidirectional RPC, as trio sees it; take new ones from `GrpcServerThread.incoming`.

    Methods are for the trio thread only; the ``_``-prefixed deques and flags are shared with
    the gRPC thread as described in the module docstring.
    """

    def __init__(
        self,
        *,
        method: str,
        peer: str,
        metadata: Metadata,
        window: int,
        crossing: _Crossing,
        batchable: bool = False,
    ) -> None:
        self.method = method
        self.peer = peer
        self.metadata = metadata
        self._window = window
        self._crossing = crossing
        self._batchable = batchable
        self._side: _AsyncioSide[InT, OutT] | None = None
        # gRPC thread -> trio: each message with the time.monotonic() it was read off the wire
        self._inbox: deque[tuple[InT | _End, float]] = deque()
        self._inbox_wake_pending = False
        self._reader_blocked = False
        # trio -> gRPC thread
        self._outbox: deque[OutT | _Noted | _Close] = deque()
        self._outbox_wake_pending = False
        self._sender_blocked = False
        self._handed_last = 0.0  # when the writer last handed a noted message to gRPC
        self._batching = False
        # trio thread only
        self._router: Callable[[InT], bool] | None = None
        self._receivers = trio.lowlevel.ParkingLot()
        self._senders = trio.lowlevel.ParkingLot()
        self._finished = trio.Event()
        self._closed_reason: str | None = None
        self._close: _Close | None = None
        self.received_at = 0.0
        self._in_hand: float | None = None
        """When the message `receive` returned last was read off the wire (time.monotonic(),
        on the gRPC thread: not when trio got round to it)."""

    def __repr__(self) -> str:
        return f"<BridgedStream {self.method} from {self.peer}>"

    async def receive(self) -> InT:
        """The next message from the client.

        Raises `StreamClosed` once the client has finished sending, cancelled or gone away, or
        the stream was closed here; `BadMessage` if the client sent something undecodable.
        Messages that arrived before the end are still returned first.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        self._in_hand = None  # the caller is done with the message it had
        parked = False
        while not self._inbox:
            await self._receivers.park()
            parked = True
        item, received_at = self._inbox[0]
        if isinstance(item, _End):
            if item.too_large:
                raise MessageTooLarge(item.reason)
            raise (BadMessage if item.bad else StreamClosed)(item.reason)
        self._inbox.popleft()
        self.received_at = self._in_hand = received_at
        if self._reader_blocked and len(self._inbox) <= self._window // 2:
            self._reader_blocked = False
            if self._side is not None:
                self._crossing.batch_to_asyncio.post(self._side.resume_reading)
        if not parked:  # a message was waiting: still a schedule point, as every receive is
            await trio.lowlevel.cancel_shielded_checkpoint()
        # (After a park the task already gave way; a checkpoint more would cost one more pass
        # of trio's loop before the answer is routed, for every answer.)
        return item

    def __aiter__(self) -> BridgedStream[InT, OutT]:
        return self

    async def __anext__(self) -> InT:
        """Iteration ends quietly when the client is done; `BadMessage` still raises."""
        try:
            return await self.receive()
        except BadMessage:
            raise
        except StreamClosed:
            raise StopAsyncIteration from None

    def unread_since(self) -> float | None:
        """When the oldest message read off the wire but not yet taken by `receive` arrived
        (time.monotonic()); None if there is none. Pumped, what came and is not read yet
        is read first."""
        if self._in_hand is not None:  # taken, but its taker has not asked for the next one
            return self._in_hand
        inbox = self._inbox
        if not inbox and self._crossing.look is not None:
            self._crossing.look()
        return inbox[0][1] if inbox else None

    def send_nowait(self, message: OutT, note: SentNote | None = None) -> None:
        """Queue a message for the client. The writer (on the gRPC thread) sets
        ``note.handed_at`` to the time.monotonic() at which it hands the message to gRPC, and
        ``note.sent_at`` to the one at which it sees the write return (which can be after
        the client's answer to it was read).

        Raises `StreamClosed` if the stream has ended or is closing, `trio.WouldBlock` if
        ``window`` messages are still waiting to be written.
        """
        if self._closed_reason is not None:
            raise StreamClosed(self._closed_reason)
        if len(self._outbox) >= self._window:
            raise trio.WouldBlock
        self._outbox.append(message if note is None else _Noted(message, note))
        self._wake_writer()

    def send_in_batches(self) -> None:
        """From now on, the messages waiting to be written when the network is free go out
        together, packed by the route's ``batch`` (at most `MAX_BATCH` at a time): for a client
        that said it unpacks them. Raises ValueError if the route has no ``batch``."""
        if not self._batchable:
            raise ValueError(f"the route {self.method} cannot batch messages")
        self._batching = True

    async def send(self, message: OutT) -> None:
        """Queue a message for the client, first waiting while the window is full.

        Returns once the message is queued, not once it is written; raises `StreamClosed` if
        the stream has ended or is closing.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        while len(self._outbox) >= self._window and self._closed_reason is None:
            self._sender_blocked = True
            if len(self._outbox) >= self._window:  # re-check: the writer may have just drained
                await self._senders.park()
        self.send_nowait(message)
        await trio.lowlevel.cancel_shielded_checkpoint()

    async def aclose(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "") -> None:
        """End the RPC with status ``code`` and ``details``, and wait until it has ended.

        Messages queued before are written first, so an in-band error followed by an error
        status reaches the client in that order. If cancelled while waiting (say, the client
        stopped reading), the RPC is aborted at once with the same status and the unwritten
        messages are dropped. Closing a stream that has ended or is closing only waits.
        """
        if self._closed_reason is None:
            if code == grpc.StatusCode.OK:
                self._closed_reason = "the server closed the stream"
            else:
                self._closed_reason = f"the server ended the stream ({code.name}: {details})"
            self._close = _Close(code, details)
            self._outbox.append(self._close)
            self._wake_writer()
        try:
            await self._finished.wait()
        except trio.Cancelled:
            close = self._close or _Close(grpc.StatusCode.CANCELLED, "the server gave up")
            self._abort(close.code, close.details)
            raise

    @property
    def finished(self) -> bool:
        """True once the RPC is over (its final status sent or the call cancelled)."""
        return self._finished.is_set()

    def _wake_writer(self) -> None:
        if not self._outbox_wake_pending and self._side is not None:
            self._outbox_wake_pending = True
            self._crossing.batch_to_asyncio.post(self._side.wake_writer)

    def _abort(self, code: grpc.StatusCode, details: str) -> None:
        if self._side is not None:
            self._crossing.to_asyncio(self._side.abort, code, details)

    # Callbacks run on the trio thread through run_sync_soon: they must never raise.

    def take_on_arrival(self, router: Callable[[InT], bool] | None) -> None:
        """Offer each message, as it arrives, to ``router(message)`` on the trio thread, before
        any task wakes for it: a router that returns True has dealt with the message (it is
        taken, `received_at` set for it); False leaves it, and every message after it, to
        `receive` in order. Only the oldest message is ever offered, so `receive` never sees
        messages out of order. The router must be cheap and must not block.

        This spares a pass of trio's loop for each message a router handles at once (the
        referee's: the answer to a request it is waiting on)."""
        self._router = router

    def _wake_receivers(self) -> None:
        self._inbox_wake_pending = False
        router, inbox = self._router, self._inbox
        if router is not None:
            while inbox:
                item, received_at = inbox[0]
                if isinstance(item, _End):
                    break
                previous = self.received_at
                self.received_at = received_at
                try:
                    taken = router(item)
                except Exception as exc:  # never raise here: it would end trio's run
                    # (a router bug a bot found: drop its message and end its stream, so
                    # nobody waits on it, instead of killing the referee or looping).
                    log.exception("router_failed", error=repr(exc)[:200])
                    inbox.popleft()
                    self._refuse(grpc.StatusCode.INTERNAL, "the server could not route a "
                                 "message of this stream")
                    break
                if not taken:
                    self.received_at = previous
                    break
                inbox.popleft()
            if self._reader_blocked and len(inbox) <= self._window // 2:
                self._reader_blocked = False
                if self._side is not None:
                    self._crossing.batch_to_asyncio.post(self._side.resume_reading)
            if not inbox:
                return
        self._receivers.unpark_all()

    def _wake_senders(self) -> None:
        self._senders.unpark_all()

    def _refuse(self, code: grpc.StatusCode, details: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = details
        self._abort(code, details)

    def _on_finished(self, reason: str, cancelled: bool) -> None:
        # The reader task is gone by now, so only this thread touches the inbox.
        if self._closed_reason is None:
            self._closed_reason = reason
        last = self._inbox[-1][0] if self._inbox else None
        now = time.monotonic()
        if not isinstance(last, _End):
            self._inbox.append((_End(reason), now))
        elif cancelled and not last.bad:
            # "finished sending" was really the first sign of a cancel: say so.
            self._inbox[-1] = (_End(reason), now)
        self._receivers.unpark_all()
        self._senders.unpark_all()
        self._finished.set()
        self._side = None  # nothing left to tell the gRPC thread; frees the call's objects


# --------------------------------------------------------------------------- the asyncio side


@final
class _AsyncioSide(Generic[InT, OutT]):
    """The gRPC thread's half of one stream: the handler body, its reader and its writer."""

    def __init__(
        self,
        stream: BridgedStream[InT, OutT],
        context: grpc.aio.ServicerContext,
        crossing: _Crossing,
        route: StreamRoute,
    ) -> None:
        self._stream = stream
        self._context = context
        self._crossing = crossing
        self._route = route
        self._writer_wake = asyncio.Event()
        self._reader_room = asyncio.Event()
        self._ended: asyncio.Future[tuple[grpc.StatusCode, str]] = (
            asyncio.get_running_loop().create_future()
        )

    # Callbacks run on the gRPC thread through call_soon_threadsafe: they must never raise.

    def wake_writer(self) -> None:
        self._stream._outbox_wake_pending = False
        self._writer_wake.set()

    def resume_reading(self) -> None:
        self._reader_room.set()

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        if not self._ended.done():
            self._ended.set_result((code, details))

    async def run(self) -> None:
        """The RPC handler body: pump both directions until one side ends the stream."""
        loop = asyncio.get_running_loop()
        reader = loop.create_task(self._read_loop())
        writer = loop.create_task(self._write_loop())
        reason = "the stream ended"
        cancelled = False
        try:
            code, details = await self._ended
            if code == grpc.StatusCode.OK:
                reason = "the server closed the stream"
            else:
                reason = f"the stream ended with {code.name}: {details}"
                self._context.set_code(code)
                self._context.set_details(details)
        except asyncio.CancelledError:
            reason = ("the call was cancelled: the client went away, the server stopped, or "
                      "a message was larger than gRPC accepts (it refuses one unread)")
            cancelled = True
            raise
        finally:
            reader.cancel()
            writer.cancel()
            self._crossing.to_trio(self._stream._on_finished, reason, cancelled)

    async def _read_loop(self) -> None:
        stream, window = self._stream, self._stream._window
        try:
            while True:
                if len(stream._inbox) >= window:
                    self._reader_room.clear()
                    stream._reader_blocked = True
                    if len(stream._inbox) >= window:  # re-check: trio may have just taken one
                        await self._reader_room.wait()
                        continue
                    stream._reader_blocked = False
                message = await self._context.read()
                if message is grpc.aio.EOF:
                    # (gRPC also ends a stream so, unannounced to the server, when a message
                    # is over its own size limit: the client is told, the server sees an end.)
                    self._push(_End("the client finished sending (or sent a message larger "
                                    "than gRPC accepts, which it refuses unread)"))
                    return
                if isinstance(message, _Undecodable):
                    self._push(
                        _End(
                            f"the client sent {message.error}"
                            if message.too_large
                            else f"the client sent a message that is not a valid request for "
                            f"{self._route.path} ({message.error})",
                            bad=True,
                            too_large=message.too_large,
                        )
                    )
                    return
                self._push(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the RPC broke under us: tell trio, never crash the loop
            self._push(_End(f"reading from the client failed: {exc!r}"))

    def _push(self, item: InT | _End) -> None:
        stream = self._stream
        stream._inbox.append((item, self._crossing.arrival_time(stream._handed_last)))
        if not stream._inbox_wake_pending:
            stream._inbox_wake_pending = True
            if not self._crossing.batch_to_trio.post(stream._wake_receivers):
                self.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")

    async def _write_loop(self) -> None:
        stream, outbox = self._stream, self._stream._outbox
        low_water = stream._window // 2
        batch = self._route.batch
        try:
            while True:
                while outbox:
                    item = outbox.popleft()
                    noted: list[SentNote] = []
                    if (
                        stream._batching
                        and batch is not None
                        and outbox
                        and not isinstance(item, _Close)
                        and not isinstance(outbox[0], _Close)
                    ):
                        items: list[Any] = [item]
                        while (
                            outbox and len(items) < MAX_BATCH and not isinstance(outbox[0], _Close)
                        ):
                            items.append(outbox.popleft())
                        for i, one in enumerate(items):
                            if isinstance(one, _Noted):
                                noted.append(one.note)
                                items[i] = one.message
                        item = batch(items)
                    elif isinstance(item, _Noted):
                        noted.append(item.note)
                        item = item.message
                    if stream._sender_blocked and len(outbox) <= low_water:
                        stream._sender_blocked = False
                        self._crossing.batch_to_trio.post(stream._wake_senders)
                    if isinstance(item, _Close):
                        self.abort(item.code, item.details)
                        return
                    if noted:
                        handed = stream._handed_last = time.monotonic()
                        for note in noted:
                            note.handed_at = handed
                    await self._context.write(item)
                    if noted:
                        written = time.monotonic()
                        for note in noted:
                            note.sent_at = written
                await self._writer_wake.wait()
                self._writer_wake.clear()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # e.g. the serializer refused a message: end the RPC
            self.abort(grpc.StatusCode.INTERNAL, f"the server failed to send a message: {exc!r}")


# --------------------------------------------------------------------------- the collector


GC_THRESHOLD = 20_000
"""The collector's first-generation threshold while a server runs (CPython's default: 700)."""


@final
class _QuietGc:
    """The garbage collector tuned for serving, while at least one server runs.

    A referee allocates a few hundred objects per decision (messages, views, events) that
    reference counting frees at once; with CPython's default thresholds the collector still
    runs every 700 allocations, each time walking every young object and, every hundred
    runs, the whole heap, which at start-up is mostly modules and the rules' tables that live
    as long as the process. So: `gc.freeze` what exists (start-up's objects are never walked
    again; what little of it is garbage stays until the server stops), and collect the first
    generation every `GC_THRESHOLD` allocations instead of 700. Cycles are still collected;
    the last server out restores the thresholds and unfreezes.
    """

    def __init__(self) -> None:
        self._users = 0
        self._saved: tuple[int, int, int] = gc.get_threshold()

    def enter(self) -> None:
        self._users += 1
        if self._users == 1:
            self._saved = gc.get_threshold()
            gc.freeze()  # no collection first: it would cost a full pass per server start
            gc.set_threshold(max(GC_THRESHOLD, self._saved[0]), *self._saved[1:])

    def exit(self) -> None:
        self._users -= 1
        if self._users == 0:
            gc.set_threshold(*self._saved)
            gc.unfreeze()


_quiet_gc = _QuietGc()


@contextmanager
def quiet_gc() -> Iterator[None]:
    """The collector tuned as while a server runs (`serve_grpc` does this itself)."""
    _quiet_gc.enter()
    try:
        yield
    finally:
        _quiet_gc.exit()


# --------------------------------------------------------------------------- the server


HOST_STREAM_FACTOR = 5.0
"""New streams one host may open a second over all its connections of the public door, in
connections' worth (`streams_per_second` each): 100 a second, 200 at once, at the default
20 (an organizer's test rig starting a hundred remote bots at once still fits; clients
that get RESOURCE_EXHAUSTED before any message try again)."""


@final
class _StreamRate:
    """New streams per TCP connection (a gRPC peer string names one: its client port), a
    token bucket each: `rate` a second, `2 * rate` at once. A client needs one stream, or a
    few (a spectator), per connection; a flood opens and resets them by the thousand. Unix
    socket peers are all named ``unix:``, so they are not counted (their server is apart).
    Used on the gRPC thread only."""

    def __init__(self, rate: float, host_rate: float | None = None) -> None:
        self.rate = rate
        self._buckets = TokenBuckets(rate, 2 * rate)  # peer (or any key) -> its bucket
        self.refused = 0  # streams refused since trio last took the count
        self.last_refused = ""  # the peer refused last
        # Every connection of one host together (its peer strings without the port): a
        # hostile review (round 4) kept 300 connections each under its own rate.
        self.hosts = TokenBuckets(host_rate, 2 * host_rate) if host_rate else None

    def allow(self, peer: str, now: float, *, host: bool = True) -> bool:
        """A new stream from `peer` (an ``ipv4:``/``ipv6:`` one: its connection's bucket, and
        its host's if `host`)."""
        if not peer.startswith(("ipv4:", "ipv6:")):
            return True
        if not self.take(peer, now):
            return False
        if host and self.hosts is not None and not self.hosts.take(peer_host(peer), now):
            self.refused += 1
            self.last_refused = peer
            return False
        return True

    def take(self, key: str, now: float) -> bool:
        """One stream from `key`'s bucket (any key: a peer, a seat's door)."""
        if self._buckets.take(key, now):
            return True
        self.refused += 1
        self.last_refused = key
        return False


@final
class SeatDoor:
    """One launched seat's own listener (`GrpcServerThread.seat_door`): a grpc.aio server of
    its own on the gRPC loop, serving `address` (``unix:/path``) with the launched options.
    Its streams arrive on ``launched_incoming`` with `address` as their peer, so the seat is
    told apart from every other (gRPC names every unix peer ``unix:``). All its connections
    share one token bucket of new streams (`rate` a second, twice as many at once); streams
    over it are refused (RESOURCE_EXHAUSTED) on the gRPC thread, and once `flood_bound` have
    been refused the door shuts there and then (its streams end RESOURCE_EXHAUSTED, saying
    why; its server stops, so new connections are refused by the kernel) and `flooded` is
    set, for its owner to deal with the seat. trio reads `refused` and `accepted` (written
    on the gRPC thread)."""

    def __init__(self, address: str, rate: float, flood_bound: int) -> None:
        self.address = address
        self.rate = rate
        self.flood_bound = flood_bound
        self.accepted = 0  # streams handed to trio
        self.refused = 0  # streams refused for the rate
        self.flooded = trio.Event()  # trio side: `flood_bound` streams refused
        self._bucket = _StreamRate(rate)  # gRPC thread only, from here down
        self._server: grpc.aio.Server | None = None
        self._live: set[_AsyncioSide[Any, Any]] = set()
        self._flagged = False
        self._shut: asyncio.Task[None] | None = None  # the door shutting after a flood
        # trio side
        self._opened = trio.Event()
        self._closed = trio.Event()
        self._news = trio.Event()  # flooded or closed
        self._error: BaseException | None = None

    async def flood(self) -> bool:
        """Wait until the seat floods its door (True) or the door closes (False)."""
        await self._news.wait()
        return self.flooded.is_set()

    def _admit(self, now: float) -> bool:
        """gRPC thread: whether a new stream may come in; flags a flood at the bound."""
        if self._bucket.take(self.address, now):
            self.accepted += 1
            return True
        self.refused += 1
        return False

    def _on_opened(self, error: BaseException | None) -> None:
        self._error = error
        self._opened.set()

    def _on_flooded(self) -> None:
        self.flooded.set()
        self._news.set()

    def _on_closed(self) -> None:
        self._closed.set()
        self._news.set()


@final
class GrpcServerThread:
    """A grpc.aio server on its own thread and event loop, handing its streams to trio.

    Build it with `serve_grpc`; from trio use `port` and `incoming` only.
    """

    def __init__(
        self,
        address: str,
        routes: Sequence[StreamRoute],
        *,
        configure: Callable[[grpc.aio.Server], None] | None,
        options: Sequence[tuple[str, Any]],
        credentials: grpc.ServerCredentials | None,
        grace: float,
        window: int,
        backlog: int,
        more_addresses: Sequence[str] = (),
        local_addresses: Sequence[str] = (),
        launched_options: Sequence[tuple[str, Any]] | None = None,
        streams_per_second: float | None = None,
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1 message, got {window}")
        self.address = address
        self.local_addresses = tuple(local_addresses)
        self.port = 0
        self.more_addresses = tuple(more_addresses)
        self.more_ports: list[int] = []  # the ports of `more_addresses`, in order
        self._routes = tuple(routes)
        self._configure = configure
        self._options = tuple(options)
        self._credentials = credentials
        self._grace = grace
        self._window = window
        send, receive = trio.open_memory_channel[BridgedStream[Any, Any]](backlog)
        self._send_incoming = send
        self.incoming: trio.MemoryReceiveChannel[BridgedStream[Any, Any]] = receive
        # The launched bots' server (`launched_options`): its own grpc.aio server, its own
        # queue of new streams, so nothing done at `address` delays or refuses them.
        self._launched_options = None if launched_options is None else tuple(launched_options)
        send, receive = trio.open_memory_channel[BridgedStream[Any, Any]](backlog)
        self._send_launched = send
        self.launched_incoming: trio.MemoryReceiveChannel[BridgedStream[Any, Any]] = receive
        """New streams through `more_addresses` and `local_addresses` when they are served
        apart (`launched_options`); nothing otherwise."""
        self._streams = (_StreamRate(streams_per_second, HOST_STREAM_FACTOR * streams_per_second)
                         if streams_per_second else None)
        self._servers: tuple[grpc.aio.Server, ...] = ()  # gRPC thread only
        self._doors: set[SeatDoor] = set()  # seats' own servers (`seat_door`), gRPC thread
        self._door_tasks: dict[SeatDoor, asyncio.Task[None]] = {}  # their opening, ditto
        self._trio_doors: set[SeatDoor] = set()  # the same, trio thread
        host = _host_loop()
        self._loop = asyncio.new_event_loop() if host is None else host
        self._pump = (
            Pump(self._loop)
            if host is None and os.environ.get(HOST_ENV, "pump") != "thread"
            and pump_supported(self._loop) else None
        )
        self._crossing = _Crossing(
            trio.lowlevel.current_trio_token(), self._loop, same_thread=host is not None,
            pumped=self._pump is not None,
        )
        self._thread = (
            threading.Thread(target=self._thread_main, name=THREAD_NAME)
            if host is None and self._pump is None else None
        )
        self._hosted: asyncio.Task[None] | None = None  # the server's task when hosted
        # trio thread only
        self._started = trio.Event()
        self._stopped = trio.Event()
        self._thread_error: BaseException | None = None
        self._batch_end = _BatchEnd()
        self._crossing.batch_to_asyncio.defer = self._batch_end.defer
        if self._pump is not None:
            self._batch_end.pumped = (self._pump, self._crossing)
            self._crossing.arrival_time = self._pump.arrival_time
            self._crossing.look = self._pump.look
        # written on the gRPC thread, read and reset on trio's (a lost sample is harmless)
        self._loop_lag = 0.0
        # gRPC thread only
        self._accepting = False
        self._stop_requested = asyncio.Event()
        self._live: dict[_AsyncioSide[Any, Any], asyncio.Task[Any]] = {}

    # trio thread

    def take_loop_lag(self) -> float:
        """The worst lag of the gRPC thread's event loop since the last call, in seconds: how
        much later than asked a short sleep there woke up. Answers read off the wire wait
        that long before they are stamped, so a referee that lags here charges bots for its
        own delay: the tournament's backpressure watches it as well as trio's own lag."""
        lag, self._loop_lag = self._loop_lag, 0.0
        return lag

    def take_refused(self) -> tuple[int, str]:
        """Streams refused for their connection's rate (`streams_per_second`) since the last
        call, and the peer refused last. (Written on the gRPC thread; a count lost between
        the read and the reset is harmless.)"""
        if self._streams is None or not self._streams.refused:
            return 0, ""
        count, self._streams.refused = self._streams.refused, 0
        return count, self._streams.last_refused

    @asynccontextmanager
    async def seat_door(
        self, address: str, *, rate: float, flood_bound: int
    ) -> AsyncIterator[SeatDoor]:
        """Serve `address` (``unix:/path``, a path nobody else is given) for ONE launched
        seat while the block runs: a grpc.aio server of its own on the gRPC loop, with the
        launched options (grpc.aio cannot add a port to a started server), whose streams
        arrive on ``launched_incoming`` named by `address` (`SeatDoor`). New streams over all
        its connections are held to `rate` a second; after `flood_bound` refused, the door shuts
        and its `flooded` is set. Leaving the block aborts its streams (UNAVAILABLE) and stops
        it (~0.4 ms each way: `python -m bench seat_door`)."""
        door = SeatDoor(address, rate, flood_bound)
        self._trio_doors.add(door)
        try:
            if not self._crossing.to_asyncio(self._spawn_door, door):
                raise RuntimeError(f"could not open {address}: the gRPC server has stopped")
            await door._opened.wait()
            if door._error is not None:
                raise RuntimeError(f"could not listen on {address}: {door._error}")
            yield door
        finally:
            with trio.CancelScope(shield=True):
                if self._crossing.to_asyncio(self._spawn_door, door, False):
                    await door._closed.wait()
            self._trio_doors.discard(door)

    async def _start(self) -> None:
        trio.lowlevel.add_instrument(self._batch_end)
        if self._pump is not None:
            trio.lowlevel.spawn_system_task(self._pump.run, name="arena-grpc-pump")
        if self._thread is not None:
            self._thread.start()
        else:  # a fresh context: none of the trio task's context variables
            self._hosted = self._loop.create_task(self._serve_reporting(),
                                                  context=contextvars.Context())
        try:
            await self._started.wait()
        finally:
            if not self.port:  # cancelled, or the server could not start
                with trio.CancelScope(shield=True):
                    await self._stop()
        if not self.port:
            raise RuntimeError(
                f"could not start the gRPC server on {self.address}: {self._thread_error!r}"
            ) from self._thread_error

    async def _stop(self) -> None:
        self._send_incoming.close()
        self._send_launched.close()
        self._crossing.to_asyncio(self._stop_requested.set)
        await self._stopped.wait()
        if self._thread is not None:
            self._thread.join()
        if self._pump is not None:
            self._pump.stop()
            await self._pump.wait_done()
            self._pump.close()
        self._hosted = None
        self._crossing.batch_to_asyncio.defer = None
        self._batch_end.before_io_wait(0)
        with suppress(KeyError):
            trio.lowlevel.remove_instrument(self._batch_end)

    def _on_started(self, port: int, more_ports: list[int]) -> None:
        self.port = port
        self.more_ports = more_ports
        self._started.set()

    def _on_thread_exit(self, error: BaseException | None) -> None:
        self._thread_error = error
        self._started.set()
        self._stopped.set()
        for door in self._trio_doors:  # nothing on the gRPC loop will answer them now
            door._opened.set()
            door._on_closed()

    def _deliver(self, stream: BridgedStream[Any, Any], launched: bool = False) -> None:
        try:
            (self._send_launched if launched else self._send_incoming).send_nowait(stream)
        except trio.WouldBlock:
            stream._refuse(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "the server has too many streams waiting to be accepted; retry later",
            )
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            stream._refuse(grpc.StatusCode.UNAVAILABLE, "the server is not accepting streams")

    # gRPC thread

    def _thread_main(self) -> None:
        error: BaseException | None = None
        try:
            with asyncio.Runner(loop_factory=lambda: self._loop) as runner:
                runner.run(self._serve_reporting())
        except BaseException as exc:  # handed to trio, which re-raises it
            error = exc
            _forget_locals(exc)
            self._crossing.to_trio(self._on_thread_exit, error)

    async def _serve_reporting(self) -> None:
        """`_serve`, then tell trio it ended (and how)."""
        error: BaseException | None = None
        try:
            await self._serve()
        except BaseException as exc:  # handed to trio, which re-raises it
            error = exc
            _forget_locals(exc)
        finally:
            self._crossing.to_trio(self._on_thread_exit, error)

    async def _serve(self) -> None:
        server = grpc.aio.server(options=self._options)
        apart = self._launched_options is not None and bool(
            self.more_addresses or self.local_addresses
        )
        # Served apart, the launched bots' addresses have a server of their own on this loop:
        # its own HTTP/2 limits and its own queue of calls not yet taken by the handlers
        # (grpc-core's, per server), which a flood at `address` fills and then cancels.
        launched = grpc.aio.server(options=self._launched_options) if apart else server
        self._servers = (server, launched) if apart else (server,)
        try:
            for one in self._servers:
                self._register(one, launched=one is not server)
                if self._configure is not None:
                    self._configure(one)
            ports: list[int] = []
            for address in (self.address, *self.more_addresses):
                target = launched if ports else server  # `address` first, on `server`
                if self._credentials is None:
                    ports.append(target.add_insecure_port(address))
                else:
                    ports.append(target.add_secure_port(address, self._credentials))
            port, more_ports = ports[0], ports[1:]
            for local in self.local_addresses:  # e.g. unix:/path, for bots on this machine
                if not launched.add_insecure_port(local) and not local.startswith("unix:"):
                    raise RuntimeError(f"could not listen on {local}")
            for one in self._servers:
                await one.start()
            self._accepting = True
            self._crossing.to_trio(self._on_started, port, more_ports)
            # Pumped, the loop lags as trio does (one thread): trio's own lag says it all.
            probe = asyncio.create_task(
                self._probe_loop_lag() if self._pump is None else asyncio.Event().wait()
            )
            try:
                await self._stop_requested.wait()
            finally:
                probe.cancel()
        finally:
            self._accepting = False
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self._grace
            for side in self._live:
                side.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
            if self._live:
                await asyncio.wait(self._live.values(), timeout=self._grace)
            # Whatever is still running after the grace period is cancelled.
            for one in self._servers:
                await one.stop(max(0.0, deadline - loop.time()))
            for door in list(self._doors):  # seats' doors still open (their owner is late)
                if door._server is not None:
                    with suppress(Exception):
                        await door._server.stop(0)

    def _spawn_door(self, door: SeatDoor, opening: bool = True) -> None:
        """Open (or close) `door` in a task of the gRPC loop (a callback: never raises)."""
        if opening:
            self._door_tasks[door] = self._loop.create_task(self._open_door(door))
        else:
            self._loop.create_task(self._close_door(door))

    async def _open_door(self, door: SeatDoor) -> None:
        error: BaseException | None = None
        try:
            if not self._accepting:
                error = RuntimeError("the server is shutting down")
                return
            server = grpc.aio.server(options=self._launched_options or self._options)
            self._register(server, launched=True, door=door)
            door._server = server
            self._doors.add(door)
            if not server.add_insecure_port(door.address):
                error = RuntimeError("grpc could not bind it")
                return
            await server.start()
        except BaseException as exc:  # handed to trio, which raises it in `seat_door`
            error = exc
            _forget_locals(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._crossing.to_trio(door._on_opened, error)

    async def _close_door(self, door: SeatDoor) -> None:
        try:
            opening = self._door_tasks.pop(door, None)
            if opening is not None:
                with suppress(BaseException):
                    await opening
            if door._shut is None:
                await self._shut_door(door, grpc.StatusCode.UNAVAILABLE, "the seat is over")
            else:
                with suppress(BaseException):
                    await door._shut
        finally:
            self._doors.discard(door)
            self._crossing.to_trio(door._on_closed)

    @staticmethod
    async def _shut_door(door: SeatDoor, code: grpc.StatusCode, details: str) -> None:
        """End the door's streams with `code` and stop its server (gRPC thread)."""
        for side in list(door._live):
            side.abort(code, details)
        if door._server is not None:
            await door._server.stop(0)

    async def _probe_loop_lag(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(LOOP_PROBE_S)
            lag = loop.time() - before - LOOP_PROBE_S
            if lag > self._loop_lag:
                self._loop_lag = lag

    def _register(
        self, server: grpc.aio.Server, *, launched: bool = False, door: SeatDoor | None = None
    ) -> None:
        by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
        for route in self._routes:
            by_service.setdefault(route.service, {})[route.method] = (
                grpc.stream_stream_rpc_method_handler(
                    self._handler(route, launched, door),
                    request_deserializer=_tolerant(route),
                    response_serializer=route.response_serializer,
                )
            )
        for service, handlers in by_service.items():
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, handlers),)
            )
            server.add_registered_method_handlers(service, handlers)

    def _handler(
        self, route: StreamRoute, launched: bool = False, door: SeatDoor | None = None
    ) -> Callable[[object, grpc.aio.ServicerContext], Any]:
        async def handle(request_iterator: object, context: grpc.aio.ServicerContext) -> None:
            await self._serve_stream(route, context, launched, door)

        return handle

    async def _serve_stream(
        self,
        route: StreamRoute,
        context: grpc.aio.ServicerContext,
        launched: bool = False,
        door: SeatDoor | None = None,
    ) -> None:
        if not self._accepting:
            context.set_code(grpc.StatusCode.UNAVAILABLE)
            context.set_details("the server is shutting down")
            return
        if door is not None:  # a seat's own door: named by it, one bucket for the seat
            peer = door.address
            if not door._admit(time.monotonic()):
                if door.refused >= door.flood_bound and not door._flagged:
                    # Flooded: the door shuts at once, here (its streams end, new
                    # connections are refused by the kernel), and trio is told.
                    door._flagged = True
                    door._shut = asyncio.get_running_loop().create_task(self._shut_door(
                        door, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"this seat opened streams faster than {door.rate:g} per second "
                        f"({door.refused} refused, a stream flood): its door is shut"))
                    self._crossing.to_trio(door._on_flooded)
                context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)
                context.set_details(f"this seat opens more than {door.rate:g} streams per second")
                return
        else:
            peer = context.peer()
        rate = self._streams if door is None else None
        # The host's budget is for the public door only: launched seats without a sandbox
        # all dial the private port from this host, and may start by the hundred at once.
        if rate is not None and not rate.allow(peer, time.monotonic(), host=not launched):
            # A connection opening streams faster than any client needs (a stream flood):
            # refused here, on the gRPC thread, before trio hears of it.
            context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)
            context.set_details(
                f"this connection opens more than {rate.rate:g} streams per second"
            )
            return
        stream: BridgedStream[Any, Any] = BridgedStream(
            method=route.path,
            peer=peer,
            metadata=dict(context.invocation_metadata() or ()),
            window=self._window,
            crossing=self._crossing,
            batchable=route.batch is not None,
        )
        side = _AsyncioSide(stream, context, self._crossing, route)
        stream._side = side
        task = asyncio.current_task()
        assert task is not None  # grpc runs every handler in a task
        self._live[side] = task
        if door is not None:
            door._live.add(side)
        try:
            if not self._crossing.to_trio(self._deliver, stream, launched):
                side.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
            await side.run()
        finally:
            del self._live[side]
            if door is not None:
                door._live.discard(side)


def _forget_locals(exc: BaseException) -> None:
    """Keep the story, drop the locals: a traceback that holds the grpc server keeps grpc's
    poller thread alive."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        traceback.clear_frames(cause.__traceback__)
        cause = cause.__cause__ or cause.__context__


def _host_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop that trio runs on as a guest (`arena.rpc.guest.run`), if it does."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@asynccontextmanager
async def serve_grpc(
    address: str,
    routes: Sequence[StreamRoute],
    *,
    configure: Callable[[grpc.aio.Server], None] | None = None,
    options: Sequence[tuple[str, Any]] = (),
    credentials: grpc.ServerCredentials | None = None,
    grace: float = 1.0,
    window: int = 32,
    backlog: int = 256,
    more_addresses: Sequence[str] = (),
    local_addresses: Sequence[str] = (),
    launched_options: Sequence[tuple[str, Any]] | None = None,
    streams_per_second: float | None = None,
) -> AsyncIterator[GrpcServerThread]:
    """Serve ``routes`` on ``address`` from a gRPC thread; yield the running server.

    ``address`` is ``host:port``; port 0 picks a free port, read it from ``server.port``.
    ``more_addresses`` are listened on too (their ports in ``server.more_ports``); each
    address is its own listener, with its own connection cap (`server_options`).
    ``configure`` runs on the gRPC thread before the server starts, to add more services
    (health, reflection). ``options`` are gRPC channel arguments (see `server_options`);
    ``credentials`` switch to TLS. ``window`` bounds the messages buffered per stream and
    direction; ``backlog`` bounds streams not yet taken from ``incoming`` (beyond it new RPCs
    fail with RESOURCE_EXHAUSTED). ``local_addresses`` (e.g. ``unix:/path``) are served too,
    always without TLS: they are for processes on this machine. With ``launched_options``,
    ``more_addresses`` and ``local_addresses`` are served apart, by a second grpc.aio server
    on the same loop with those options, and their streams arrive on
    ``server.launched_incoming``: a flood of connections or streams at ``address`` fills only
    ``address``'s server (its connection cap, its streams per connection, grpc-core's queue
    of calls not yet taken, ``incoming``). ``streams_per_second``, if given, refuses
    (RESOURCE_EXHAUSTED) a stream from a TCP connection that opens new ones faster than that
    (twice as many at once), on the gRPC thread, before trio hears of it. On exit every open
    stream is aborted with UNAVAILABLE, the server stops within ``grace`` seconds and the
    thread is joined, even when cancelled.
    """
    server = GrpcServerThread(
        address,
        routes,
        configure=configure,
        options=options,
        credentials=credentials,
        grace=grace,
        window=window,
        backlog=backlog,
        more_addresses=more_addresses,
        local_addresses=local_addresses,
        launched_options=launched_options,
        streams_per_second=streams_per_second,
    )
    await server._start()
    _quiet_gc.enter()
    try:
        yield server
    finally:
        _quiet_gc.exit()
        with trio.CancelScope(shield=True):
            await server._stop()
        if server._thread_error is not None:
            raise RuntimeError("the gRPC server thread failed") from server._thread_error
