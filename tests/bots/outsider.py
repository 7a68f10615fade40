"""An outsider with no token at a tournament's public addresses, as hostile review round 4
ran them (bench/stream_flood.py's rows; no SDK: raw grpcio calls with bytes, raw HTTP):

    outsider.py watch HOST:PORT SECONDS    250 connections x 4 Spectator/Watch("") streams,
                                           read as bytes
    outsider.py reflect HOST:PORT SECONDS  4 connections x 4 reflection streams asking for
                                           arena.v1.Referee's file in a loop
    outsider.py sse HOST:PORT SECONDS      300 idle /api/t/NAME/events streams and 300 of
                                           each live match's /api/live/ID/events (the web)

It prints one JSON line when SECONDS are up, or at SIGTERM: what it opened and got.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection_pb2

from arena.v1 import arena_pb2 as pb

got: dict[str, Any] = {"opened": 0, "answers": 0, "errors": {}}


def _error(code: str) -> None:
    got["errors"][code] = got["errors"].get(code, 0) + 1


async def _watch(channel: grpc.aio.Channel, stop: float) -> None:
    call = channel.unary_stream("/arena.v1.Spectator/Watch",
                                request_serializer=pb.WatchRequest.SerializeToString,
                                response_deserializer=lambda raw: raw)(pb.WatchRequest())
    got["opened"] += 1
    try:
        async for _ in call:
            got["answers"] += 1
            if time.monotonic() > stop:
                call.cancel()
                return
    except grpc.aio.AioRpcError as exc:
        _error(exc.code().name)


async def _reflect(channel: grpc.aio.Channel, stop: float) -> None:
    ask = reflection_pb2.ServerReflectionRequest(file_containing_symbol="arena.v1.Referee")
    while time.monotonic() < stop:
        call = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=lambda raw: raw)(iter([ask] * 10_000))
        got["opened"] += 1
        try:
            async for _ in call:
                got["answers"] += 1
                if time.monotonic() > stop:
                    call.cancel()
                    return
        except grpc.aio.AioRpcError as exc:
            _error(exc.code().name)
            await asyncio.sleep(0.2)


async def _hold(host: str, port: int, path: str, stop: float) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readline(), 10)
        status = head.split()[1].decode() if len(head.split()) > 1 else "?"
        if status != "200":
            _error(status)
            writer.close()
            return
        got["opened"] += 1
        while time.monotonic() < stop:
            data = await asyncio.wait_for(reader.read(65536), max(0.1, stop - time.monotonic()))
            if not data:
                break
            got["answers"] += 1
        writer.close()
    except (OSError, TimeoutError):
        _error("connection")


async def _live_ids(host: str, port: int) -> list[str]:
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        body = (await reader.read()).decode(errors="replace")
        writer.close()
    except OSError:
        return []
    return sorted(set(re.findall(r'href="/live/([^"]+)"', body)))


async def main(mode: str, address: str, seconds: float) -> None:
    stop = time.monotonic() + seconds
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, done.set)
    tasks: list[asyncio.Task[None]] = []
    channels: list[grpc.aio.Channel] = []
    if mode in ("watch", "reflect"):
        connections, per = (250, 4) if mode == "watch" else (4, 4)
        for i in range(connections):
            channel = grpc.aio.insecure_channel(address, options=[
                ("grpc.use_local_subchannel_pool", 1), ("outsider.channel", i)])
            channels.append(channel)
            for _ in range(per):
                run = _watch if mode == "watch" else _reflect
                tasks.append(asyncio.create_task(run(channel, stop)))
            await asyncio.sleep(0.06)  # under 20 new streams a second per connection
    else:
        host, port = address.rsplit(":", 1)
        tasks += [asyncio.create_task(_hold(host, int(port), "/api/t/sflood/events", stop))
                  for _ in range(300)]
        seen: set[str] = set()
        while time.monotonic() < stop and not done.is_set():
            for match_id in await _live_ids(host, int(port)):
                if match_id not in seen:
                    seen.add(match_id)
                    tasks += [asyncio.create_task(_hold(
                        host, int(port), f"/api/live/{match_id}/events", stop))
                        for _ in range(300)]
            await asyncio.sleep(0.5)
    waiting = asyncio.ensure_future(asyncio.gather(*tasks, return_exceptions=True))
    await asyncio.wait([waiting, asyncio.ensure_future(done.wait())],
                       return_when=asyncio.FIRST_COMPLETED)
    print(json.dumps(got), flush=True)
    for task in tasks:
        task.cancel()
    for channel in channels:
        await channel.close(None)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
