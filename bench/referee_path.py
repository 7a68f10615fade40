"""The referee's full decision path against a raw grpc.aio ping-pong, side by side.

Both servers talk to the same bot client (a separate process, grpc.aio, N streams), which says
hello and answers every `DecisionRequest` at once with ``action_index = 0``, echoing its ids.
Like the SDK and the JS bot it accepts batches (``BENCH_BATCHES=0``: it does not, and gets
every message alone).

- referee: the real thing — `serve_referee` (the trio bridge), the `Hub`, `run_match` with
  the rules engine, per-seat views converted to protobuf, every event sent to every seat in
  its audience, and structlog JSON lines for every decision (to a real file, checked after
  the round: one ``decision`` line per decision). Each stream is one bot connection holding
  both seats of its own argentine-1v1 match; when a match ends the next starts, so every
  stream always has one decision outstanding. The hub's message-flood limit is raised: it
  would otherwise cap one connection at 500 answers per second.
- raw: a pure grpc.aio server that answers the hello and then sends one real decision request
  again and again, reading each answer. The request is taken from a referee game, the one
  closest to the mean size of that game's requests, so both sides send decisions of the same
  size (the table reports the mean each client saw).

The ratio referee/raw is what the referee costs per decision. The referee also sends the
events (moves, tricks, hand summaries) that the raw server does not: they are part of the
decision path a real bot sees (``ref msg/dec`` counts every message the client received per
decision).

``overhead µs`` is the referee's server CPU per decision minus the raw server's, in the same
run, split three ways that add up to it: ``floor µs`` (below), ``bridge µs`` (what the
thread that runs trio spends beyond the floor: receiving, routing, waking tasks, the hops)
and ``gRPC µs`` (every other thread of the process — the asyncio loop that serves gRPC,
grpc's own threads — minus everything the raw server spends). Per-thread CPU is read with
``pthread_getcpuclockid``. ``add p50/p99 ms``: the client's round trip (from an answer
written to the next decision read) at the referee minus at the raw server, percentile by
percentile; at 1 stream this is the latency the referee adds. ``raw sw/dec`` and ``ref
sw/dec``: context switches of all the server's threads per decision (from
/proc/self/task/*/status, median of the rounds): each voluntary one is a thread that went to
sleep and will be woken, so this counts the hops, exactly enough under load.

``floor µs`` is the referee's own CPU per decision with no wire at all (`measure_floor`:
`run_match`, the rules engine, every message built and serialized by the real link, the log
lines written) and ``ceiling`` is ``raw µs / (raw µs + floor µs)``: the ratio a referee doing
that work would reach if its gRPC path cost exactly the raw server's and nothing else — an
upper bound for any bridge on one core.

Each stream count is measured in ``BENCH_ROUNDS`` rounds (default 3) of ``BENCH_SECONDS /
BENCH_ROUNDS`` seconds per side, alternating which side goes first; each column keeps its best
round, since load from elsewhere only ever makes a round slower. The clock starts once every
stream has answered a decision; the server's CPU time (``time.process_time`` of this process,
both threads; the client is another process) is read when the client says it starts and
stops counting, and divided by the decisions counted: ``µs/dec``, which a busy machine
disturbs less than the rates.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

import grpc
import trio

from arena import logging as arena_logging
from arena.errors import BotDisconnected
from arena.referee import run_match
from arena.rpc import convert, guest
from arena.rpc.bridge import HOST_ENV, THREAD_NAME, quiet_gc
from arena.rpc.server import PLAY_ROUTE, Hub, RemoteSeatLink, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb
from bench.floor_instructions import WireFreeConnection

STREAMS = tuple(int(n) for n in os.environ.get("BENCH_STREAMS", "1,16,64").split(",") if n)
"""How many concurrent streams to measure (``BENCH_STREAMS``, default 1, 16 and 64)."""
VARIANT = "argentine-1v1"
BATCHES = os.environ.get("BENCH_BATCHES", "1") != "0"
"""Whether the bot client says `accepts_batches` (as the SDK and the JS bot do)."""
MODES = ("thread", "pump", "guest")
"""How the referee runs: `trio.run` with gRPC on its own thread; `trio.run` with the gRPC loop
pumped by a trio task on trio's thread (`ARENA_GRPC_HOST=pump`, `arena.rpc.pump`); or trio as
a guest on the asyncio loop that serves gRPC (`arena.rpc.guest.run`). ``BENCH_MODES`` picks
some."""
WARM_UP_LIMIT = 30.0  # seconds for every stream to answer its first decision
WATCH: list[Callable[[str], None]] = []
"""Called (in the server's process) with ``"spawn"`` just before the bot client starts and
with ``"start"`` / ``"stop"`` as the client starts and stops counting: `bench.wakeups` attaches
strace and reads /proc there."""


# --------------------------------------------------------------------------- the bot client


@dataclass(frozen=True, slots=True)
class Tally:
    """What the bot client saw while it counted (all streams together)."""

    seconds: float
    decisions: int
    decision_bytes: int  # the decision requests
    messages: int  # every server message, decisions included
    message_bytes: int
    rt_p50_ms: float  # round trip: from an answer written to the next decision read
    rt_p99_ms: float

    @property
    def rate(self) -> float:
        """Decisions answered per second."""
        return self.decisions / self.seconds


class _Counter:
    """Shared by the client's streams: the phase of the run and what was counted in it."""

    def __init__(self, streams: int) -> None:
        self.counting = False
        self.done = False
        self.ready = asyncio.Event()
        self.waiting_for_first = streams
        self.decisions = self.decision_bytes = self.messages = self.message_bytes = 0
        self.round_trips: list[float] = []  # seconds


async def _bot_stream(channel: Any, token: str, counter: _Counter) -> None:
    call = channel.stream_stream(
        PLAY_ROUTE.path,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ServerMessage.FromString,
    )()
    await call.write(
        pb.BotMessage(
            hello=pb.Hello(
                bot_name="bench", token=token, protocol_version=1, accepts_batches=BATCHES
            )
        )
    )
    first = True
    answered: float | None = None  # when the last answer was written
    while not counter.done:
        message = await call.read()
        read_at = time.perf_counter()
        if message is grpc.aio.EOF:
            raise RuntimeError(f"the server ended a stream: {await call.details()}")
        counting = counter.counting
        if counting:
            counter.messages += 1
            counter.message_bytes += message.ByteSize()
        body = message.WhichOneof("body")
        items = message.batch.messages if body == "batch" else (message,)
        for item in items:
            if item.WhichOneof("body") != "decision":
                continue
            d = item.decision
            await call.write(
                pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                        action_index=0,
                    )
                )
            )
            if counting:
                counter.decisions += 1
                counter.decision_bytes += item.ByteSize()
                if answered is not None:
                    counter.round_trips.append(read_at - answered)
            answered = time.perf_counter()
            if first:
                first = False
                counter.waiting_for_first -= 1
                if not counter.waiting_for_first:
                    counter.ready.set()
    call.cancel()


