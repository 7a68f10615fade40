"""The `arena.v1.Spectator` service: live matches for programs, public information only.

Two halves, one per thread (docs/ARCHITECTURE.md "Threads and tasks"):

* `SpectatorFeed` (trio): a task of the referee's server that looks at the runner's `live`
  map (match id -> (bots, `Match`)) every `sample_s` seconds, between referee steps, and
  turns each change of a match's public table (`arena.rules.public.public_view`: no hand,
  no discard, no sign) into a `SpectatorUpdate`. An update is held back `delay_s` seconds
  (`[spectators] delay_s`), then released to every watcher. The feed only reads the
  matches: the referee never waits for it, nor for any watcher.
* `SpectatorService` (the gRPC thread's asyncio loop): `ListMatches` and `Watch`. Each
  watcher has a bounded queue (`buffer` updates); the feed serializes each released update
  once (trio thread) and hands the bytes over with one `loop.call_soon_threadsafe` per look
  (never blocking), and a watcher that stops reading — its queue over `buffer` and nothing
  written to it for `STALL_S`, or its queue over `HARD_LIMIT` buffers — is dropped: its
  stream ends with RESOURCE_EXHAUSTED, and nothing else notices.

Who may watch: anyone who can reach the referee's address, unless `[spectators] token` is
set; then every request must carry it (compared in constant time), else UNAUTHENTICATED.
Never through the unix socket bound into launched bots' sandboxes (PERMISSION_DENIED): a
bot would watch matches live, its duplicate pair's twin among them. At most
`WATCHERS_PER_HOST` watchers from one host and `WATCHERS_IN_ALL` in all (RESOURCE_EXHAUSTED
beyond): a hostile review (round 4) opened 1,000 watchers of every match with no token, and
honest bots of 5 matches in 6 lost by timeout (each update went out 1,000 times, a hop, a
serialization and a write each, on the thread whose GIL the referee needs).
"""

from __future__ import annotations

import asyncio
import hmac
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
import trio

from arena.rpc import convert
from arena.rpc.peers import launched_socket, peer_host
from arena.rules import Match, SeatView
from arena.rules.public import held, public_view, witness_view
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SERVICE = "arena.v1.Spectator"
SAMPLE_S = 0.05  # how often the live matches are looked at (while watched, or delayed)
BUFFER = 256  # updates a watcher may leave unread before it is dropped (if it stalled)
STALL_S = 1.0  # how long a watcher over its buffer may write nothing before it is dropped
HARD_LIMIT = 4  # a watcher over this many buffers is dropped at once
WATCHERS_IN_ALL = 64  # Watch streams open at once, every client together
WATCHERS_PER_HOST = 8  # ... and from one host (a program watches "" for every match)

Entry = tuple[tuple[str, ...], Match]  # the bot at each seat, and the match being played


@dataclass(frozen=True)
class _Released:
    """An update as watchers get it: serialized once, however many watch."""

    match_id: str
    ended: bool
    data: bytes
Live = Callable[[], Mapping[str, Entry]]

log = structlog.get_logger("arena.spectator")


class LiveMatches(dict[str, Entry]):
    """The runner's map of the matches being played (match id -> (bots, Match)). It tells
    its listener (a `SpectatorFeed`, in the trio thread) when a match starts and just before
    it leaves, so that spectators see every match from its start to its end, even one shorter
    than the feed's `sample_s`."""

    listener: Callable[[str, bool], None] | None = None  # (match id, started?)

    def __setitem__(self, match_id: str, entry: Entry) -> None:
        super().__setitem__(match_id, entry)
        if self.listener is not None:
            self.listener(match_id, True)

    def pop(self, match_id: str, *default: Any) -> Any:
        if match_id in self and self.listener is not None:
            self.listener(match_id, False)
        return super().pop(match_id, *default)


@dataclass
class _Tracked:
    """A live match as the feed follows it (trio thread only)."""

    info: pb.LiveMatch
    match: Match
    steps: int = 0
    seen: tuple[int, int, int, bool] | None = None  # game, hand, moves, over: when it changes
    last: tuple[SeatView, tuple[int, ...]] | None = None


