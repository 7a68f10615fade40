"""Raw gRPC ping-pong: a plain grpc.aio server against the same server behind the trio bridge.

On every stream the server sends a request of ``request`` bytes and waits for the client's
reply, again and again. The client is a separate process (grpc.aio, N concurrent streams)
that answers each request at once and counts round trips over a fixed time; the server side
is either pure grpc.aio on an asyncio loop (`measure_raw`) or `arena.rpc.bridge` with one
trio task per stream (`measure_bridge`). Both use the same route, client and sizes, so the
ratio is the cost of the bridge. `part` alternates the two in ``BENCH_ROUNDS`` rounds and keeps
the best of each.

The defaults are about a decision request with a view (600 bytes) and an answer (20 bytes);
a benchmark with real messages passes its own ``request``, ``reply`` and route (with the
proto's serializers): the server sends ``request`` through the route's serializer, the client
sends ``reply`` as raw bytes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import grpc
import trio

from arena.rpc.bridge import BridgedStream, StreamClosed, StreamRoute, serve_grpc

PINGPONG = StreamRoute("arena.bench.PingPong", "Play")
"""Raw bytes both ways."""

REQUEST_BYTES = 600
REPLY_BYTES = 20
STREAMS = (1, 8, 64)


@dataclass(frozen=True, slots=True)
class ClientResult:
    """What one client process measured."""

    streams: int
    seconds: float
    round_trips: int
    request_bytes: int
    """Size of a request as the client received it (a check that the sizes are right)."""

    @property
    def rate(self) -> float:
        """Round trips per second, all streams together."""
        return self.round_trips / self.seconds


# --------------------------------------------------------------------------- the client


async def client_load(
    address: str, streams: int, seconds: float, *, reply: bytes, method: str = PINGPONG.path
) -> ClientResult:
    """Open ``streams`` streams to ``method`` and answer every request with ``reply``.

    Every stream makes one round trip before the clock starts; then round trips are counted
    for ``seconds``; then each stream half-closes and drains until the server ends it.
    """
    loop = asyncio.get_running_loop()
    async with grpc.aio.insecure_channel(address) as channel:
        play = channel.stream_stream(method)
        calls = [play() for _ in range(streams)]
        sizes = await asyncio.gather(*(_round_trip(call, reply) for call in calls))
        end = loop.time() + seconds
        counts = await asyncio.gather(*(_play_until(call, reply, end) for call in calls))
        await asyncio.gather(*(_finish(call) for call in calls))
    return ClientResult(streams, seconds, sum(counts), sizes[0])


async def _round_trip(call: Any, reply: bytes) -> int:
    request = await call.read()
    if request is grpc.aio.EOF:
        raise RuntimeError(f"the server ended a stream before the first request: {call!r}")
    await call.write(reply)
    return len(request)


async def _play_until(call: Any, reply: bytes, end: float) -> int:
    loop = asyncio.get_running_loop()
    count = 0
    while loop.time() < end:
        request = await call.read()
        if request is grpc.aio.EOF:
            raise RuntimeError(f"the server ended a stream during the measurement: {call!r}")
        await call.write(reply)
        count += 1
    return count


async def _finish(call: Any) -> None:
    await call.done_writing()
    while await call.read() is not grpc.aio.EOF:
        pass
    code = await call.code()
    if code != grpc.StatusCode.OK:
        raise RuntimeError(f"the server ended a stream with {code}: {await call.details()}")


def _client_main(
    results: Connection, address: str, streams: int, seconds: float, reply: bytes, method: str
) -> None:
    try:
        result = asyncio.run(client_load(address, streams, seconds, reply=reply, method=method))
        results.send((True, result))
    except BaseException as exc:  # reported to the parent, which raises it
        results.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        results.close()


def run_client_process(
    address: str,
    streams: int,
    seconds: float,
    *,
    reply: bytes = b"r" * REPLY_BYTES,
    method: str = PINGPONG.path,
) -> ClientResult:
    """Run `client_load` in a fresh process and return what it measured (blocks).

    From trio call it through `trio.to_thread.run_sync`, from asyncio through
    `asyncio.to_thread`.
    """
    context = multiprocessing.get_context("spawn")  # grpc does not survive fork
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_client_main,
        args=(sender, address, streams, seconds, reply, method),
        name="bench-client",
    )
    process.start()
    sender.close()
    try:
        if not receiver.poll(seconds + 60):
            raise TimeoutError(f"the benchmark client against {address} did not report back")
        try:
            ok, outcome = receiver.recv()
        except EOFError:
            ok, outcome = False, "it exited without a result (see its traceback above)"
    finally:
        receiver.close()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
    if not ok:
        raise RuntimeError(f"the benchmark client failed: {outcome}")
    return outcome  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- the servers


def raw_handler(request: object) -> Callable[[Any, grpc.aio.ServicerContext], Any]:
    """A pure grpc.aio stream handler: send ``request``, wait for a reply, repeat."""

    async def play(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        while True:
            await context.write(request)
            if await context.read() is grpc.aio.EOF:
                return

    return play


async def bridge_player(stream: BridgedStream[Any, Any], request: object) -> None:
    """The trio side of one stream: send ``request``, wait for a reply, repeat."""
    try:
        while True:
            await stream.send(request)
            await stream.receive()
    except StreamClosed:
        pass
    await stream.aclose()


def measure_raw(
    streams: int,
    seconds: float,
    *,
    request: object = b"q" * REQUEST_BYTES,
    reply: bytes = b"r" * REPLY_BYTES,
    route: StreamRoute = PINGPONG,
) -> ClientResult:
    """Ping-pong against a pure grpc.aio server on this thread's own asyncio loop."""

    async def main() -> ClientResult:
        server = grpc.aio.server()
        handlers = {
            route.method: grpc.stream_stream_rpc_method_handler(
                raw_handler(request),
                request_deserializer=route.request_deserializer,
                response_serializer=route.response_serializer,
            )
        }
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(route.service, handlers),)
        )
        server.add_registered_method_handlers(route.service, handlers)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            return await asyncio.to_thread(
                run_client_process,
                f"127.0.0.1:{port}",
                streams,
                seconds,
                reply=reply,
                method=route.path,
            )
        finally:
            await server.stop(1)

    return asyncio.run(main())