async def _bot_load(pipe: Pipe, address: str, streams: int, seconds: float) -> Tally:
    loop = asyncio.get_running_loop()
    counter = _Counter(streams)
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = [
            asyncio.create_task(_bot_stream(channel, f"bench-{i}", counter))
            for i in range(streams)
        ]
        waiting = asyncio.create_task(counter.ready.wait())
        await asyncio.wait([waiting, *tasks], timeout=WARM_UP_LIMIT,
                           return_when=asyncio.FIRST_COMPLETED)
        if not counter.ready.is_set():
            for task in tasks:
                if task.done():
                    task.result()  # a stream failed: raise its error
            raise TimeoutError(f"not every stream had a decision within {WARM_UP_LIMIT} s")
        counter.counting = True
        started = loop.time()
        pipe.send("start")
        await asyncio.sleep(seconds)
        counter.counting = False
        elapsed = loop.time() - started
        pipe.send("stop")
        counter.done = True
        _, pending = await asyncio.wait(tasks, timeout=5)
        for task in pending:
            task.cancel()
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    trips = sorted(counter.round_trips) or [0.0]
    return Tally(elapsed, counter.decisions, counter.decision_bytes, counter.messages,
                 counter.message_bytes, _percentile(trips, 0.5) * 1e3,
                 _percentile(trips, 0.99) * 1e3)


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _client_main(pipe: Pipe, address: str, streams: int, seconds: float) -> None:
    try:
        pipe.send((True, asyncio.run(_bot_load(pipe, address, streams, seconds))))
    except BaseException as exc:  # reported to the parent, which raises it
        pipe.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        pipe.close()


