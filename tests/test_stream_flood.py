"""HTTP/2 stream floods (hostile review round 3, "stream_flood"), from the outside.

The flooder is tests/bots/h2_flood.py: raw HTTP/2 frames through `h2`, no grpcio and no SDK.
It opens silent `Referee/Play` streams as fast as it can over a few connections, needs no
token, and reaches whatever listens on the referee's public address.

What it did before: every stream became a handler, a trio task and a hello wait, and the
flood's calls queued in grpc-core's per-server queue of calls not yet taken by a handler,
which the launched bots' unix socket shared with the public address; the launched bots'
calls waited behind the flood's there and were cancelled (their SDK: "the referee ended the
stream: CANCELLED"), and they forfeited. Now a connection holds at most a few streams, opens
at most `STREAMS_PER_SECOND`, and the launched bots have a gRPC server of their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from structlog.testing import capture_logs

from arena.rpc.bridge import HOST_STREAM_FACTOR
from arena.rpc.server import (
    LAUNCHED_STREAMS_PER_CONNECTION,
    STREAMS_PER_CONNECTION,
    STREAMS_PER_SECOND,
    Hub,
    serve_referee,
)
from tests.test_e2e_support import (
    ARENA,
    SAMPLE_BOTS,
    TEST_BOTS,
    explain,
    python_bot,
    stored_matches,
    write_config,
)
from tests.test_rpc_server import Client, _admitted, _bot_command

FLOODER = TEST_BOTS / "h2_flood.py"


def _flooder(address: str, *, seconds: float, keep: int, connections: int = 2,
             rude: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(FLOODER), address, "--connections", str(connections),
         "--keep", str(keep), "--seconds", str(seconds), *(["--rude"] if rude else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _flood_report(flooder: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = flooder.communicate(timeout=60)
    assert flooder.returncode == 0, err
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return report


class _CountingHub(Hub):
    """A Hub that counts the streams handed to it, by door."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen = {"network": 0, "launched": 0}

    async def _serve_stream(self, stream: Any, *door: str) -> None:
        self.seen[door[0] if door else self._door(stream)] += 1
        await super()._serve_stream(stream, *door)


def _watch_flood(tmp_path: Path, *, keep: int, rude: bool, door: str = "network",
                 connections: int = 2) -> tuple[dict[str, Any], int, dict[str, int], str]:
    """A served referee (network address + launched bots' unix socket) under a 4 s flood
    through `door` (its network address, or the launched bots' socket, as a launched bot
    could); meanwhile a launched client (raw grpcio, no SDK) says hello through the socket.
    Returns the flooder's report, the most silent streams the hub held at once at `door`,
    the streams the hub was handed by door, and what the launched client got first."""
    socket_path = tmp_path / "referee.sock"

    async def main() -> tuple[dict[str, Any], int, dict[str, int], str]:
        hub = _CountingHub(hello_timeout=5.0)
        hub.admit("launched", "bot")
        async with serve_referee(hub, local_addresses=(f"unix:{socket_path}",)) as server:
            target = f"127.0.0.1:{server.port}" if door == "network" else f"unix:{socket_path}"
            flooder = _flooder(target, seconds=4, keep=keep, rude=rude,
                               connections=connections)
            most = 0
            first = "nothing"
            hello_at = trio.current_time() + 1.5  # well into the flood
            with trio.move_on_after(8):
                while flooder.poll() is None:
                    most = max(most, hub.silent(door))
                    await trio.sleep(0.01)
                    if first == "nothing" and trio.current_time() > hello_at:
                        client = Client(0, f"unix:{socket_path}")
                        client.hello("launched")
                        try:
                            with trio.fail_after(3):
                                first = (await client.receive()).WhichOneof("body")
                        except grpc.RpcError as exc:
                            first = exc.code().name
                        except trio.TooSlowError:
                            first = "no answer in 3 s"
                        client.close()
            report = await trio.to_thread.run_sync(_flood_report, flooder)
            return report, most, dict(hub.seen), first

    return trio.run(main)


