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
"""Where the gRPC loop runs (`arena.rpc.bridge.HOST_ENV`): the tests marked with it run with
both."""


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


@pytest.mark.parametrize("host", HOSTS)
def test_a_stalled_referee_does_not_charge_instant_bots_a_timeout(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """decision_ms = 100, no grace, bots that answer at once, and a referee whose trio
    thread stalls for 250 ms every 50 ms for two seconds (a CPU-bound referee, compressed):
    requests leave late and answers are routed late, yet no decision is a timeout, because
    the clock runs from when the request was written to when the answer was read, on the
    gRPC thread, or, with the gRPC loop pumped on trio's thread (``ARENA_GRPC_HOST=pump``),
    at the earliest moment the pump could have seen it, and the referee reads the wire
    before it calls a timeout. (Before fair clocks, the decisions in flight across a stall
    were struck; pumped, they were until the pump stamped and looked so.)"""
    monkeypatch.setenv(HOST_ENV, host)

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


def _stretching_bot(port: int, token: str, early_s: float, away_s: float,
                    seen: list[pb.DecisionRequest], stop: threading.Event) -> None:
    """A remote bot out for more time: at its first decision it waits until `early_s` before
    the deadline, drops its stream, "thinks" `away_s` more, connects again with its token
    and from then on answers at once (the first legal action). `seen` gets every decision."""
    dropped = False
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
        while not stop.is_set():
            outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
            outbox.put(pb.BotMessage(hello=pb.Hello(bot_name=token, token=token,
                                                    protocol_version=1)))
            call = stub.Play(iter(outbox.get, None))
            try:
                for message in call:
                    if not message.HasField("decision"):
                        continue
                    d = message.decision
                    seen.append(d)
                    if not dropped:
                        dropped = True
                        time.sleep(max(0.0, d.time_left_ms / 1000 - early_s))
                        call.cancel()
                        break
                    outbox.put(pb.BotMessage(action=pb.ActionReply(
                        request_id=d.request_id, match_id=d.match_id, seat=d.seat,
                        action_index=0)))
            except grpc.RpcError:
                pass
            finally:
                outbox.put(None)
            if dropped and len(seen) == 1:
                time.sleep(away_s)
            elif stop.wait(0.05):
                return


@pytest.mark.parametrize(("early_s", "away_s"), [(0.15, 1.5), (0.8, 0.3)])
def test_dropping_the_stream_before_a_deadline_buys_no_time(early_s: float,
                                                            away_s: float) -> None:
    """From the outside (a raw grpcio client, no SDK): a remote bot that drops its stream
    before its decision's deadline (decision_ms = 1000) and connects again with its token
    within reconnect_ms gains no time. Dropped 150 ms before the deadline and back 1.5 s
    later, that decision is a timeout, charged all its time (a hostile bot so thought 7 s on
    a 1 s clock with no strike, the decision re-sent with a fresh 1000 ms); dropped after
    200 ms and back 300 ms later, the same decision comes again with only what is left of
    its second (about 500 ms), never a fresh one. The match ends normally either way."""

    async def main() -> None:
        hub = Hub(hello_timeout=5)
        stop = threading.Event()
        seen: list[pb.DecisionRequest] = []
        async with serve_referee(hub) as server, trio.open_nursery() as nursery:
            hub.admit("calm", "calm")
            hub.admit("stretch", "stretch")
            nursery.start_soon(trio.to_thread.run_sync, _instant_bot, server.port, "calm", stop)
            nursery.start_soon(trio.to_thread.run_sync, _stretching_bot, server.port,
                               "stretch", early_s, away_s, seen, stop)
            links = [(await hub.connection_for("calm")).link("m1", 0, "calm"),
                     (await hub.connection_for("stretch")).link("m1", 1, "stretch")]
            game = Match("argentine-1v1", {"target": 15, "chicos": 1}, seed=5)
            report = await run_match(
                "m1", game, links, time_control=TimeControl(decision_ms=1000, grace_ms=0),
                policy=FaultPolicy(max_strikes=3, reconnect_ms=5000),
            )
            stop.set()
            await hub.close_all()
        assert report.outcome.normal, report.outcome
        first = next(d for d in report.decisions if d.seat == 1)
        if away_s > early_s:  # back after the deadline
            assert first.fault == "timeout", first
            assert first.latency_ms >= 1000 + 500, first
            assert report.outcome.strikes == (0, 1)
            assert seen[1].view.SerializeToString() != seen[0].view.SerializeToString()
        else:
            assert first.fault is None, first
            assert seen[1].view.SerializeToString() == seen[0].view.SerializeToString()
            assert seen[1].time_left_ms <= 1000 - 500 + 50  # what was left, not a fresh 1000
            assert seen[1].deadline_unix_ms <= seen[0].deadline_unix_ms + 50
        assert all(d.time_left_ms == 1000 for d in seen[2:])

    trio.run(main)