def run_bots(
    address: str, streams: int, seconds: float, threads: dict[str, int]
) -> tuple[Tally, float, dict[str, float]]:
    """Run the bot client in a fresh process (blocks): what it counted, this process's CPU
    seconds between the client's start and stop of counting, and the CPU seconds of each of
    ``threads`` (name -> thread ident) in that time."""
    context = multiprocessing.get_context("spawn")  # grpc does not survive fork
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_client_main, args=(sender, address, streams, seconds),
                              name="bench-bots")
    for watch in WATCH:
        watch("spawn")
    process.start()
    sender.close()
    cpu = {}
    switches: dict[str, int] = {}
    per_thread: dict[str, dict[str, float]] = {}
    try:
        while True:
            if not receiver.poll(seconds + WARM_UP_LIMIT + 30):
                raise TimeoutError("the bench bot client did not report back")
            try:
                got = receiver.recv()
            except EOFError:
                got = (False, "it exited without a result (see its traceback above)")
            if isinstance(got, str):
                for watch in WATCH:
                    watch(got)
                cpu[got] = time.process_time()
                switches[got] = _switches()
                per_thread[got] = {name: _thread_cpu(ident) for name, ident in threads.items()}
                continue
            ok, outcome = got
            break
    finally:
        receiver.close()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
    if not ok:
        raise RuntimeError(f"the bench bot client failed: {outcome}")
    spent = {name: per_thread["stop"][name] - per_thread["start"][name] for name in threads}
    spent["switches"] = switches["stop"] - switches["start"]
    return outcome, cpu["stop"] - cpu["start"], spent