def test_a_connection_holds_a_few_streams_and_the_launched_door_stays_open(
    tmp_path: Path,
) -> None:
    """A flooder that ignores HTTP/2's limits opens thousands of silent streams over two
    connections at the network address, keeping up to 200 each. The server announces
    SETTINGS_MAX_CONCURRENT_STREAMS = 4, refuses the streams past it (REFUSED_STREAM), and the
    referee never holds more than 4 silent streams per connection the flooder made; a launched
    client saying hello on the unix socket meanwhile is welcomed. (Before: no limit; the hub
    held silent streams by the hundred, up to its door's cap of 256.)"""
    report, most, seen, first = _watch_flood(tmp_path, keep=200, rude=True)
    assert report["opened"] > 200, report
    assert report["max_streams"] == STREAMS_PER_CONNECTION, report
    assert report.get("refused", 0) > 0, report
    assert 0 < most <= STREAMS_PER_CONNECTION * report["connections"], (most, report)
    assert first == "welcome", first
    assert seen["launched"] == 1, seen


def test_a_launched_bots_connection_holds_two_streams(tmp_path: Path) -> None:
    """The same flood from a launched bot, on the launched bots' unix socket (two connections,
    under `[limits] sockets`): the launched bots' server announces 2 streams per connection,
    refuses the rest, the hub holds at most 2 silent streams per connection, and a sibling
    seat saying hello meanwhile is welcomed. (Before: hundreds held per connection; the
    hostile review's launched flooder struck honest bots of other matches.)"""
    report, most, seen, first = _watch_flood(tmp_path, keep=200, rude=True, door="launched")
    assert report["opened"] > 200, report
    assert report["max_streams"] == LAUNCHED_STREAMS_PER_CONNECTION, report
    assert report.get("refused", 0) > 0, report
    assert 0 < most <= LAUNCHED_STREAMS_PER_CONNECTION * report["connections"], (most, report)
    assert first == "welcome", first
    assert seen["network"] == 0, seen


def test_a_rapid_reset_flood_reaches_the_referee_at_a_bounded_rate(tmp_path: Path) -> None:
    """A "rapid reset" flood (open a stream, reset it, again, as fast as it can) over two
    connections: the referee's trio side is handed at most STREAMS_PER_SECOND per connection
    and second (plus the burst), whatever the flooder opens; the rest are refused on the gRPC
    thread (RESOURCE_EXHAUSTED), and the log says so (`streams_refused`, at most once a
    second). A launched client is still welcomed at once. (Before: every stream became a
    trio task, thousands of them.)"""
    with capture_logs() as logs:
        report, _most, seen, first = _watch_flood(tmp_path, keep=1, rude=False)
    assert report["opened"] > 500, report
    bound = report["connections"] * (2 * STREAMS_PER_SECOND + 6 * STREAMS_PER_SECOND)
    assert seen["network"] <= bound, (seen, report)
    assert first == "welcome", first
    refused = [e for e in logs if e["event"] == "streams_refused"]
    assert refused, [e["event"] for e in logs]
    assert all(e["peer"].startswith("ipv4:127.0.0.1:") for e in refused), refused
    assert len(refused) <= 6, refused  # once a second at most, over a 4 s flood


def test_many_connections_of_one_host_share_one_stream_budget(tmp_path: Path) -> None:
    """The same rapid-reset flood over 12 connections, each under its own 20 streams a
    second (a hostile review, round 4, kept 300 connections so): the referee is handed at
    most HOST_STREAM_FACTOR connections' worth from the host, 100 a second and 200 at once,
    not 12 connections' worth (~1,400 over the flood before); a launched client is still
    welcomed."""
    report, _most, seen, first = _watch_flood(tmp_path, keep=1, rude=False, connections=12)
    assert report["opened"] > 1000, report
    host_rate = HOST_STREAM_FACTOR * STREAMS_PER_SECOND
    assert seen["network"] <= 2 * host_rate + 6 * host_rate, (seen, report)
    assert first == "welcome", first


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


