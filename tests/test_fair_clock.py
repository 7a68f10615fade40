"""Fair clocks: a bot is charged only for its own time, measured on the wire, not for the
referee's lag. A real gRPC server on 127.0.0.1, two bots that speak raw arena.v1 from
threads (no SDK) and answer at once, and a referee whose trio thread is made to stall."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import grpc
import pytest
import trio

from arena.referee import Decision, FaultPolicy, TimeControl, run_match
from arena.rpc.bridge import HOST_ENV
from arena.rpc.server import Hub, serve_referee
from arena.rules import Match
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

HOSTS = ("thread", "pump")
"""Where the gRPC loop runs (`arena.rpc.bridge.HOST_ENV`): each test runs with both."""


def _instant_bot(port: int, token: str, stop: threading.Event, delay_s: float = 0.0) -> None:
    """Answer every decision with the first legal action (accepts batches): at once, or
    `delay_s` after reading it."""
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(bot_name=token, token=token, protocol_version=1,
                                            accepts_batches=True)))

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        try:
            for message in stub.Play(outgoing()):
                items = message.batch.messages if message.HasField("batch") else [message]
                for item in items:
                    if item.HasField("decision"):
                        if delay_s:
                            time.sleep(delay_s)
                        d = item.decision
                        outbox.put(pb.BotMessage(action=pb.ActionReply(
                            request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                            action_index=0)))
                if stop.is_set():
                    break
        except grpc.RpcError:
            pass
        finally:
            outbox.put(None)


def test_a_stalled_referee_does_not_charge_instant_bots_a_timeout() -> None:
    """decision_ms = 100, no grace, bots that answer at once, and a referee whose trio
    thread stalls for 250 ms every 50 ms for two seconds (a CPU-bound referee, compressed):
    requests leave late and answers are routed late, yet no decision is a timeout, because
    the clock runs from when the request was written to when the answer was read, on the
    gRPC thread. (Before fair clocks, the decisions in flight across a stall were struck.
    They still are with the gRPC loop pumped on trio's thread, ``ARENA_GRPC_HOST=pump``,
    which is why that is not the default: docs/ARCHITECTURE.md "Threads and tasks".)"""

    async def main() -> None:
        hub = Hub(hello_timeout=5)
        stop = threading.Event()
        async with serve_referee(hub) as server, trio.open_nursery() as nursery:
            links = []
            for seat, token in enumerate(("a", "b")):
                hub.admit(token, token)
                nursery.start_soon(trio.to_thread.run_sync, _instant_bot, server.port, token, stop)
                conn = await hub.connection_for(token)
                links.append(conn.link("m1", seat, token))

            async def stall() -> None:
                end = trio.current_time() + 2.0
                while trio.current_time() < end:
                    await trio.sleep(0.05)
                    time.sleep(0.25)  # the whole trio thread is busy elsewhere

            nursery.start_soon(stall)
            game = Match("argentine-1v1", {"target": 15, "chicos": 1}, seed=5)
            report = await run_match(
                "m1", game, links, time_control=TimeControl(decision_ms=100, grace_ms=0),
                policy=FaultPolicy(max_strikes=1000),
            )
            stop.set()
            await hub.close_all()
        faults = [d for d in report.decisions if d.fault]
        assert report.outcome.normal, report.outcome
        assert len(report.decisions) > 20
        assert faults == []

    trio.run(main)


@pytest.mark.parametrize("host", HOSTS)
def test_a_bot_is_charged_its_own_time(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of fair clocks, on either host of the gRPC loop: a bot that thinks
    40 ms before each answer is charged at least those 40 ms at every decision (and never
    struck, with decision_ms = 1000), and one that thinks 250 ms times out at each of its
    decisions with decision_ms = 100 and no grace, until the match ends by strikes. Any
    credit given for the referee's own lag (the gRPC thread's, or trio's when the loop is
    pumped) must not cover time in which the referee was merely idle, waiting for the bot (a
    pumped stamp tried as the earliest moment an answer could have arrived, ignoring trio's
    sleeping waits, charged the thinker ~0 ms)."""
    monkeypatch.setenv(HOST_ENV, host)

    async def main(delays: tuple[float, float], decision_ms: int) -> list[Decision]:
        hub = Hub(hello_timeout=5)
        stop = threading.Event()
        async with serve_referee(hub) as server, trio.open_nursery() as nursery:
            links = []
            for seat, delay in enumerate(delays):
                token = f"bot{seat}"
                hub.admit(token, token)
                nursery.start_soon(trio.to_thread.run_sync, _instant_bot, server.port, token,
                                   stop, delay)
                conn = await hub.connection_for(token)
                links.append(conn.link("m1", seat, token))
            game = Match("argentine-1v1", {"target": 15, "chicos": 1}, seed=5)
            report = await run_match(
                "m1", game, links,
                time_control=TimeControl(decision_ms=decision_ms, grace_ms=0),
                policy=FaultPolicy(max_strikes=3),
            )
            stop.set()
            await hub.close_all()
        if delays[1] > 0.1:
            assert not report.outcome.normal
            assert report.outcome.faulty_seat == 1
        return list(report.decisions)

    thinker = [d for d in trio.run(main, (0.04, 0.0), 1000) if d.seat == 0]
    assert len(thinker) >= 5
    assert all(d.fault is None and d.latency_ms >= 40 for d in thinker), [
        (d.fault, d.latency_ms) for d in thinker if d.fault or d.latency_ms < 40]
    slow = [d for d in trio.run(main, (0.0, 0.25), 100) if d.seat == 1]
    assert slow
    assert all(d.fault == "timeout" for d in slow), [d.fault for d in slow]