def _switches() -> int:
    """Context switches of every thread of this process so far (voluntary: a thread went to
    sleep, so each is a wake-up to come; involuntary: it was preempted)."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        with suppress(OSError):  # a thread that ended meanwhile
            for line in (task / "status").read_text().splitlines():
                if "ctxt_switches:" in line:
                    total += int(line.split()[-1])
    return total


def _thread_cpu(ident: int) -> float:
    """CPU seconds the thread ``ident`` (of this process) has used so far."""
    return time.clock_gettime(time.pthread_getcpuclockid(ident))


# --------------------------------------------------------------------------- the servers


def sample_decision() -> Any:
    """A real decision request from a referee game (for the raw server): of the requests of
    one match, the one closest to their mean size."""
    game = Match(VARIANT, seed=7)
    requests = []
    deadline = int(time.time() * 1000) + 1000
    while not game.is_over:
        seat = game.to_act
        assert seat is not None
        view = game.view(seat)
        requests.append(
            pb.ServerMessage(
                decision=pb.DecisionRequest(
                    request_id="5f1e0c2a9d8b7a6f5e4d3c2b", match_id=f"bench:{2 ** 20}:{2 ** 10}",
                    seat=seat, view=convert.view_to_proto(view),
                    legal_actions=[convert.action_to_proto(a) for a in view.legal_actions],
                    deadline_unix_ms=deadline, time_left_ms=1000,
                )
            )
        )
        game.apply(view.legal_actions[0])
    mean = statistics.fmean(r.ByteSize() for r in requests)
    return min(requests, key=lambda r: abs(r.ByteSize() - mean))


@dataclass(frozen=True, slots=True)
class Round:
    """One side's measurement: what the client counted and the server's CPU per decision."""

    tally: Tally
    cpu_us: float  # server CPU µs per decision
    main_us: float  # of which on the thread that runs the handlers (trio's for the referee)
    loop_us: float  # of which on the referee's gRPC thread (asyncio); 0 for raw
    switches: float  # context switches of the server's threads per decision

    @staticmethod
    def of(tally: Tally, cpu: float, threads: dict[str, float]) -> Round:
        per = 1e6 / max(tally.decisions, 1)
        return Round(tally, cpu * per, threads.get("main", 0.0) * per,
                     threads.get("grpc", 0.0) * per,
                     threads.get("switches", 0.0) / max(tally.decisions, 1))


def measure_raw(streams: int, seconds: float) -> Round:
    """The pure grpc.aio server: hello, then the sample decision again and again."""
    decision = sample_decision()

    async def play(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        if await context.read() is grpc.aio.EOF:
            return
        await context.write(pb.ServerMessage(welcome=pb.Welcome(protocol_version=1)))
        while True:
            await context.write(decision)
            if await context.read() is grpc.aio.EOF:
                return

    async def main() -> tuple[Tally, float, dict[str, float]]:
        server = grpc.aio.server()
        handler = grpc.stream_stream_rpc_method_handler(
            play, request_deserializer=pb.BotMessage.FromString,
            response_serializer=pb.ServerMessage.SerializeToString,
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(PLAY_ROUTE.service, {"Play": handler}),)
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            return await asyncio.to_thread(run_bots, f"127.0.0.1:{port}", streams, seconds,
                                           {"main": threading.get_ident()})
        finally:
            await server.stop(0.5)

    return Round.of(*asyncio.run(main()))


def measure_referee(streams: int, seconds: float, mode: str = "thread") -> Round:
    """The referee: serve_referee + Hub + run_match, decisions logged to a temporary file;
    under `trio.run` (mode ``thread``: gRPC on a thread of its own) or `arena.rpc.guest.run`
    (mode ``guest``: trio a guest on the loop that serves gRPC, one thread)."""
    made = [0]

    async def keep_playing(hub: Hub, token: str, index: int) -> None:
        conn = await hub.connection_for(token)
        number = 0
        while not conn.closed.is_set():
            match_id = f"bench:{index}:{number}"
            links = [conn.link(match_id, 0), conn.link(match_id, 1)]
            try:
                report = await run_match(match_id, Match(VARIANT, seed=number), list(links))
            except BotDisconnected:
                return
            made[0] += len(report.decisions)
            if report.outcome.faulty_seat is not None and not conn.closed.is_set():
                raise RuntimeError(f"{match_id}: {report.outcome}")
            number += 1

    async def main() -> tuple[Tally, float, dict[str, float]]:
        # The flood limit would cap a connection at 500 answers per second (it still runs).
        hub = Hub(max_messages_per_second=1e9)
        # The client's streams share one connection: the door's per-connection limits (4
        # streams, 20 new ones a second) would hold all but four back.
        async with serve_referee(
            hub, streams_per_connection=max(streams, 4), streams_per_second=None
        ) as server, trio.open_nursery() as nursery:
            for i in range(streams):
                hub.admit(f"bench-{i}", "bench")
                nursery.start_soon(keep_playing, hub, f"bench-{i}", i)
            threads = {"main": threading.get_ident()}
            threads.update(
                ("grpc", t.ident) for t in threading.enumerate()
                if t.name == THREAD_NAME and t.ident is not None
            )
            result = await trio.to_thread.run_sync(
                run_bots, f"127.0.0.1:{server.port}", streams, seconds, threads
            )
            nursery.cancel_scope.cancel()
            return result

    with tempfile.TemporaryDirectory(prefix="bench-referee-") as folder:
        log_file = Path(folder) / "referee.jsonl"
        arena_logging.configure(path=log_file)
        before = os.environ.pop(HOST_ENV, None)
        if mode in ("pump", "thread"):
            os.environ[HOST_ENV] = mode
        try:
            tally, cpu, threads = (guest.run if mode == "guest" else trio.run)(main)
        finally:
            os.environ.pop(HOST_ENV, None)
            if before is not None:
                os.environ[HOST_ENV] = before
            arena_logging.configure(stream=_devnull())  # and the file is closed
        logged = _decision_lines(log_file)
    # Every decision the referee made (whole matches, and the decisions of matches cut short
    # at the end that reached the log) is one "decision" line: nothing was left unlogged.
    if logged < made[0] or logged < tally.decisions:
        raise RuntimeError(
            f"{logged} decision log lines for {max(made[0], tally.decisions)} decisions"
        )
    return Round.of(tally, cpu, threads)


def measure_floor(seconds: float) -> float:
    """CPU µs per decision of the referee's work alone: `run_match` with the rules engine,
    every message to every seat built and serialized by the real `RemoteSeatLink`, and the
    structlog decision lines written to a file, but no wire (no gRPC, no bridge, no client).
    No server can spend less per decision than this plus a raw gRPC round trip."""

    async def main() -> int:
        decisions, number = 0, 0
        deadline = time.process_time() + seconds
        while time.process_time() < deadline:
            match_id = f"floor:{number}"
            conn: Any = WireFreeConnection()  # duck-typed: what RemoteSeatLink uses of one
            links = [RemoteSeatLink(conn, match_id, s, "bench", False)
                     for s in (0, 1)]
            report = await run_match(match_id, Match(VARIANT, seed=number), list(links))
            decisions += len(report.decisions)
            number += 1
        return decisions

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as folder:
        arena_logging.configure(path=Path(folder) / "referee.jsonl")
        try:
            with quiet_gc():  # the collector as while serving
                started = time.process_time()
                decisions = trio.run(main)
                cpu = time.process_time() - started
        finally:
            arena_logging.configure(stream=_devnull())
    return cpu * 1e6 / decisions


_DEVNULL: list[Any] = []


def _devnull() -> Any:
    if not _DEVNULL:
        _DEVNULL.append(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115  (kept)
    return _DEVNULL[0]


def _decision_lines(path: Path) -> int:
    with path.open(encoding="utf-8") as lines:
        return sum('"event": "decision"' in line for line in lines)


# --------------------------------------------------------------------------- the table


def part(seconds: float) -> list[dict[str, object]]:
    """Decisions per second and server CPU per decision, referee (in each of `MODES`) and
    raw, at each stream count: best of ``BENCH_ROUNDS`` rounds that rotate the sides' order."""
    rounds = max(1, int(os.environ.get("BENCH_ROUNDS", "3")))
    modes = [m for m in os.environ.get("BENCH_MODES", ",".join(MODES)).split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        raise ValueError(f"BENCH_MODES: unknown mode(s) {sorted(unknown)}; known: {MODES}")
    rows: list[dict[str, object]] = []
    for streams in STREAMS:
        raw: list[Round] = []
        referee: dict[str, list[Round]] = {mode: [] for mode in modes}
        floors: list[float] = []
        for i in range(rounds):
            sides: list[tuple[Callable[[], Round], list[Round]]] = [
                (functools.partial(measure_raw, streams, seconds / rounds), raw),
                *((functools.partial(measure_referee, streams, seconds / rounds, mode),
                   referee[mode]) for mode in modes),
            ]
            shift = i % len(sides)
            for measure, results in sides[shift:] + sides[:shift]:
                results.append(measure())
            # in every round, beside the others: its split then sees the same load
            floors.append(measure_floor(seconds / rounds / 2))
        floor_us = min(floors)
        best_raw = max(r.tally.rate for r in raw)
        raw_us = min(r.cpu_us for r in raw)
        for mode, results in referee.items():
            ref = min(results, key=lambda r: r.cpu_us)  # its split goes with it
            ref_all = [r.tally for r in results]
            best_ref = max(r.tally.rate for r in results)
            overhead = ref.cpu_us - raw_us
            # The overhead, split: the floor (the referee's own work, no wire); the gRPC side
            # (every thread but trio's: the asyncio loop's reader and writer tasks, grpc's
            # own threads) beyond what the raw server spends in all; the bridge, the rest (on
            # trio's thread beyond the floor: receiving, routing, waking, hopping). With trio
            # a guest on the gRPC loop, both run on one thread: the bridge column holds both.
            grpc_us = ref.cpu_us - ref.main_us - raw_us if mode == "thread" else None
            p50 = min(r.tally.rt_p50_ms for r in results) - min(r.tally.rt_p50_ms for r in raw)
            p99 = min(r.tally.rt_p99_ms for r in results) - min(r.tally.rt_p99_ms for r in raw)
            rows.append(
                {
                    "streams": streams,
                    "mode": mode,
                    "ref dec B": _mean(t.decision_bytes for t in ref_all)
                    / _mean(t.decisions for t in ref_all),
                    "ref msg/dec": sum(t.messages for t in ref_all)
                    / max(1, sum(t.decisions for t in ref_all)),
                    "raw dec/s": best_raw,
                    "ref dec/s": best_ref,
                    "ref/raw": best_ref / best_raw,
                    "raw µs/dec": raw_us,
                    "ref µs/dec": ref.cpu_us,
                    "overhead µs": overhead,
                    "floor µs": floor_us,
                    "bridge µs": overhead - floor_us - (grpc_us or 0.0),
                    "gRPC µs": "-" if grpc_us is None else grpc_us,
                    "ceiling": raw_us / (raw_us + floor_us),
                    "add p50 ms": p50,
                    "add p99 ms": p99,
                    "raw sw/dec": statistics.median(r.switches for r in raw),
                    "ref sw/dec": statistics.median(r.switches for r in results),
                }
            )
    return rows


def _mean(values: Any) -> float:
    return max(1.0, statistics.fmean(values))


if __name__ == "__main__":
    from bench.__main__ import format_table

    print(format_table("referee_path", part(float(os.environ.get("BENCH_SECONDS", "3")))))
