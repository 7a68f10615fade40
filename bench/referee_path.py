"""The referee's full decision path against a raw grpc.aio ping-pong, side by side.

Both servers talk to the same bot client (a separate process, grpc.aio, N streams), which says
hello and answers every `DecisionRequest` at once with `action_index = 0`, echoing its ids.

- referee: the real thing — `serve_referee` (the trio bridge), the `Hub`, `run_match` with
  the rules engine, per-seat views converted to protobuf, every public event sent to every
  seat, and structlog JSON lines for every decision (to /dev/null). Each stream is one bot
  connection holding both seats of its own argentine-1v1 match; when a match ends the next
  starts, so every stream always has one decision outstanding.
- raw: a pure grpc.aio server that answers the hello and then sends one real decision request
  (taken from a referee game, so the same size) again and again, reading each answer.

The ratio referee/raw is what the referee costs per decision. The referee also sends the
public events (moves, tricks, hand summaries) that the raw server does not: they are part of
the decision path a real bot sees.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

import grpc
import trio

from arena import logging as arena_logging
from arena.errors import BotDisconnected
from arena.referee import DecisionRequest, run_match
from arena.rpc import convert
from arena.rpc.server import PLAY_ROUTE, Hub, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb

STREAMS = (1, 8, 64)
VARIANT = "argentine-1v1"


# --------------------------------------------------------------------------- the bot client


async def _bot_stream(channel: Any, token: str, end: list[float], counts: list[int]) -> None:
    call = channel.stream_stream(
        PLAY_ROUTE.path,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ServerMessage.FromString,
    )()
    await call.write(pb.BotMessage(hello=pb.Hello(bot_name="bench", token=token,
                                                  protocol_version=1)))
    loop = asyncio.get_running_loop()
    answered = 0
    while True:
        message = await call.read()
        if message is grpc.aio.EOF:
            break
        if message.WhichOneof("body") != "decision":
            continue
        d = message.decision
        await call.write(
            pb.BotMessage(
                action=pb.ActionReply(
                    request_id=d.request_id, match_id=d.match_id, seat=d.seat, action_index=0
                )
            )
        )
        now = loop.time()
        if end[0] and now >= end[0]:
            break
        if end[0]:
            answered += 1
    counts.append(answered)
    await call.done_writing()
    call.cancel()


async def _bot_load(address: str, streams: int, seconds: float) -> int:
    loop = asyncio.get_running_loop()
    end = [0.0]
    counts: list[int] = []
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = [
            asyncio.create_task(_bot_stream(channel, f"bench-{i}", end, counts))
            for i in range(streams)
        ]
        await asyncio.sleep(0.5)  # warm-up: connections up, first matches dealt
        end[0] = loop.time() + seconds
        await asyncio.gather(*tasks)
    return sum(counts)


def _client_main(pipe: Pipe, address: str, streams: int, seconds: float) -> None:
    try:
        pipe.send((True, asyncio.run(_bot_load(address, streams, seconds))))
    except BaseException as exc:
        pipe.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        pipe.close()


def run_bots(address: str, streams: int, seconds: float) -> float:
    """Run the bot client in a fresh process; decisions answered per second."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_client_main, args=(sender, address, streams, seconds))
    process.start()
    sender.close()
    try:
        if not receiver.poll(seconds + 60):
            raise TimeoutError("the bench bot client did not report back")
        ok, outcome = receiver.recv()
    finally:
        receiver.close()
        process.join(10)
        if process.is_alive():
            process.kill()
    if not ok:
        raise RuntimeError(f"the bench bot client failed: {outcome}")
    return float(outcome) / seconds


# --------------------------------------------------------------------------- the servers


def sample_decision() -> Any:
    """A real decision request from the middle of a referee game (for the raw server)."""
    game = Match(VARIANT, seed=7)
    for _ in range(3):
        game.apply(game.legal_actions()[0])
    seat = game.to_act
    assert seat is not None
    view = game.view(seat)
    request = DecisionRequest("5f1e0c2a9d8b7a6f5e4d3c2b", f"bench:{VARIANT}:a-b:0", seat, view,
                              view.legal_actions, int(time.time() * 1000) + 1000, 1000)
    return pb.ServerMessage(
        decision=pb.DecisionRequest(
            request_id=request.request_id, match_id=request.match_id, seat=request.seat,
            view=convert.view_to_proto(view),
            legal_actions=[convert.action_to_proto(a) for a in view.legal_actions],
            deadline_unix_ms=request.deadline_unix_ms, time_left_ms=request.time_left_ms,
        )
    )


def measure_raw(streams: int, seconds: float) -> float:
    decision = sample_decision()

    async def play(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        if await context.read() is grpc.aio.EOF:
            return
        await context.write(pb.ServerMessage(welcome=pb.Welcome(protocol_version=1)))
        while True:
            await context.write(decision)
            if await context.read() is grpc.aio.EOF:
                return

    async def main() -> float:
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
            return await asyncio.to_thread(run_bots, f"127.0.0.1:{port}", streams, seconds)
        finally:
            await server.stop(0.5)

    return asyncio.run(main())


def measure_referee(streams: int, seconds: float) -> float:
    arena_logging.configure(path=Path("/dev/null"))

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
            if report.outcome.faulty_seat is not None:
                return
            number += 1

    async def main() -> float:
        hub = Hub()
        async with serve_referee(hub) as server, trio.open_nursery() as nursery:
            for i in range(streams):
                hub.admit(f"bench-{i}", "bench")
                nursery.start_soon(keep_playing, hub, f"bench-{i}", i)
            rate = await trio.to_thread.run_sync(
                run_bots, f"127.0.0.1:{server.port}", streams, seconds
            )
            nursery.cancel_scope.cancel()
            return rate

    return trio.run(main)


def part(seconds: float) -> list[dict[str, object]]:
    """Decisions per second through the referee and raw round trips, at each stream count."""
    size = sample_decision().ByteSize()
    rows: list[dict[str, object]] = []
    for streams in STREAMS:
        raw = measure_raw(streams, seconds)
        referee = measure_referee(streams, seconds)
        rows.append(
            {
                "streams": streams,
                "request B": size,
                "raw decisions/s": raw,
                "referee decisions/s": referee,
                "referee/raw": referee / raw,
            }
        )
    return rows


if __name__ == "__main__":
    import os

    from bench.__main__ import format_table

    print(format_table("referee_path", part(float(os.environ.get("BENCH_SECONDS", "3")))))