@pytest.mark.e2e
@pytest.mark.parametrize("keep", [200, 1], ids=["held", "rapid_reset"])
def test_an_outside_flood_leaves_launched_bots_matches_alone(tmp_path: Path, keep: int) -> None:
    """A tournament of launched honest bots (the sample random bot, through the SDK) listens
    on a TCP address; an outsider with no token floods it with silent streams over 4
    connections (`held`: up to 200 kept per connection, as the hostile review did; or
    `rapid_reset`) for the first 10 s, while the matches start. Every match ends normally with no
    strike. (Before: 2 to 3 of 4 matches were forfeits, "honestA exited with code 1 before
    connecting ... the referee ended the stream: CANCELLED".)"""
    port = _free_port()
    bots = {"randA": python_bot(SAMPLE_BOTS / "random_bot.py"),
            "randB": python_bot(SAMPLE_BOTS / "random_bot.py")}
    config = write_config(tmp_path, name="flooded", bots=bots, variants=["argentine-1v1"],
                          games=6, concurrency=2, decision_ms=1000)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[tournament]\n",
                                   f'[tournament]\nlisten = "127.0.0.1:{port}"\n'),
                      encoding="utf-8")
    run = subprocess.Popen([str(ARENA), "tournament", str(config), "--no-progress"],
                           cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    deadline = time.monotonic() + 30
    while not _listening(port):
        assert run.poll() is None, run.communicate()[0]
        assert time.monotonic() < deadline, "the tournament did not listen within 30 s"
        time.sleep(0.02)
    flooder = _flooder(f"127.0.0.1:{port}", seconds=10, keep=keep, connections=4)
    try:
        out, _ = run.communicate(timeout=120)
    finally:
        report = _flood_report(flooder)
    assert report["opened"] > 500 if keep == 1 else report["opened"] > 0, report
    assert run.returncode == 0, explain(subprocess.CompletedProcess(run.args, 1, out, ""))
    rows = stored_matches(tmp_path / "arena.db")
    assert len(rows) == 6, rows
    for row in rows:
        assert row["termination"] == "normal", row
        assert row["faulty_bot"] is None, row
        assert json.loads(row["strikes"]) == [0, 0], row



def _dropping_server(address: str, until: threading.Event,
                     dropped: threading.Event) -> threading.Thread:
    """A gRPC server on `address` that ends every `Referee/Play` call at once, before any
    message, with CANCELLED (what grpc-core did to launched bots' calls that arrived behind a
    flood), until `until` is set; `dropped` is set at the first call it drops. Started, and
    serving, when this returns."""
    ready = threading.Event()

    async def serve() -> None:
        server = grpc.aio.server()

        async def drop(requests: Any, context: grpc.aio.ServicerContext) -> None:
            dropped.set()
            await context.abort(grpc.StatusCode.CANCELLED, "")

        handler = grpc.stream_stream_rpc_method_handler(drop)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("arena.v1.Referee", {"Play": handler}),))
        server.add_insecure_port(address)
        await server.start()
        ready.set()
        while not until.is_set():
            await asyncio.sleep(0.01)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(serve(),))
    thread.start()
    assert ready.wait(10), "the dropping server did not start"
    return thread


@pytest.mark.parametrize("kind", ["sdk", "stdio", "js"])
def test_a_launched_bot_whose_call_is_dropped_before_any_message_tries_again(
    kind: str, tmp_path: Path, js_random: list[str],
) -> None:
    """A launched bot whose first calls end CANCELLED before the referee said anything (for
    a while a server on the referee's socket drops every call so, as grpc-core did
    under a stream flood) says hello again after a short wait and gets in when the real
    referee serves there; each client we ship, as a real process. (Before: it exited 1 at
    the first CANCELLED, "the referee ended the stream: CANCELLED", and forfeited.)"""
    socket_path = tmp_path / "referee.sock"
    address = f"unix:{socket_path}"
    env = {**os.environ, "ARENA_SERVER": address, "ARENA_TOKEN": "tok",
           "ARENA_BOT_NAME": f"dropped-{kind}", "ARENA_LAUNCHED": "1"}
    env.pop("ARENA_TOKEN_FD", None)
    stop, dropped = threading.Event(), threading.Event()
    dropper = _dropping_server(address, stop, dropped)

    async def main() -> tuple[str, int, str]:
        bot = subprocess.Popen(_bot_command(kind, tmp_path, js_random), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        await trio.to_thread.run_sync(dropped.wait, 20)  # its first try is dropped
        await trio.sleep(0.1)
        stop.set()
        await trio.to_thread.run_sync(dropper.join)
        hub = Hub(hello_timeout=5.0)
        hub.admit("tok", "bot")
        async with serve_referee(hub, local_addresses=(address,)):
            return await _admitted(hub, bot, f"dropped-{kind}")

    name, code, err = trio.run(main)
    assert dropped.is_set()
    assert "trying again in" in err, err
    assert name == f"dropped-{kind}", err
    assert code == 0, err