@dataclass(eq=False)
class _Watcher:
    """One `Watch` stream: its filter and its bounded queue (asyncio thread only, but for
    `loop`, which the feed uses to hand updates over)."""

    match_id: str  # "" for every match
    loop: asyncio.AbstractEventLoop
    buffer: int
    host: str = ""  # the client's host (its peer without the port)
    queue: deque[_Released] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    dropped: bool = False
    closed: bool = False  # the feed stopped: end the stream once the queue is written
    written: int = 0  # updates written to the stream (each write waits for the client's window)
    over: tuple[float, int] | None = None  # since when the queue is over `buffer`, at `written`
    task: asyncio.Task[Any] | None = None

    def wants(self, update: _Released) -> bool:
        return not self.match_id or update.match_id == self.match_id

    def offer(self, updates: Iterable[_Released]) -> None:
        """Queue the updates this watcher wants; drop the watcher when it stopped reading:
        its queue over `buffer` with nothing written to it for `STALL_S`, or over
        `HARD_LIMIT` times `buffer` whatever it does.

        Over the buffer alone is no proof: when this loop falls behind (a loaded machine),
        the hand-overs of several looks run back to back before the watcher's task gets to
        write, and a client that reads everything would be dropped for the server's lag."""
        if self.dropped:
            return
        queue = self.queue
        queue.extend(u for u in updates if self.wants(u))
        if len(queue) <= self.buffer:
            self.over = None
        else:
            now = time.monotonic()
            if self.over is None or self.over[1] != self.written:  # (it took some since)
                self.over = (now, self.written)
            if len(queue) > HARD_LIMIT * self.buffer or now - self.over[0] >= STALL_S:
                self.dropped = True
                queue.clear()
                if self.task is not None:
                    self.task.cancel()  # it may be stuck writing to a client that never reads
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()


