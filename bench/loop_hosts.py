"""Where the gRPC loop could run, on a raw ping-pong (not part of `make bench`).

    pip install trio-asyncio   # not a dependency of the project
    python -m bench.loop_hosts [STREAMS ...]

Each mode runs in a process of its own (trio-asyncio replaces asyncio's event loop policy
when imported) against the same client process (`bench.raw_pingpong`): ``raw``, a plain
grpc.aio server on asyncio; ``bridge``, the same through `arena.rpc.bridge` with one trio
task per stream (the bridge's default host); ``ta-raw``, the plain handler on a trio-asyncio
loop inside `trio.run`; ``ta-trio``, a trio task per stream reading and writing through
trio-asyncio's adapters. Printed: round trips per second and the server process's CPU per
round trip (docs/ARCHITECTURE.md, "Threads and tasks", quotes a run).
"""

from __future__ import annotations

import resource
import subprocess
import sys
from typing import Any

REQUEST = b"q" * 600
MODES = ("raw", "bridge", "ta-raw", "ta-trio")


def _server(handler: Any) -> tuple[Any, int]:
    import grpc

    from bench.raw_pingpong import PINGPONG

    server = grpc.aio.server()
    handlers = {PINGPONG.method: grpc.stream_stream_rpc_method_handler(
        handler, request_deserializer=PINGPONG.request_deserializer,
        response_serializer=PINGPONG.response_serializer)}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(PINGPONG.service, handlers),))
    return server, server.add_insecure_port("127.0.0.1:0")


def _on_trio_asyncio(streams: int, seconds: float, handler: Any) -> Any:
    import trio
    import trio_asyncio

    from bench.raw_pingpong import run_client_process

    async def main() -> Any:
        async with trio_asyncio.open_loop():
            async def start() -> tuple[Any, int]:
                server, port = _server(handler)
                await server.start()
                return server, port

            server, port = await trio_asyncio.aio_as_trio(start)()
            try:
                return await trio.to_thread.run_sync(
                    lambda: run_client_process(f"127.0.0.1:{port}", streams, seconds))
            finally:
                await trio_asyncio.aio_as_trio(server.stop)(1)

    return trio.run(main)


async def _trio_player(context: Any) -> None:
    import grpc
    import trio_asyncio

    write = trio_asyncio.aio_as_trio(context.write)
    read = trio_asyncio.aio_as_trio(context.read)
    while True:
        await write(REQUEST)
        if await read() is grpc.aio.EOF:
            return


async def _trio_handler(request_iterator: Any, context: Any) -> None:
    import trio_asyncio

    await trio_asyncio.trio_as_aio(_trio_player)(context)


def measure(mode: str, streams: int, seconds: float) -> tuple[float, float]:
    """(round trips per second, server CPU µs per round trip) of `mode`, in this process."""
    from bench.raw_pingpong import measure_bridge, measure_raw, raw_handler

    usage = resource.getrusage(resource.RUSAGE_SELF)
    before = usage.ru_utime + usage.ru_stime
    if mode == "raw":
        result = measure_raw(streams, seconds)
    elif mode == "bridge":
        result = measure_bridge(streams, seconds)
    elif mode == "ta-raw":
        result = _on_trio_asyncio(streams, seconds, raw_handler(REQUEST))
    else:
        result = _on_trio_asyncio(streams, seconds, _trio_handler)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - before
    return result.rate, 1e6 * cpu / result.round_trips


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] in MODES:  # one measurement, in its own process
        rate, cpu = measure(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
        print(f"{rate:.0f} {cpu:.1f}")
        return
    streams = [int(n) for n in sys.argv[1:]] or [1, 16]
    print(f"{'streams':>7}  {'mode':8}  {'rt/s':>7}  {'cpu µs/rt':>9}")
    for count in streams:
        for _round in range(2):
            for mode in MODES:
                out = subprocess.run(
                    [sys.executable, "-m", "bench.loop_hosts", mode, str(count), "3"],
                    capture_output=True, text=True, check=True).stdout.split()
                print(f"{count:>7}  {mode:8}  {float(out[0]):>7,.0f}  {float(out[1]):>9.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