def measure_bridge(
    streams: int,
    seconds: float,
    *,
    request: object = b"q" * REQUEST_BYTES,
    reply: bytes = b"r" * REPLY_BYTES,
    route: StreamRoute = PINGPONG,
) -> ClientResult:
    """Ping-pong against `serve_grpc`, one trio task per stream."""

    async def main() -> ClientResult:
        async with serve_grpc("127.0.0.1:0", [route]) as server, trio.open_nursery() as nursery:

            async def accept() -> None:
                async for stream in server.incoming:
                    nursery.start_soon(bridge_player, stream, request)

            nursery.start_soon(accept)
            result = await trio.to_thread.run_sync(
                lambda: run_client_process(
                    f"127.0.0.1:{server.port}", streams, seconds, reply=reply, method=route.path
                )
            )
            nursery.cancel_scope.cancel()
            return result

    return trio.run(main)


def part(seconds: float) -> list[dict[str, object]]:
    """Raw and bridged side by side at each stream count.

    ``seconds`` per stream count and side is split into ``BENCH_ROUNDS`` (default 3) rounds
    that alternate raw and bridged; each column reports its best round, since load from
    elsewhere on the machine only ever makes a round slower. Besides round trips per second,
    each side's server CPU time per round trip (µs/rt: this process's CPU time; the client
    runs in another process), which such load disturbs less.
    """
    rounds = max(1, int(os.environ.get("BENCH_ROUNDS", "3")))
    rows: list[dict[str, object]] = []
    for streams in STREAMS:
        raw: list[tuple[ClientResult, float]] = []
        bridged: list[tuple[ClientResult, float]] = []
        for _ in range(rounds):
            raw.append(_timed(measure_raw, streams, seconds / rounds))
            bridged.append(_timed(measure_bridge, streams, seconds / rounds))
        raw_rate = max(result.rate for result, _ in raw)
        bridged_rate = max(result.rate for result, _ in bridged)
        rows.append(
            {
                "streams": streams,
                "request B": REQUEST_BYTES,
                "reply B": REPLY_BYTES,
                "raw rt/s": raw_rate,
                "bridge rt/s": bridged_rate,
                "bridge/raw": bridged_rate / raw_rate,
                "raw µs/rt": min(cpu for _, cpu in raw),
                "bridge µs/rt": min(cpu for _, cpu in bridged),
            }
        )
    return rows


def _timed(
    measure: Callable[[int, float], ClientResult], streams: int, seconds: float
) -> tuple[ClientResult, float]:
    started = time.process_time()
    result = measure(streams, seconds)
    cpu = time.process_time() - started
    if result.request_bytes != REQUEST_BYTES:
        raise RuntimeError(f"the client saw {result.request_bytes}-byte requests")
    return result, cpu * 1e6 / max(result.round_trips, 1)