class SpectatorFeed:
    """Delayed public updates of the matches of `live()`, for the `Spectator` service."""

    def __init__(
        self, live: Live | LiveMatches, *, delay_s: float = 0.0, token: str | None = None,
        buffer: int = BUFFER, sample_s: float | None = None,
        clock: Callable[[], float] = trio.current_time,
    ) -> None:
        self.live: Live = live.copy if isinstance(live, LiveMatches) else live
        self._hooked = live if isinstance(live, LiveMatches) else None
        self.delay_s = delay_s
        self.token = token
        self.buffer = buffer
        self.sample_s = SAMPLE_S if sample_s is None else sample_s
        self.clock = clock
        self._tracked: dict[str, _Tracked] = {}  # trio thread only
        self._held_back: deque[tuple[float, pb.SpectatorUpdate]] = deque()  # trio thread only
        # Shared with the gRPC thread, under the lock: the newest released update of every
        # match not yet ended (for ListMatches and for a watcher that joins), the watchers.
        self._lock = threading.Lock()
        self._latest: dict[str, tuple[pb.SpectatorUpdate, _Released]] = {}
        self._watchers: set[_Watcher] = set()

    # trio thread -------------------------------------------------------------------------

    async def run(self) -> None:
        """Look at the live matches forever (a task of the referee's server)."""
        if self._hooked is not None:
            self._hooked.listener = self._started_or_ending
        try:
            while True:
                self.sample()
                await trio.sleep(self.sample_s)
        finally:  # a last look (the ends of the last matches, unless a delay holds them back)
            if self._hooked is not None:
                self._hooked.listener = None
            self.sample()
            self._close()

    def sample(self) -> None:
        """Note every change of a live match's public table, and release what is old enough."""
        now = self.clock()
        current = self.live()
        # Nobody watching and nothing to keep for later: only the starts and ends (for
        # ListMatches and a watcher's first update); the looks cost a view per match.
        idle = not self._watchers and self.delay_s == 0
        for match_id, entry in list(current.items()):
            if not idle or match_id not in self._tracked:
                self._note(self._track(match_id, entry), now, ended=False)
        for match_id in [m for m in self._tracked if m not in current]:
            self._note(self._tracked.pop(match_id), now, ended=True)
        self._release_due(now)

    def _started_or_ending(self, match_id: str, started: bool) -> None:
        """A look at one match as it starts or just before it leaves the live map."""
        assert self._hooked is not None
        tracked = self._track(match_id, self._hooked[match_id])
        if not started:
            del self._tracked[match_id]
        self._note(tracked, self.clock(), ended=not started)

    def _track(self, match_id: str, entry: Entry) -> _Tracked:
        tracked = self._tracked.get(match_id)
        if tracked is None:
            bots, match = entry
            info = pb.LiveMatch(match_id=match_id, variant=match.variant.name, bots=bots,
                                team_of=match.team_of)
            tracked = self._tracked[match_id] = _Tracked(info, match)
        return tracked

    def _release_due(self, now: float) -> None:
        released: list[pb.SpectatorUpdate] = []
        while self._held_back and self._held_back[0][0] + self.delay_s <= now:
            released.append(self._held_back.popleft()[1])
        if released:
            self._release(released)

    def _note(self, tracked: _Tracked, now: float, *, ended: bool) -> None:
        """Note the match's table if it changed. Never raises: a fault here must not stop the
        referee's server (its nursery runs the feed) nor a match (it calls the hooks)."""
        try:
            self._note_table(tracked, now, ended=ended)
        except Exception as exc:  # logged; spectators miss this table
            log.exception("spectator_look_failed", match_id=tracked.info.match_id,
                          error=repr(exc))

    def _note_table(self, tracked: _Tracked, now: float, *, ended: bool) -> None:
        witness = witness_view(tracked.match)
        # Every public change comes with a move, a new hand or game, or the end.
        seen = (witness.game_number, witness.hand_number, len(witness.moves),
                tracked.match.is_over)
        if seen == tracked.seen and not ended:
            return
        tracked.seen = seen
        table = (public_view(tracked.match, witness), held(tracked.match))
        if table == tracked.last and not ended:
            return
        tracked.last = table
        update = pb.SpectatorUpdate(match=tracked.info, step=tracked.steps,
                                    table=convert.view_to_proto(table[0]), held=table[1],
                                    ended=ended)
        if ended and tracked.match.result is not None:
            update.result.CopyFrom(convert.result_to_proto(tracked.match.result))
        tracked.steps += 1
        self._held_back.append((now, update))

    def _release(self, updates: list[pb.SpectatorUpdate]) -> None:
        released = [_Released(u.match.match_id, u.ended, u.SerializeToString()) for u in updates]
        with self._lock:
            for update, wire in zip(updates, released, strict=True):
                if update.ended:
                    self._latest.pop(wire.match_id, None)
                else:
                    self._latest[wire.match_id] = (update, wire)
            loops: dict[asyncio.AbstractEventLoop, list[_Watcher]] = {}
            for watcher in self._watchers:  # under the lock: a joiner gets no repeat
                loops.setdefault(watcher.loop, []).append(watcher)
            for loop, watchers in loops.items():  # one hop per loop (the gRPC thread's)
                try:
                    loop.call_soon_threadsafe(_offer_each, watchers, released)
                except RuntimeError:  # its loop has closed: the server is gone
                    self._watchers.difference_update(watchers)

    def _close(self) -> None:
        """End every watcher's stream (status OK) once its queue is written: the referee is
        stopping."""
        with self._lock:
            for watcher in self._watchers:
                with suppress(RuntimeError):  # its loop has closed already
                    watcher.loop.call_soon_threadsafe(watcher.close)
            self._watchers.clear()

    # gRPC thread -------------------------------------------------------------------------

    def listed(self) -> list[pb.LiveMatch]:
        """The matches a spectator may watch now."""
        with self._lock:
            return [u.match for u, _ in self._latest.values()]

    def subscribe(
        self, match_id: str, loop: asyncio.AbstractEventLoop, host: str = "",
    ) -> _Watcher:
        """A new watcher of `match_id` ("" for every match) for a client on `host`, its queue
        holding the current table of each match it watches. Raises `NotLive` if `match_id`
        is not live, `WatchersFull` (a one-line reason) if the watchers from `host`, or in
        all, are at their bound."""
        watcher = _Watcher(match_id, loop, self.buffer, host)
        with self._lock:
            first = [wire for _, wire in self._latest.values() if watcher.wants(wire)]
            if match_id and not first:
                raise NotLive(f"match_id: no live match {match_id!r} (ListMatches lists them)")
            if len(self._watchers) >= WATCHERS_IN_ALL:
                raise WatchersFull(f"watchers: at most {WATCHERS_IN_ALL} at once on this referee")
            if sum(w.host == host for w in self._watchers) >= WATCHERS_PER_HOST:
                raise WatchersFull(f"watchers: at most {WATCHERS_PER_HOST} at once from one "
                                   "host (watch match_id \"\" for every match)")
            watcher.queue.extend(first[-self.buffer:])
            self._watchers.add(watcher)
        return watcher

    def wanted(self) -> set[str] | None:
        """The matches someone watches now; None for every match (a watcher of all, or a
        delay: then every table is noted for whoever watches later)."""
        with self._lock:
            if self.delay_s > 0 or any(not w.match_id for w in self._watchers):
                return None
            return {w.match_id for w in self._watchers}

    @property
    def watching(self) -> int:
        """How many watchers are subscribed now."""
        with self._lock:
            return len(self._watchers)

    def unsubscribe(self, watcher: _Watcher) -> None:
        with self._lock:
            self._watchers.discard(watcher)


class NotLive(LookupError):
    """The match asked for is not live (`SpectatorFeed.subscribe`)."""


class WatchersFull(Exception):
    """No more watchers now, from that host or in all (`SpectatorFeed.subscribe`)."""


class SpectatorService(pb_grpc.SpectatorServicer):
    """`arena.v1.Spectator` over a `SpectatorFeed` (runs on the gRPC thread)."""

    def __init__(self, feed: SpectatorFeed) -> None:
        self.feed = feed
        self.refused = 0  # watchers refused at a bound (logged at powers of two)

    async def _admit(self, token: str, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if launched_socket(context.peer()):
            # The unix socket is the launched bots' door (bound into their sandbox): a bot
            # must not watch a match live, least of all its twin in a duplicate pair.
            log.warning("spectator_refused", peer=context.peer(), why="launched bots' socket")
            await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                "spectators connect to the referee's listen address, not the "
                                "launched bots' socket")
        expected = self.feed.token
        if expected is not None and not hmac.compare_digest(token.encode(), expected.encode()):
            log.info("spectator_refused", peer=context.peer())
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "token: wrong or missing spectator token (the tournament "
                                "config's [spectators] token)")

    async def ListMatches(
        self, request: pb.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListMatchesResponse:
        await self._admit(request.token, context)
        return pb.ListMatchesResponse(matches=self.feed.listed(), delay_s=self.feed.delay_s)

    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        await self._admit(request.token, context)
        try:
            watcher = self.feed.subscribe(request.match_id, asyncio.get_running_loop(),
                                          peer_host(context.peer()))
        except NotLive as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            return
        except WatchersFull as exc:
            self.refused += 1
            if self.refused & (self.refused - 1) == 0:  # the 1st, 2nd, 4th, 8th... refusal
                log.warning("spectator_refused", peer=context.peer(), why=str(exc),
                            refused=self.refused)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            return
        watcher.task = asyncio.current_task()
        log.info("spectator_watching", peer=context.peer(), match_id=request.match_id or "*")
        sent = 0
        try:
            while True:
                if not watcher.queue and watcher.closed:
                    return
                if not watcher.queue:
                    watcher.wake.clear()
                    await watcher.wake.wait()
                    continue
                update = watcher.queue.popleft()
                await context.write(update.data)  # bytes: serialized once by the feed
                watcher.written += 1
                sent += 1
                if request.match_id and update.ended:
                    return
        except asyncio.CancelledError:
            if not watcher.dropped:
                raise  # the client went away, or the server is stopping
        finally:
            self.feed.unsubscribe(watcher)
        log.warning("spectator_dropped", peer=context.peer(), match_id=request.match_id or "*",
                    sent=sent, buffer=watcher.buffer)
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"watcher: more than {watcher.buffer} updates unread; dropped "
                            "(read faster, or watch one match)")


def _offer_each(watchers: list[_Watcher], updates: list[_Released]) -> None:
    for watcher in watchers:
        watcher.offer(updates)


def _wire(message: bytes | pb.SpectatorUpdate) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def add_to_server(feed: SpectatorFeed, server: grpc.aio.Server) -> None:
    """Serve `feed` as `arena.v1.Spectator` on `server` (on the gRPC thread, before start).
    Registered by hand, not with the generated function, so that `Watch` writes the bytes
    the feed serialized once."""
    service = SpectatorService(feed)
    handlers = {
        "ListMatches": grpc.unary_unary_rpc_method_handler(
            service.ListMatches, request_deserializer=pb.ListMatchesRequest.FromString,
            response_serializer=pb.ListMatchesResponse.SerializeToString),
        "Watch": grpc.unary_stream_rpc_method_handler(
            service.Watch, request_deserializer=pb.WatchRequest.FromString,
            response_serializer=_wire),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
